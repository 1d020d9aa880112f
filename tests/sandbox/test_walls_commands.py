"""`!sh` and `!fs` in a sandboxed kernel: neither reaches the server's private folder (issue 12).

`!fs` is refused by the path fence before anything is opened; `!sh` runs any program, so what
stops it is the sandbox: the private folder is an empty read-only folder inside it.
"""
from __future__ import annotations

from walled_support import Walled, text_of


def test_sh_and_fs_cannot_read_the_private_folder(walled: Walled) -> None:
    db, key, private = walled.db_path, walled.key_path, walled.db_path.parent
    secret = key.read_text().strip()
    member = walled.member()
    runs = member.run(f'!sh "ls -a {private}; cat {key}; cat {db} | head -c 64";')
    shown = text_of(runs[-1])
    assert secret not in shown, shown
    assert "SQLite format" not in shown, shown
    # Inside the sandbox the private folder is empty, and its files do not exist.
    results = [e for e in runs[-1]["events"] if e.get("type") == "result"]
    assert results and results[-1]["rows"] == [["."], [".."]], shown
    # (the kernel writes a server path as "<server path>" in what a user sees)
    assert "cat: <server path> No such file or directory" in shown or f"cat: {key}: No such file" in shown, shown
    for source in (f"!fs -ls {private};", f"!fs -cat {key};", f"!hdfs -cp {db} stolen.db;"):
        run = member.run(source)[-1]
        assert run["status"] == "error" and "private data folder" in text_of(run), (source, text_of(run))
    # The same member's !sh does run, in the lake.
    run = member.run('!sh "pwd";')[-1]
    assert run["status"] == "done" and "/lake" in text_of(run), text_of(run)
