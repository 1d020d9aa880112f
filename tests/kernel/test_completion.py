"""Completion and hover from the session's live catalog (console/kernel/completion.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from console.kernel import queries
from console.kernel.session import Session


def labels(session: Session, source: str, cursor: int | None = None, kind: str = "mlsql") -> list[str]:
    answer = queries.answer(session, "complete", {"source": source, "cursor": len(source) if cursor is None
                                                  else cursor, "kind": kind})
    return [item["label"] for item in answer["items"]]


@pytest.fixture
def loaded(session: Session) -> Session:
    assert session.run_cell("select 1 as user_id, 'a' as city as people;\n"
                            "select 2 as order_id, 3.5 as amount as orders;").ok
    assert session.run_cell('set region = "eu";').ok
    return session


def test_statements_and_commands_at_the_start(session: Session) -> None:
    found = labels(session, "lo")
    assert found == ["load"]
    assert "!show" in labels(session, "!sh")
    assert {"select", "load", "save", "set"} <= set(labels(session, ""))


def test_formats_after_load_and_save(loaded: Session) -> None:
    assert labels(loaded, "load c")[0] == "csv"
    assert {"parquet", "delta", "json"} <= set(labels(loaded, "load "))
    assert "parquet" in labels(loaded, "save overwrite people as ")


def test_options_of_the_format(loaded: Session) -> None:
    found = labels(loaded, 'load csv.`/lake/x.csv` where header="true" and ')
    assert "inferSchema" in found and "compression" not in found
    assert labels(loaded, "load delta.`/lake/d` where ver") == ["versionAsOf"]


def test_columns_of_a_table_from_an_earlier_cell(loaded: Session) -> None:
    source = "select  from people as t;"
    answer = queries.answer(loaded, "complete", {"source": source, "cursor": 7, "kind": "mlsql"})
    items = answer["items"]
    names = [i["label"] for i in items]
    assert names.index("user_id") < names.index("order_id")  # the table the select reads comes first
    assert next(i for i in items if i["label"] == "city")["detail"] == "people: string"
    assert labels(loaded, "select people.") == ["user_id", "city"]
    assert labels(loaded, "select a from ") == ["orders", "people"]
    assert labels(loaded, "select am") == ["amount"]


def test_functions_and_variables(loaded: Session) -> None:
    found = labels(loaded, "select su")
    assert found.count("sum") == 1 and "substr" in found  # Spark's and DuckDB's names, once each
    assert "collect_list" in labels(loaded, "select collect")
    assert "regexp_extract" in labels(loaded, "select regexp_e")
    assert labels(loaded, "select ${reg") == ["${region}"]
    answer = queries.answer(loaded, "complete", {"source": "select ${", "cursor": 9, "kind": "mlsql"})
    assert answer["from"] == 7 and "${region}" in [i["label"] for i in answer["items"]]


def test_words_inside_quotes_do_not_count(loaded: Session) -> None:
    # the `;` and `from` in the string are text: the statement is still a select reading orders
    assert "amount" in labels(loaded, "select ';from people' as s, am from orders as t; select a", 30)


def test_python_without_a_worker_uses_the_cell_text(session: Session) -> None:
    found = labels(session, "import json\nvalue_one = 1\nvalue_", kind="python")
    assert found == ["value_one"]
    assert "dumps" in labels(session, "import json\njson.du", kind="python")


def test_bad_arguments_are_explained(session: Session) -> None:
    with pytest.raises(ValueError, match="cursor"):
        queries.answer(session, "complete", {"source": "abc", "cursor": 9})
    with pytest.raises(ValueError, match="kind"):
        queries.answer(session, "complete", {"source": "abc", "kind": "scala"})


def test_inspect_gives_the_schema(loaded: Session) -> None:
    answer: dict[str, Any] = queries.answer(loaded, "inspect", {"name": "People"})
    assert answer == {"name": "People", "rows": 1,
                      "columns": [{"name": "user_id", "type": "int"}, {"name": "city", "type": "string"}]}
    with pytest.raises(LookupError, match="tables: orders, people"):
        queries.answer(loaded, "inspect", {"name": "nope"})


# ---------------------------------------------------------------- over a live worker
SLOW_GLOBAL = ("--%python\nimport time\nclass Slow:\n    ended = False\n    @property\n    def value(self):\n"
               "        time.sleep(60)\n        Slow.ended = True\n        return 1\nslow = Slow()\nkept = 41\n")


@pytest.mark.slow
def test_a_completion_that_times_out_leaves_the_globals(ray_session: Session) -> None:
    """jedi calls properties of live objects; one that never ends used to hold the worker past
    the kernel's wait. The next cell then waited behind it, its interrupt was ignored (SIGINT is
    ignored between cells) and the kernel killed the worker after the grace, globals and all."""
    import threading

    session = ray_session
    assert session.run_cell(SLOW_GLOBAL, kind="python", cell=1).ok
    assert labels(session, "slow.value.", kind="python") == []  # stopped in the worker, not waited for
    threading.Timer(1.0, session.interrupt).start()
    out = session.run_cell("--%python\nimport time\ntime.sleep(30)\n", kind="python", cell=2)
    assert out.error is not None and out.error.kind == "interrupted", out.error
    after = session.run_cell("--%python\nprint('kept', kept + 1, Slow.ended)\n", kind="python", cell=3)
    assert after.ok, after.error
    assert "kept 42 False" in "".join(e.text for e in session.events if getattr(e, "stream", "") == "stdout")
    assert "dumps" in labels(session, "import json\njson.du", kind="python")  # still answering


def test_the_worker_stops_a_slow_completion_and_reports_an_interrupt() -> None:
    import signal
    import threading
    import time

    from console.worker.complete import bounded_items

    ended: list[int] = []
    entered = threading.Event()

    class Slow:  # no annotation on the property: jedi then calls it to learn what it gives
        value = property(lambda self: (entered.set(), time.sleep(30), ended.append(1)))

    ns = {"slow": Slow()}
    # What this process had before (the default, or a handler an earlier test's library set).
    before = signal.getsignal(signal.SIGINT)
    started = time.monotonic()
    answer = bounded_items("slow.value.", 1, 11, ns, seconds=0.5)
    spent = time.monotonic() - started
    assert answer == ([], False), f"after {spent:.1f} s, property entered: {entered.is_set()}"
    assert not ended  # stopped inside the property's sleep (or before it), not waited out
    entered.clear()

    def interrupt() -> None:  # once jedi is inside the property, whatever jedi took to get there
        if entered.wait(60):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    assert bounded_items("slow.value.", 1, 11, ns, seconds=90) == ([], True)
    items, interrupted = bounded_items("import json\njson.du", 2, 7, {}, seconds=20)
    assert "dumps" in [i["label"] for i in items] and not interrupted
    assert signal.getsignal(signal.SIGINT) is before  # restored


def test_a_stop_that_comes_while_an_object_is_cleaned_up_waits_for_the_clean_up() -> None:
    """A stop raised inside a `__del__` is swallowed by Python ("Exception ignored in", on the
    worker's stderr) and leaves the clean-up half done (seen in a fresh-clone run: jedi's
    InferenceStateSubprocess.__del__); it waits for the `__del__` to end, then lands."""
    import signal
    import threading
    import time

    from console.worker.complete import bounded_items

    cleaning = threading.Event()
    cleaned: list[int] = []

    class Handle:
        def __del__(self) -> None:
            cleaning.set()
            end = time.monotonic() + 0.5
            while time.monotonic() < end:
                time.sleep(0.01)  # Python code, where a signal's handler runs
            cleaned.append(1)

    def drop(_: Any) -> None:  # the Handle's last reference goes here: its __del__ runs at once
        return None

    class Slow:  # no annotation on the property: jedi then calls it to learn what it gives
        value = property(lambda self: (drop(Handle()), time.sleep(30)))

    def interrupt() -> None:
        if cleaning.wait(60):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    assert bounded_items("slow.value.", 1, 11, {"slow": Slow()}, seconds=90) == ([], True)
    assert cleaned == [1]


def _own_parse_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """jedi's parse cache in a folder of this test's, read from disk as a new process would."""
    import jedi  # type: ignore[import-untyped]
    import parso.cache  # type: ignore[import-untyped]

    folder = tmp_path / "jedi"
    monkeypatch.setattr(jedi.settings, "cache_directory", str(folder))
    parso.cache.parser_cache.clear()  # in place: jedi holds the same dict
    return folder


def test_a_completion_stopped_while_parso_saves_its_cache_leaves_every_cache_file_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit used to land inside parso's pickle.dump and leave builtins.pyi's cache file
    empty (seen on a fresh machine): every later completion of every process that shares the
    folder then failed on it and offered nothing."""
    import pickle
    import time

    import parso.cache

    from console.worker.complete import bounded_items, python_items

    folder = _own_parse_cache(tmp_path, monkeypatch)
    dump = pickle.dump

    def slow_dump(*args: Any, **kwargs: Any) -> None:  # a slow disk: each write outlasts the limit
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            time.sleep(0.01)  # Python code, where a signal's handler runs
        dump(*args, **kwargs)

    monkeypatch.setattr(pickle, "dump", slow_dump)
    items, interrupted = bounded_items("import json\njson.du", 2, 7, {}, seconds=0.2)
    monkeypatch.setattr(pickle, "dump", dump)
    assert not interrupted
    saved = sorted(folder.rglob("*.pkl"))
    assert saved, "jedi saved no cache file before it was stopped"
    assert [p.name for p in saved if p.stat().st_size == 0] == []
    parso.cache.parser_cache.clear()
    assert "dumps" in [i["label"] for i in python_items("import json\njson.du", 2, 7, {})]


def test_a_parse_cache_file_cut_short_is_started_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache file a killed process left half written (or empty) no longer ends completion for good."""
    import parso.cache

    from console.worker.complete import python_items

    folder = _own_parse_cache(tmp_path, monkeypatch)
    assert "dumps" in [i["label"] for i in python_items("import json\njson.du", 2, 7, {})]
    saved = sorted(folder.rglob("*.pkl"))
    assert saved
    for i, path in enumerate(saved):  # half of them empty, the others cut in the middle
        path.write_bytes(b"" if i % 2 else path.read_bytes()[: path.stat().st_size // 2])
    parso.cache.parser_cache.clear()  # as a new process: it reads the files
    assert "dumps" in [i["label"] for i in python_items("import json\njson.du", 2, 7, {})]
    parso.cache.parser_cache.clear()
    assert "dumps" in [i["label"] for i in python_items("import json\njson.du", 2, 7, {})]


def test_a_completion_cut_short_offers_the_names_plainly_there_running_none_of_their_code() -> None:
    """jedi cut by the worker's limit (a cold jedi on a busy machine) still answers a first Tab:
    the globals by prefix, and a global's attributes from its own and its classes' __dict__,
    without calling a property, __getattr__ or __dir__ (jedi would call the property)."""
    from console.worker.complete import bounded_items

    called: list[str] = []

    class Guarded:
        value = property(lambda self: called.append("property"))

        def method(self) -> None:
            pass

        def __getattr__(self, name: str) -> None:
            called.append("__getattr__")

        def __dir__(self) -> list[str]:
            called.append("__dir__")
            return []

    thing = Guarded()
    thing.own = 1  # type: ignore[attr-defined]
    ns = {"measurements_list": [1, 2], "measure": 3, "thing": thing, "other": 0}
    cut = 1e-6  # the limit runs out before jedi starts
    assert bounded_items("x = measu", 1, 9, ns, seconds=cut) == (
        [{"label": "measure", "type": "variable", "detail": "variable"},
         {"label": "measurements_list", "type": "variable", "detail": "variable"}], False)
    items, _ = bounded_items("measurements_list.app", 1, 21, ns, seconds=cut)
    assert [i["label"] for i in items] == ["append"]
    items, _ = bounded_items("thing.", 1, 6, ns, seconds=cut)
    assert [(i["label"], i["type"]) for i in items] == [("method", "function"), ("own", "variable"),
                                                         ("value", "property")]
    assert called == []


# ---------------------------------------------------------------- Byzer's words
def items(session: Session, source: str) -> list[dict[str, str]]:
    return queries.answer(session, "complete", {"source": source, "cursor": len(source), "kind": "mlsql"})["items"]


def test_algorithms_extensions_and_their_parameters(loaded: Session) -> None:
    assert labels(loaded, "train people as Ran") == ["RandomForest"]
    assert "DataSummary" in labels(loaded, "run people as Da")
    assert "RandomForest" not in labels(loaded, "run people as ")  # an algorithm is trained, not run
    assert "RandomForest" in labels(loaded, "register ")
    found = labels(loaded, 'train people as RandomForest.`models/rf` where keepVersion="true" and fitParam.0.max')
    assert found == ["fitParam.0.maxDepth"]
    assert "fitParam.1.maxDepth" in labels(loaded, "train people as RandomForest.`m` where `fitParam.1.")
    options = labels(loaded, "train people as RandomForest.`models/rf` where ")
    assert {"evaluateTable", "keepVersion", "fitParam.0.numTrees"} <= set(options)
    assert "partitionNum" in labels(loaded, "run people as TableRepartition.`` where ")
    rf = next(i for i in items(loaded, "train people as Ran") if i["label"] == "RandomForest")
    assert "docs/language.md#machine-learning-and-extensions" in rf["info"]


def test_commands_their_subcommands_and_statement_docs(loaded: Session) -> None:
    assert labels(loaded, "!delta his") == ["history"]
    assert {"show", "info", "vacuum", "compact"} <= set(labels(loaded, "!delta "))
    assert labels(loaded, "!fs -l") == ["-ls"]
    assert "et" in labels(loaded, "!show ")
    assert labels(loaded, "!python co") == ["conf"]
    load = next(i for i in items(loaded, "lo") if i["label"] == "load")
    assert "docs/language.md#load" in load["info"]
    delta = next(i for i in items(loaded, "!del") if i["label"] == "!delta")
    assert "history" in delta["info"]


def test_lake_tables_and_paths_inside_load(session: Session) -> None:
    assert session.run_cell("select 1 as a as t;\nsave overwrite t as delta.`sales.orders`;\n"
                            "save overwrite t as delta.`sales.refunds`;\nsave overwrite t as csv.`exports/t_csv`;").ok
    assert labels(session, "load delta.`") == ["sales.orders", "sales.refunds"]
    assert labels(session, "load delta.`sales.r") == ["sales.refunds"]
    assert labels(session, "!delta history sales.o") == ["sales.orders"]
    assert "exports/" in labels(session, "load csv.`")
    assert labels(session, "load csv.`exports/") == ["exports/t_csv/"]
    assert labels(session, "load csv.`../") == [] and labels(session, "load csv.`/etc/") == []
    answer = queries.answer(session, "complete", {"source": "load delta.`sales.r", "cursor": 18, "kind": "mlsql"})
    assert answer["from"] == 12  # the table name is replaced, the backquote stays


def test_jedi_in_the_kernel_caches_in_the_session_not_the_read_only_home(tmp_path: Any) -> None:
    """In the sandbox the home is read-only: parso's cache write warned on stderr, which the server
    shows as the kernel's own error output. A subprocess, so jedi is imported for the first time."""
    import os
    import subprocess
    import sys

    script = ("import os\nfrom console.config import load_config\nfrom console.kernel.session import Session\n"
              "from console.kernel import queries\n"
              f"s = Session(load_config({{'DATA_DIR': {str(tmp_path / 'data')!r}}}), session_id='jedi')\n"
              "src = 'import json\\njson.du'\n"
              "print([i['label'] for i in queries.answer(s, 'complete', "
              "{'source': src, 'cursor': len(src), 'kind': 'python'})['items']])\n"
              "print(os.environ['XDG_CACHE_HOME'])\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = "/proc/self/no-home"  # not writable, not even by root
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    labels_line, cache_line = proc.stdout.strip().splitlines()[-2:]
    assert "dumps" in labels_line
    assert cache_line == str(tmp_path / "data" / "cache" / "jedi" / ".home" / "cache")
    assert "save" not in proc.stderr.lower() and "permission" not in proc.stderr.lower(), proc.stderr
    assert any((tmp_path / "data" / "cache" / "jedi" / ".home" / "cache").iterdir())  # jedi/parso wrote there


def test_hover_gives_the_doc_of_a_word_of_the_language(loaded: Session) -> None:
    ask = lambda name: queries.answer(loaded, "inspect", {"name": name})  # noqa: E731
    assert ask("people")["columns"][0]["name"] == "user_id"  # a table first
    assert "docs/language.md#load" in ask("load")["doc"]
    delta = ask("!delta")["doc"]
    assert delta.startswith("!delta: delta tables") and "docs/language.md#commands" in delta
    rf = ask("RandomForest")["doc"]
    assert "algorithm" in rf and "maxDepth" in rf
    with pytest.raises(LookupError, match="no table 'nothing'"):
        ask("nothing")
