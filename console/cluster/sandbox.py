"""The wall around user code: the bubblewrap command line kernels and the embedded Ray head start under.

Every kernel (and so its cell workers, which it spawns) and the embedded Ray head (and so every
actor) run in a sandbox where:
- the system is mounted read-only, with a fresh /proc and /dev, a private /tmp, and a PID
  namespace of the data dir's sandboxes (cluster/pidns.py), so /proc/<server pid>/environ and
  the server's descriptors are out of reach;
- the server's private folder (<data_dir>/server: the database and the cookie key) is covered by
  an empty tmpfs, and a SQLite store elsewhere, /etc/shadow and the credentials in the server
  user's home by /dev/null or an empty tmpfs;
- only the lake, the caches (a kernel: its own session's), Ray's folders, the data roots and
  /dev/shm are writable (/dev/shm is the host's: kernels hand tables to actors there);
- the environment is rebuilt from an allow-list: no CONSOLE_* settings, no PG*, nothing that
  looks like a password, token or key; the kernel's own settings come without the database URL
  or the secret key (server/kernel_process.py);
- every capability is dropped, so a sandboxed root cannot unmount the covers.

Not `--die-with-parent`: its signal fires when the *thread* that spawned the sandbox ends, and
kernels start on request threads; the server stops sandboxes by their process group instead.
Not `--new-session`: the sandboxed processes must stay in the group the server signals.

Runs in: the server (kernels, the head) and the CLI's headless runs (the head).
"""
from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from console.cluster import pidns
from console.config import PRIVATE_DIR_NAME

log = logging.getLogger(__name__)

OFF_WARNING = (
    "CONSOLE_SANDBOX=off: user code is NOT walled off. Every notebook's MLSQL and Python cells and "
    "Ray actors run as this server's own user, with its environment and files: any account that may "
    "run code can read the store (password hashes, every notebook) and the cookie-signing key, and "
    "so act as any user, the admin included. Use it only where every account is trusted.")

# The demo's data set (console.demo.DEMO_DATA): the seed notebook loads it from this path, which
# the sandbox's private /tmp would otherwise hide.
DEMO_DATA = Path("/tmp/mnist")
# What a kernel or the head keeps of the server's environment (plus LC_* and the prefixes below).
ENV_KEEP = frozenset({
    "PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "PYTHONPATH", "VIRTUAL_ENV",
    "LD_LIBRARY_PATH", "JAVA_HOME", "CUDA_HOME", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
})
ENV_KEEP_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "TF_", "RAY_")
# Never passed in, whatever the allow-list says: the store's settings and anything secret-looking.
ENV_DENY_PREFIXES = ("CONSOLE_", "PG")
ENV_DENY_WORDS = ("PASSWORD", "SECRET", "TOKEN", "CREDENTIAL", "_KEY")
# Credentials a server user's home commonly holds; covered when the home itself cannot be.
HOME_SECRETS = (".ssh", ".pgpass", ".netrc", ".aws", ".docker", ".kube", ".gnupg", ".config/gcloud",
                ".git-credentials", ".pypirc")
SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")


class SandboxUnavailable(RuntimeError):
    """CONSOLE_SANDBOX=on, or a login-mode server on auto, where bwrap does not work."""


@functools.lru_cache(maxsize=None)
def unavailable_reason(bwrap: str = "bwrap") -> str | None:
    """None when bubblewrap runs here with the options we use; otherwise why not."""
    path = shutil.which(bwrap)
    if path is None:
        return "bwrap is not installed (Debian package `bubblewrap`)"
    argv = [path, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--unshare-pid",
            *_cap_drop(), "true"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not run: {exc}"
    if done.returncode != 0:
        return f"bwrap does not work here: {done.stderr.decode('utf-8', 'replace').strip()[:300]}"
    return None


def mode(cfg: Mapping[str, Any]) -> str:
    return str(cfg.get("SANDBOX") or "auto").lower()


def enabled(cfg: Mapping[str, Any]) -> bool:
    """Whether user code runs sandboxed under these settings; raises when `on` cannot be honoured."""
    chosen = mode(cfg)
    if chosen == "off":
        return False
    reason = unavailable_reason()
    if chosen == "on" and reason:
        raise SandboxUnavailable(f"CONSOLE_SANDBOX=on but {reason}")
    return reason is None


def check_startup(cfg: Mapping[str, Any], login_mode: bool) -> str:
    """Decide at startup; returns a line for the log. Raises SandboxUnavailable where we must not start.

    auto without bwrap: a single-user server (loopback, no login) runs unsandboxed, one with
    logins refuses to start, since its accounts would reach each other's data through the store.
    """
    chosen = mode(cfg)
    if chosen == "off":
        log.warning(OFF_WARNING)
        return OFF_WARNING
    reason = unavailable_reason()
    if reason is None:
        return "user code runs in the bubblewrap sandbox (CONSOLE_SANDBOX=%s)" % chosen
    if chosen == "on" or login_mode:
        why = "CONSOLE_SANDBOX=on" if chosen == "on" else "this server has logins"
        raise SandboxUnavailable(
            f"refusing to start: {why} but {reason}, and without the sandbox any account that runs code can read "
            "the store and the secret key. Install bubblewrap (apt-get install bubblewrap, or `make "
            "system-deps`), or set CONSOLE_SANDBOX=off to run unsandboxed knowingly.")
    line = f"no sandbox ({reason}): single-user mode, user code runs as this server's user"
    log.warning(line)
    return line


def _cap_drop() -> list[str]:
    # bwrap run by root keeps every capability unless told; with CAP_SYS_ADMIN a cell could unmount
    # the tmpfs over the private folder and read the store (measured). Unprivileged bwrap has none.
    return ["--cap-drop", "ALL"] if os.geteuid() == 0 else []


def clean_env(environ: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `environ`, then `extra` (what the server itself hands the process)."""
    env = {k: v for k, v in environ.items()
           if (k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)) and not denied(k)}
    env.update(extra or {})
    env["TMPDIR"] = "/tmp"  # the private one; a TMPDIR of the server's may not exist in here
    return env


def denied(name: str) -> bool:
    """A variable no process running user code gets: the store's settings, anything secret-looking."""
    upper = name.upper()
    return upper.startswith(ENV_DENY_PREFIXES) or any(word in upper for word in ENV_DENY_WORDS)


def session_cache_dir(data_dir: Path, session_id: str) -> Path:
    """<data_dir>/cache/<session>, named as the engine names it (kernel/session.py's cache_dir)."""
    return data_dir / "cache" / re.sub(r"[^A-Za-z0-9_.-]", "_", session_id)


def _sqlite_file(url: str | None) -> Path | None:
    if not url or not url.startswith("sqlite:///"):
        return None
    rest = url[len("sqlite:///"):].split("?", 1)[0]
    return Path(rest if rest.startswith("/") else os.path.abspath(rest)) if rest and rest != ":memory:" else None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def bwrap_argv(cfg: Mapping[str, Any], *, ray_temp_dir: Path, session_id: str | None = None,
               cwd: str | None = None) -> tuple[list[str], tuple[int, ...]]:
    """The bwrap prefix for a kernel of `session_id`, or for the Ray head when session_id is None,
    and the descriptors to pass it (the shared PID namespace: cluster/pidns.py says why one).

    ray_temp_dir: the head's temp dir (cluster/head.py's short_temp_dir), where drivers reach
    the raylet's sockets. Folders it mounts writable are created first (a bind needs its source).
    """
    data_dir = Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve()
    private = data_dir / PRIVATE_DIR_NAME
    ns = pidns.namespace_fd(private, _cap_drop())
    # --pidns before --proc: the new /proc shows the sandboxes' namespace, never the server.
    argv = [shutil.which("bwrap") or "bwrap", "--pidns", str(ns), "--ro-bind", "/", "/", "--dev", "/dev",
            "--proc", "/proc", "--tmpfs", "/tmp", "--bind", "/dev/shm", "/dev/shm", *_cap_drop()]
    # What the kernel runs from (the venv, the Python it was made from, this checkout) may sit
    # under /tmp, say a CI checkout; the private /tmp would hide it, so it is bound back read-only.
    for code in _code_paths():
        if _inside(code, Path("/tmp")):
            argv += ["--ro-bind", str(code), str(code)]
    data_dir.mkdir(parents=True, exist_ok=True)
    # The data dir reads as it is (under /tmp too); only the folders below are writable in it.
    argv += ["--ro-bind", str(data_dir), str(data_dir)]
    writable = [data_dir / "lake", data_dir / "ray"]
    cache = data_dir / "cache"
    if session_id is None:
        writable.append(cache)  # actors of any session run on the one head
    else:
        own = session_cache_dir(data_dir, session_id)
        own.mkdir(parents=True, exist_ok=True)
        # Other sessions' caches are not this kernel's business: an empty tmpfs with only its own
        # bound in, made read-only once that bind's mount point exists (not recursive: its own stays rw).
        argv += ["--tmpfs", str(cache)]
        writable.append(own)
    if not _inside(ray_temp_dir, data_dir):
        # A short temp dir under /tmp (the Unix socket path limit): drivers reach the raylet there.
        writable.append(ray_temp_dir)
    roots = [Path(r).resolve() for r in (cfg.get("DATA_ROOTS") or [])]
    for folder in writable:
        folder.mkdir(parents=True, exist_ok=True)
        argv += ["--bind", str(folder), str(folder)]
    for root in roots:  # the folders load/save may touch; the covers below still hide what is private
        if root.is_dir():
            argv += ["--bind", str(root), str(root)]
    if DEMO_DATA.exists():
        argv += ["--ro-bind", str(DEMO_DATA), str(DEMO_DATA)]
    if session_id is not None:
        argv += ["--remount-ro", str(cache)]
    argv += _covers(cfg, data_dir, private, roots)
    workdir = Path(cwd or os.getcwd())
    if _inside(workdir, Path("/tmp")) or _inside(workdir, private):
        workdir = data_dir / "lake"
    return argv + ["--chdir", str(workdir), "--"], (ns,)


def _covers(cfg: Mapping[str, Any], data_dir: Path, private: Path, roots: list[Path]) -> list[str]:
    """Mounts that hide the server's secrets; they come last, so no bind above uncovers them."""
    out = _cover(private)
    db = _sqlite_file(cfg.get("DATABASE_URL"))
    if db is not None and not _inside(db, private):
        # A store outside the private folder: cover the file and its journals (they must exist now).
        for side in (db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))):
            if side.exists():
                out += ["--ro-bind", "/dev/null", str(side)]
    for secret in SYSTEM_SECRETS:
        if os.path.exists(secret):
            out += ["--ro-bind", "/dev/null", secret]
    out += _home_covers(data_dir, roots)
    return out


def _cover(folder: Path) -> list[str]:
    # Read-only, so a write there fails loudly instead of landing in a tmpfs that vanishes.
    return ["--tmpfs", str(folder), "--remount-ro", str(folder)]


def _code_paths() -> list[Path]:
    """The folders a kernel runs from: the venv, the Python it was made from, this checkout."""
    return [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(__file__).resolve().parents[2]]


def _home_covers(data_dir: Path, roots: list[Path]) -> list[str]:
    home = Path(os.path.expanduser("~")).resolve()
    if home == Path("/") or not home.is_dir():
        return []
    needed = [*_code_paths(), data_dir, Path(os.getcwd()).resolve(), *roots]
    if not any(_inside(p, home) for p in needed):
        return ["--tmpfs", str(home)]  # nothing we run from is in there: hide all of it
    out: list[str] = []
    for name in HOME_SECRETS:
        path = home / name
        if path.is_dir():
            out += ["--tmpfs", str(path)]
        elif path.exists():
            out += ["--ro-bind", "/dev/null", str(path)]
    return out


def wrap(cfg: Mapping[str, Any], argv: list[str], *, ray_temp_dir: Path, session_id: str | None = None,
         cwd: str | None = None) -> tuple[list[str], tuple[int, ...]]:
    """argv run inside the sandbox, and the descriptors Popen must pass (pass_fds)."""
    prefix, fds = bwrap_argv(cfg, session_id=session_id, ray_temp_dir=ray_temp_dir, cwd=cwd)
    return prefix + argv, fds


def exit_code(returncode: int) -> int:
    """bwrap reports a sandboxed process killed by signal N as exit 128+N; give it back as -N."""
    return -(returncode - 128) if 128 < returncode < 128 + 65 else returncode


__all__ = ["DEMO_DATA", "OFF_WARNING", "SandboxUnavailable", "bwrap_argv", "check_startup", "clean_env", "denied",
           "enabled", "exit_code", "mode", "session_cache_dir", "unavailable_reason", "wrap"]
