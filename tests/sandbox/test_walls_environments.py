"""`%pip install` through a real login-mode server whose kernels run sandboxed (issue 31).

The kernel builds the layer under <data_dir>/envs (writable to kernels, sticky); its cell worker
imports from it; another notebook (another session, another uid) neither sees the package nor
can change or remove the layer.
"""
from __future__ import annotations


from walled_support import Walled, text_of

IMPORT = "import consoletestpkg\nprint('version', consoletestpkg.__version__, consoletestpkg.__file__)\n"


def test_a_sandboxed_notebook_installs_and_imports_its_package(walled: Walled) -> None:
    member = walled.member()
    runs = member.run(("python", "%pip install consoletestpkg==1.2\n"), ("python", IMPORT))
    assert [r["status"] for r in runs] == ["done", "done"], text_of(runs[0]) + text_of(runs[-1])
    shown = text_of(runs[-1])
    assert "version 1.2" in shown, shown
    layers = [p for p in (walled.data_dir / "envs").iterdir() if not p.name.startswith(".")]
    assert len(layers) == 1 and (layers[0] / "site" / "consoletestpkg").is_dir()
    target = layers[0] / "site" / "consoletestpkg" / "__init__.py"

    # Another notebook: no such package, and the layer is not its to change or remove.
    probe = (f"import os, shutil\ntry:\n    open({str(target)!r}, 'a').write('x = 1')\n    print('WROTE')\n"
             f"except OSError as exc:\n    print('write refused', type(exc).__name__)\n"
             f"try:\n    os.rename({str(layers[0])!r}, {str(layers[0]) + '-gone'!r})\n    print('RENAMED')\n"
             f"except OSError as exc:\n    print('rename refused', type(exc).__name__)\n"
             "try:\n    import consoletestpkg\n    print('IMPORTED')\nexcept ImportError:\n    print('no package')\n")
    other = member.run(("python", probe))[-1]
    shown = text_of(other)
    assert other["status"] == "done", shown
    assert "write refused" in shown and "rename refused" in shown and "no package" in shown, shown
    assert "WROTE" not in shown and "RENAMED" not in shown and "IMPORTED" not in shown
    assert target.read_text() == '__version__ = "1.2"\n'  # as the wheel had it

    # The same requirement in another notebook is built again, as that kernel's own layer: a
    # shared one would be owned by the session that built it first, which (or a later session
    # leased the same uid) could make it writable again and change it for everyone.
    again = member.run(("python", "%pip install consoletestpkg==1.2\n"), ("python", IMPORT))
    assert [r["status"] for r in again] == ["done", "done"], text_of(again[-1])
    names = sorted(p.name for p in (walled.data_dir / "envs").iterdir() if not p.name.startswith("."))
    assert len(names) == 2 and names[0].split("-")[0] == names[1].split("-")[0], names
