"""The table `t` every parity snippet reads: deterministic rows, with no dependency beyond the
standard library, so the golden generator (pyspark) and the tests (pyarrow) build the same table.
"""
from __future__ import annotations

import datetime as dt
import json

# (name, Spark type, pyarrow type name)
SCHEMA: list[tuple[str, str, str]] = [
    ("id", "bigint", "int64"),
    ("user_id", "bigint", "int64"),
    ("name", "string", "string"),
    ("category", "string", "string"),
    ("amount", "double", "float64"),
    ("ts", "bigint", "int64"),
    ("event_time", "string", "string"),
    ("tags", "string", "string"),
    ("url", "string", "string"),
    ("payload", "string", "string"),
]

_FIRST = ["alice", "bob", "carol", "dave", "erin", "frank", "grace"]
_LAST = ["smith", "jones", "lee", "brown"]
_AMOUNTS = [38.9, 38.5, -2.5, 0.4, 99.6, 12.25, 50.0, 7.75, 95.5, 3.1, 60.9, 1.5]


def rows() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(40):
        ts = 1_700_000_000 + i * 37_777  # about 10 hours apart: several days, every hour shape
        out.append({
            "id": i,
            "user_id": 100 + i % 9,
            "name": None if i % 13 == 5 else f"{_FIRST[i % 7]},{_LAST[i % 4]}",
            "category": f"c{i % 5}",
            "amount": None if i == 17 else _AMOUNTS[i % len(_AMOUNTS)],
            "ts": ts,
            "event_time": dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
            "tags": ",".join(f"t{(i * k) % 7}" for k in range(1, 2 + i % 3)),
            "url": f"http://x.test/p?id={i * 7}&q=1" if i % 6 else "http://x.test/none",
            "payload": "not json" if i % 11 == 3 else json.dumps({"k": i % 4, "v": f"v{i % 3}"}),
        })
    return out
