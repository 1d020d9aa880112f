"""A second server's share of the scheduler's store work, as its own process (test_jobs_two_processes.py).

    python -m tests.jobs.claimer URL NOW BARRIER_DIR N

Connected, it writes BARRIER_DIR/ready-N and waits for BARRIER_DIR/go (both processes start
together however slowly each one started).

Claims every occurrence due by NOW (each job's next is 50 ms after the last), then starts and
finishes queued runs until none is left; prints what it claimed and started as JSON. After its
first claims it waits (at most 10 s) for BARRIER_DIR/claimed-<other>, written by the other
process after its own first claims.
"""
from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from console.store import Store
from console.store.jobs import JobRecord

STEP = timedelta(milliseconds=50)


def step(job: JobRecord, due: datetime, now: datetime) -> datetime:
    return due + STEP


def main() -> None:
    url, now, barrier, n = sys.argv[1], datetime.fromisoformat(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    store = Store(url, run_migrations=False)
    store.next_due()  # connected
    holder = f"p{n}"
    (barrier / f"ready-{n}").touch()
    while not (barrier / "go").exists():  # both processes begin together, for the most contention
        time.sleep(0.001)
    claimed = []
    other = barrier / f"claimed-{'2' if n == '1' else '1'}"
    while True:
        made = store.claim_due(now, step)
        if not made and store.next_due() is not None and store.next_due() > now:  # type: ignore[operator]
            break
        if made and not claimed:
            # SQLite starves a waiting writer while the other commits back to back (its busy handler
            # sleeps up to 100 ms between tries): after its first claims each process waits until the
            # other has claimed too, so both take part in the rest of the race however loaded the machine.
            (barrier / f"claimed-{n}").touch()
            deadline = time.monotonic() + 10.0
            while not other.exists() and time.monotonic() < deadline:
                time.sleep(0.001)
        claimed += [r.id for r in made]
    started = []
    idle = 0
    while idle < 20:
        queued = store.queued_job_runs()
        idle = idle + 1 if not queued else 0
        for q in queued:
            run = store.start_job_run(q.id, holder, timedelta(seconds=30))
            if run is not None:
                started.append(run.id)
                store.finish_job_run(run.id, "done")
        if not queued:
            time.sleep(0.01)
    store.close()
    print(json.dumps({"claimed": claimed, "started": started, "at": datetime.now(timezone.utc).isoformat()}))


if __name__ == "__main__":
    main()
