"""`%pip install` through a real login-mode server whose kernels run sandboxed (issue 31).

The kernel resolves the lock; the server builds the layer in a sandbox of its own (a one-off uid)
and seals it (its own files, read-only) as <data_dir>/envs/<lock hash>, shared by every session
with the same lock. The attacks come from real cells: the session that asked for the layer and
another one can neither write, chmod, rename nor replace anything in it, a folder a member made
under a lock's name first is never used, and the build's processes are not the member's uid.
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from console.config import load_config
from console.envlayers.layers import LAYER_NAME
from console.kernel import envs
from tests.support.wheels import make_wheel
from walled_support import Walled, text_of

IMPORT = "import consoletestpkg\nprint('version', consoletestpkg.__version__)\n"
ATTACK = """import os, re
envs = {envs!r}
(layer,) = [os.path.join(envs, n) for n in os.listdir(envs) if re.fullmatch("[0-9a-f]{{24}}", n)]
site = os.path.join(layer, "site")
target = os.path.join(site, "consoletestpkg", "__init__.py")
mine = os.path.join(os.path.dirname(layer), "mine-%d" % os.getpid())
os.mkdir(mine)  # the members may make folders in envs (sticky): one to put in the layer's place
def attempt(what, fn):
    try:
        fn()
        print("DID", what)
    except OSError as exc:
        print("refused", what, type(exc).__name__)
attempt("write", lambda: open(target, "a").write("x = 1"))
attempt("create", lambda: open(os.path.join(site, "evil.pth"), "x").write("import os"))
attempt("chmod-file", lambda: os.chmod(target, 0o666))
attempt("chmod-layer", lambda: os.chmod(layer, 0o777))
attempt("chmod-site", lambda: os.chmod(site, 0o777))
attempt("utime", lambda: os.utime(target, (0, 0)))
attempt("unlink", lambda: os.unlink(target))
attempt("rename-file", lambda: os.rename(target, target + ".old"))
attempt("rename-site", lambda: os.rename(site, site + "-old"))
attempt("rename-layer", lambda: os.rename(layer, layer + "-gone"))
attempt("replace-layer", lambda: os.replace(mine, layer))
attempt("rmdir-layer", lambda: os.rmdir(layer))
print("uid", os.getuid(), "owner", os.stat(layer).st_uid, "mode", oct(os.stat(layer).st_mode & 0o777))
"""
# Runs on in the member's sandbox while her kernel's %pip waits for the server's build: records the
# uid of every `uv pip install --target` it sees, and tries to write in every build folder it finds.
WATCH = """import os, subprocess, sys, textwrap
code = textwrap.dedent('''
    import os, time
    envs, seen, wrote = {envs!r}, set(), []
    end = time.time() + 40
    while time.time() < end and not os.path.exists(os.path.join({out!r}, "stop")):
        for pid in os.listdir("/proc"):
            try:
                cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\\\\0")
                if b"--target" in cmd and b"install" in cmd:
                    seen.add(os.stat("/proc/" + pid).st_uid)
            except OSError:
                pass
        for name in os.listdir(envs):
            if name.startswith("."):
                try:
                    open(os.path.join(envs, name, "site", "x.pth"), "w").write("import os")
                    wrote.append(name)
                except OSError:
                    pass
    open(os.path.join({out!r}, "watched"), "w").write(repr((sorted(seen), wrote, os.getuid())))
''')
subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
print("watching")
"""


def _layers(data_dir: Path) -> list[Path]:
    return [p for p in (data_dir / "envs").iterdir() if LAYER_NAME.match(p.name)]


def test_a_sandboxed_notebook_shares_a_sealed_layer(walled: Walled) -> None:
    member = walled.member()
    attack = ("python", ATTACK.format(envs=str(walled.data_dir / "envs")))
    # Session A asks for the layer, then its own kernel attacks it.
    runs = member.run(("python", "%pip install consoletestpkg==1.2\n"), ("python", IMPORT), attack)
    assert [r["status"] for r in runs[:2]] == ["done", "done"], text_of(runs[0]) + text_of(runs[1])
    assert "version 1.2" in text_of(runs[1]), text_of(runs[1])
    (layer,) = _layers(walled.data_dir)
    st = os.lstat(layer)
    # Sealed: the server's (here root's), read-only, named by the lock's hash alone.
    assert st.st_uid == os.stat(walled.data_dir).st_uid and not st.st_mode & 0o222 and "-" not in layer.name
    assert all(not os.lstat(p).st_mode & 0o222 and os.lstat(p).st_uid == st.st_uid for p in layer.rglob("*"))
    target = layer / "site" / "consoletestpkg" / "__init__.py"

    # Session B (another notebook) with the same lock reuses it, and attacks it too.
    again = member.run(("python", "%pip install consoletestpkg==1.2\n"), ("python", IMPORT), attack)
    assert [r["status"] for r in again[:2]] == ["done", "done"], text_of(again[1])
    assert _layers(walled.data_dir) == [layer] and "version 1.2" in text_of(again[1])
    for probe in (runs[2], again[2]):
        shown = text_of(probe)
        assert probe["status"] == "done", shown
        assert "DID" not in shown and shown.count("refused") == 12, shown
    assert target.read_text() == '__version__ = "1.2"\n' and _layers(walled.data_dir) == [layer]
    assert os.lstat(layer).st_ino == st.st_ino and not any(layer.rglob("evil.pth"))


def test_a_folder_a_member_made_under_a_locks_name_is_never_used(walled: Walled) -> None:
    """A member who knows the lock another notebook will ask for makes its folder first, with her
    code in it: the server replaces it with the sealed build, and no kernel imports hers."""
    wheelhouse = walled.data_dir / "wheelhouse"
    make_wheel(wheelhouse, "consoletestsquat", "1.0", 'GENUINE = True\n')
    with tempfile.TemporaryDirectory() as tmp:  # the lock as any kernel resolves it (a dry resolve)
        cfg = load_config({"DATA_DIR": tmp, "PIP_INDEX_URL": "none", "PIP_FIND_LINKS": str(wheelhouse)})
        lock_hash = envs.Builder(cfg, Path(tmp), Path(tmp) / "uv").build(["consoletestsquat==1.0"]).lock_hash
    squat = walled.data_dir / "envs" / lock_hash
    member = walled.member()
    plant = (f"import os\nsite = {str(squat / 'site' / 'consoletestsquat')!r}\nos.makedirs(site)\n"
             f"open(os.path.join(site, '__init__.py'), 'w').write('GENUINE = False\\n')\n"
             f"open({str(squat / 'meta.json')!r}, 'w').write('{{\"packages\": {{}}}}')\n"
             f"open({str(squat / 'lock.txt')!r}, 'w').write('')\n"
             f"for d, _, fs in os.walk({str(squat)!r}, topdown=False):\n"
             f"    [os.chmod(os.path.join(d, f), 0o444) for f in fs]\n    os.chmod(d, 0o555)\nprint('planted')\n")
    planted = member.run(("python", plant))[-1]
    assert "planted" in text_of(planted), text_of(planted)
    assert os.lstat(squat).st_uid != 0
    use = "import consoletestsquat\nprint('genuine', consoletestsquat.GENUINE)\n"
    runs = member.run(("python", "%pip install consoletestsquat==1.0\n"), ("python", use))
    assert [r["status"] for r in runs] == ["done", "done"], text_of(runs[0]) + text_of(runs[-1])
    assert "genuine True" in text_of(runs[-1]), text_of(runs[-1])
    assert os.lstat(squat).st_uid == 0 and not os.lstat(squat).st_mode & 0o222


def test_the_build_runs_under_a_uid_of_its_own(walled: Walled) -> None:
    """While the server builds the layer her kernel asked for, a process of the member's keeps
    looking: every uv install it sees runs as another uid than hers, and no build folder is hers to
    write in."""
    wheelhouse = walled.data_dir / "wheelhouse"
    make_wheel(wheelhouse, "consoletestwatch", "1.0", "# " + "x" * 4_000_000 + "\n")  # a build that takes a while
    out = walled.data_dir / "lake" / f"watch-{os.getpid()}"
    out.mkdir(parents=True)
    os.chmod(out, 0o777)
    member = walled.member()
    nb = member.notebook(("python", WATCH.format(envs=str(walled.data_dir / "envs"), out=str(out))),
                         ("python", "%pip install consoletestwatch==1.0\n"),
                         ("python", f"open({str(out / 'stop')!r}, 'w').close()\n"))
    runs = member.run_in(nb, None)
    assert [r["status"] for r in runs] == ["done"] * 3, "".join(text_of(r) for r in runs)
    for _ in range(100):
        if (out / "watched").exists():
            break
        import time

        time.sleep(0.1)
    seen, wrote, her_uid = eval((out / "watched").read_text())  # our own repr, in the test's folder
    assert seen and wrote == [] and her_uid not in seen, (seen, wrote, her_uid)  # seen: it watched the build
    print("build uids seen by the member:", seen, "hers:", her_uid, file=sys.stderr)
    assert stat.S_IMODE(os.lstat(walled.data_dir / "envs").st_mode) & 0o1000  # sticky: hers to make, not to take


def test_a_script_udf_imports_the_notebooks_package(walled: Walled) -> None:
    """A ScriptUDF runs in the kernel process, not the cell worker: it imports from the notebook's
    sealed layer as a Python cell does, and a notebook without the package cannot."""
    udf = ("register ScriptUDF.`` as pkgVersion where lang=\"python\" and code='''\nimport consoletestpkg\n"
           "def apply(self, x):\n    return consoletestpkg.__version__ + x\n''';\n"
           "select pkgVersion('-udf') as v as output;")
    member = walled.member()
    runs = member.run(("python", "%pip install consoletestpkg==1.2\n"), ("mlsql", udf))
    assert [r["status"] for r in runs] == ["done", "done"], text_of(runs[0]) + text_of(runs[1])
    assert "1.2-udf" in text_of(runs[1]), text_of(runs[1])
    (other,) = member.run(("mlsql", udf))
    assert other["status"] == "error" and "consoletestpkg" in text_of(other), text_of(other)
