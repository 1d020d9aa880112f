"""`!pip install|uninstall|list` (and `%pip …` lines of a Python cell, which compile to it).

The notebook's requirements live with its session (console/kernel/envs.py builds them into a
layer with uv); a change takes effect for the next Python cell, whose worker starts in the new
layer. The result table lists what the notebook adds to the base environment.
"""
from __future__ import annotations

import pyarrow as pa

from console import lang
from console.kernel.commands.base import command, emit_text, fail, usage
from console.kernel.host import CellRun, SessionHost

_USAGE = "use !pip install <requirement> …; !pip uninstall <package> …; or !pip list;"
_IGNORED = {"-q", "--quiet", "-y", "--yes", "-U", "--upgrade"}  # pip habits with nothing to do here


@command("pip", doc="the notebook's own Python packages, added to the base environment: install, uninstall, "
                    "list (kept with the notebook; a Python cell may write %pip install … instead)",
         example="!pip install 'xgboost==2.1.4';")
def pip(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    from console.kernel import envs

    args = [a for a in stmt.args if a not in _IGNORED]
    if not args:
        raise usage(stmt, _USAGE)
    verb, rest = args[0].lower(), args[1:]
    flags = [a for a in rest if a.startswith("-")]
    if flags:
        raise fail(stmt, f"!pip {verb}: option {flags[0]} is not supported here (the index is the server's "
                         f"setting, CONSOLE_PIP_INDEX_URL)", flags[0], kind="parse")
    env = session.notebook_env()
    try:
        if verb == "install":
            if not rest:
                raise usage(stmt, _USAGE)
            for r in rest:
                envs.parse_requirement(r)
            layer = env.change(envs.merge(env.requirements, rest))
            emit_text(session, f"environment {layer.lock_hash or '(base)'}: installed {', '.join(rest)}")
        elif verb == "uninstall":
            if not rest:
                raise usage(stmt, _USAGE)
            kept, missing = envs.remove(env.requirements, rest)
            if missing:
                raise fail(stmt, f"!pip uninstall: {', '.join(missing)} is not a requirement of this notebook "
                                 f"(its requirements: {', '.join(env.requirements) or 'none'})")
            layer = env.change(kept)
            emit_text(session, f"environment {layer.lock_hash or '(base)'}: uninstalled {', '.join(rest)}")
        elif verb == "list":
            if rest:
                raise usage(stmt, _USAGE)
        else:
            raise usage(stmt, _USAGE)
        layer = env.layer()
    except envs.EnvError as exc:
        raise fail(stmt, f"!pip {verb}: {exc}", kind="python") from None
    if verb != "list":
        # The server keeps the list with the notebook, so its next kernel (a restart, a job) starts in it.
        from console.ids import RunId
        from console.wire.kernel import EnvironmentChanged

        session.emit(EnvironmentChanged(RunId(""), list(env.requirements), env.lock_hash))
    session.refresh_environment()
    run.show("pip", listing(env.requirements, layer.packages))


def listing(requirements: list[str], packages: dict[str, str]) -> pa.Table:
    """package, version, requested (the notebook's requirement, or '' for a dependency)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    asked: dict[str, str] = {canonicalize_name(Requirement(r).name): r for r in requirements}
    names = sorted(set(packages) | set(asked))
    return pa.table({
        "package": pa.array(names, pa.string()),
        "version": pa.array([packages.get(n, "(base)") for n in names], pa.string()),
        "requested": pa.array([asked.get(n, "") for n in names], pa.string()),
    })
