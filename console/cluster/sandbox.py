"""The wall around user code: the command line kernels, the embedded Ray head and the PID namespace's
holder start under.

Every kernel session (a kernel and the cell workers it spawns), the embedded Ray head (and so
every actor) and the holder of their PID namespace run in a sandbox where:
- the system is mounted read-only, with a fresh /proc and /dev, a private /tmp, and the PID
  namespace of the data dir's sandboxes (cluster/pidns.py), so the server's /proc entry is out of
  reach; a kernel session gets a private /dev/shm of CONSOLE_SESSION_SHM and its hand-off folder
  (cluster/walls.py), the Ray zone the host's /dev/shm (the object store, the hand-off folders);
- the server's private folder (<data_dir>/server: the database, the cookie key, Ray's token) is
  covered by an empty tmpfs, and a SQLite store elsewhere, /etc/shadow and the server user's home
  (all of it but the Python we run from, where sandboxes switch ids) by /dev/null or a tmpfs;
- only the lake, the caches (a kernel: its own session's), Ray's folders and the data roots are
  writable;
- the environment is rebuilt from an allow-list: no CONSOLE_* settings, no PG*, nothing that
  looks like a password, token or key; the kernel's own settings come without the database URL
  or the secret key (server/sessions/kernel_process.py);
- a seccomp filter refuses ptrace, process_vm_readv/writev, kcmp and pidfd_getfd (seccomp.py);
- it runs as an identity of its own (identity.py: a leased uid per session, the Ray zone's, the
  holder's), entered by setpriv inside the sandbox with no-new-privs, after every capability but
  the three setpriv needs was dropped; where the server is not root, as the server's uid with
  every capability dropped, so a sandboxed root cannot unmount the covers;
- it is in its cgroup (limits.py), entered before bwrap starts, with a high oom_score_adj.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from console.cluster import identity, limits, pidns, seccomp
from console.cluster.identity import Identity
from console.cluster.limits import Cgroup
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
    from console.cluster.guard import check_ports

    check_ports(cfg.get("RAY_CLIENT_PORT") or None)  # refused now, with the reason, not at the first Ray cell
    limits.protect_server()
    walls = _walls_line()
    chosen = mode(cfg)
    if chosen == "off":
        log.warning(OFF_WARNING)
        return OFF_WARNING
    reason = unavailable_reason()
    if reason is None:
        return "user code runs in the bubblewrap sandbox (CONSOLE_SANDBOX=%s); %s" % (chosen, walls)
    if chosen == "on" or login_mode:
        why = "CONSOLE_SANDBOX=on" if chosen == "on" else "this server has logins"
        raise SandboxUnavailable(
            f"refusing to start: {why} but {reason}, and without the sandbox any account that runs code can read "
            "the store and the secret key. Install bubblewrap (apt-get install bubblewrap, or `make "
            "system-deps`), or set CONSOLE_SANDBOX=off to run unsandboxed knowingly.")
    line = f"no sandbox ({reason}): single-user mode, user code runs as this server's user"
    log.warning(line)
    return line


def _walls_line() -> str:
    """What of the walls this machine allows: per-session ids (root only) and cgroup limits."""
    parts = ["each kernel session under a uid of its own" if identity.available() else
             "every sandbox under this server's uid (per-session ids need a root server and setpriv)"]
    why = limits.unavailable_reason()
    parts.append("memory and process limits by cgroup" if why is None else f"NO memory or process limits ({why})")
    line = ", ".join(parts)
    if why is not None or not identity.available():
        log.warning("sandbox walls: %s", line)
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


@dataclass(frozen=True)
class Wall:
    """What a sandbox adds beyond the mounts: who it runs as, where it is limited, its hand-off folder.

    identity: the uid/gid it becomes (cluster/identity.py); None keeps this process's (a server
    that is not root). cgroups and oom_score_adj: entered before bwrap starts (cluster/limits.py).
    handoff: a session's folder for the IPC files its actors map, bound at the same path.
    shm_size: the private /dev/shm's size (a session's); None binds the host's (the Ray zone's).
    """

    identity: Identity | None = None
    cgroups: tuple[Cgroup | None, ...] = ()
    oom_score_adj: int = limits.SANDBOX_OOM_SCORE_ADJ
    handoff: Path | None = None
    shm_size: int | None = None


def bwrap_argv(cfg: Mapping[str, Any], *, ray_temp_dir: Path, session_id: str | None = None,
               cwd: str | None = None, wall: Wall | None = None) -> tuple[list[str], tuple[int, ...]]:
    """The command prefix for a kernel of `session_id`, or for the Ray head when session_id is None
    (a session's own head: its session's id, or "" when started before its session: no cache),
    and the descriptors to pass it (the shared PID namespace: cluster/pidns.py says why one).

    ray_temp_dir: the head's temp dir (cluster/head.py's short_temp_dir), where drivers reach
    the raylet's sockets. Folders it mounts writable are created first (a bind needs its source).
    The prefix: a launcher that enters the cgroups, then bwrap, then setpriv to the identity.
    """
    wall = wall or Wall()
    data_dir = Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve()
    private = data_dir / PRIVATE_DIR_NAME
    ns = pidns.namespace_fd(private, lambda: holder_argv(cfg, ray_temp_dir))
    # --pidns before --proc: the new /proc shows the sandboxes' namespace, never the server.
    argv = [shutil.which("bwrap") or "bwrap", "--pidns", str(ns),
            *mounts(cfg, ray_temp_dir=ray_temp_dir, session_id=session_id, cwd=cwd, wall=wall)]
    bpf = seccomp_file(private)
    prefix = limits.launcher(wall.cgroups, wall.oom_score_adj, identity.UMASK if wall.identity else None, bpf)
    return prefix + argv + _seccomp_args(bpf) + ["--"] + _become(wall.identity), (ns,)


def _seccomp_args(bpf: Path | None) -> list[str]:
    # the launcher opens the filter's file on a free descriptor and puts its number here; bwrap reads and closes it
    return ["--seccomp", limits.OPENED_FD] if bpf is not None else []


def seccomp_file(private: Path) -> Path | None:
    """The filter (cluster/seccomp.py) as a file of the private folder, written once; None where unsupported."""
    if not seccomp.supported():
        return None
    path = private / "seccomp.bpf"
    program = seccomp.program()
    try:
        if path.read_bytes() == program:
            return path
    except OSError:
        pass
    private.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(program)
    tmp.replace(path)
    return path


def _become(who: Identity | None) -> list[str]:
    return who.setpriv() if who is not None else []


def _caps(who: Identity | None) -> list[str]:
    # bwrap run by root keeps every capability unless told; with CAP_SYS_ADMIN a cell could unmount
    # the tmpfs over the private folder and read the store (measured). Unprivileged bwrap has none.
    # With an identity, setpriv needs these three to switch, and drops them with root.
    if os.geteuid() != 0:
        return []
    keep = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"] if who else []
    return ["--cap-drop", "ALL", *keep]


def holder_argv(cfg: Mapping[str, Any], ray_temp_dir: Path) -> tuple[list[str], list[str]]:
    """The PID namespace holder's command (cluster/pidns.py), as bwrap and its options, then what runs
    inside: the Ray zone's covers with nothing writable, the holder's uid, and `cat` (its pipe's end
    is the namespace's life)."""
    who = identity.holder(cfg) if identity.available() else None
    wall = Wall(identity=who, oom_score_adj=limits.HOLDER_OOM_SCORE_ADJ)
    data_dir = Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve()
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-pid",
            *mounts(cfg, ray_temp_dir=ray_temp_dir, session_id=None, cwd="/", wall=wall, writable=False)]
    bpf = seccomp_file(data_dir / PRIVATE_DIR_NAME)
    prefix = limits.launcher((), wall.oom_score_adj, None, bpf)
    return prefix + argv + _seccomp_args(bpf), [*_become(who), "cat"]


def mounts(cfg: Mapping[str, Any], *, ray_temp_dir: Path, session_id: str | None, cwd: str | None,
           wall: Wall, writable: bool = True) -> list[str]:
    """The mounts of a sandbox: the system read-only, the covers last; writable=False: nothing writable."""
    data_dir = Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve()
    private = data_dir / PRIVATE_DIR_NAME
    who = wall.identity
    argv = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # A private /tmp everyone in the sandbox may write (the identity is not root).
    argv += ["--perms", "1777", "--tmpfs", "/tmp"]
    if wall.shm_size is not None:
        argv += ["--perms", "1777", "--size", str(wall.shm_size), "--tmpfs", "/dev/shm"]
    elif writable:
        argv += ["--bind", "/dev/shm", "/dev/shm"]
    argv += _caps(who)
    roots = [Path(r).resolve() for r in (cfg.get("DATA_ROOTS") or [])]
    home = _home()
    hidden_home = home is not None and _hide_home(home, who)
    # Folders replaced by an empty tmpfs: what is bound back under them needs its parents remade.
    covered = [Path("/tmp")]
    if wall.shm_size is not None:
        # The hand-off folder is bound back into the private /dev/shm: without its parent remade
        # enterable, bwrap makes that parent 0700 root and the kernel cannot reach its own folder
        # (issue 30: the kernel then wrote its IPC files to its private /tmp, out of the actors' sight).
        covered.append(Path("/dev/shm"))
    if hidden_home:
        assert home is not None
        argv += ["--tmpfs", str(home)]
        covered.append(home)
    # What the kernel runs from (the venv, the Python it was made from, this checkout) may sit
    # under /tmp, say a CI checkout, or in a home we cover; bound back read-only.
    for code in _code_paths():
        if any(_inside(code, c) and code != c for c in covered):
            argv += _bind_under(covered, code, "--ro-bind")
    data_dir.mkdir(parents=True, exist_ok=True)
    # The data dir reads as it is (under /tmp too); only the folders below are writable in it.
    argv += _bind_under(covered, data_dir, "--ro-bind")
    rw: list[Path] = [data_dir / "lake", data_dir / "ray"]
    cache = data_dir / "cache"
    if session_id is None:
        rw.append(cache)  # actors of any session run on the one head
    elif session_id == "":
        # A session's head started before its session (cluster/head_pool.py): no session's cache at
        # all (actors never read it: the kernel hands them data through the hand-off folder).
        argv += ["--tmpfs", str(cache)]
    else:
        own = session_cache_dir(data_dir, session_id)
        own.mkdir(parents=True, exist_ok=True)
        # Other sessions' caches are not this kernel's business: an empty tmpfs with only its own
        # bound in, made read-only once that bind's mount point exists (not recursive: its own stays rw).
        argv += ["--tmpfs", str(cache)]
        rw.append(own)
        # Kernels build their notebook's package layers here (console/kernel/envs.py); workers and
        # actors read them through the data dir's read-only bind.
        rw.append(data_dir / "envs")
    if not _inside(ray_temp_dir, data_dir):
        # A short temp dir under /tmp (the Unix socket path limit): drivers reach the raylet there.
        rw.append(ray_temp_dir)
    if wall.handoff is not None:
        rw.append(wall.handoff)
    for folder in rw:
        folder.mkdir(parents=True, exist_ok=True)
        argv += _bind_under(covered, folder, "--bind" if writable else "--ro-bind")
    for root in roots:  # the folders load/save may touch; the covers below still hide what is private
        if root.is_dir():
            argv += _bind_under(covered, root, "--bind" if writable else "--ro-bind")
    if DEMO_DATA.exists():
        argv += ["--ro-bind", str(DEMO_DATA), str(DEMO_DATA)]
    if session_id is not None:
        argv += ["--remount-ro", str(cache)]
    argv += _covers(cfg, data_dir, private, roots, home if not hidden_home else None)
    workdir = Path(cwd or os.getcwd())
    if _inside(workdir, Path("/tmp")) or _inside(workdir, private) or (hidden_home and home and _inside(workdir, home)):
        workdir = data_dir / "lake"
    return argv + ["--chdir", str(workdir)]


def _home() -> Path | None:
    home = Path(os.path.expanduser("~")).resolve()
    return None if home == Path("/") or not home.is_dir() else home


def _hide_home(home: Path, who: Identity | None) -> bool:
    """Cover the server user's whole home, binding back only what sandboxes need from it.

    Always with an identity (a home such as /root is 0700: the code in it must be bound back
    through folders the identity may enter); otherwise only when nothing we need is in there.
    """
    if who is not None:
        return True
    needed = [*_code_paths(), Path(os.getcwd()).resolve()]
    return not any(_inside(p, home) for p in needed)


def _dirs_between(top: Path, path: Path) -> list[str]:
    """Mount points from `top` down to path's parent, enterable by any uid (bwrap copies a 0700
    source folder's mode otherwise, and the identity could not reach what is bound below)."""
    out: list[str] = []
    for parent in reversed(path.parents):
        if _inside(parent, top) and parent != top:
            out += ["--perms", "0755", "--dir", str(parent)]
    return out


def _bind_under(covered: list[Path], path: Path, how: str) -> list[str]:
    """A bind of path to itself, its parents under a covered folder made enterable first."""
    pre: list[str] = []
    for top in covered:
        if _inside(path, top) and path != top:
            pre = _dirs_between(top, path)
            break
    return pre + [how, str(path), str(path)]


def _covers(cfg: Mapping[str, Any], data_dir: Path, private: Path, roots: list[Path], home: Path | None) -> list[str]:
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
    if home is not None:
        out += _home_secrets(home)
    return out


def _cover(folder: Path) -> list[str]:
    # Read-only, so a write there fails loudly instead of landing in a tmpfs that vanishes.
    return ["--tmpfs", str(folder), "--remount-ro", str(folder)]


def _code_paths() -> list[Path]:
    """The folders a kernel runs from: the venv, the Python it was made from, this checkout."""
    return [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(__file__).resolve().parents[2]]


def _home_secrets(home: Path) -> list[str]:
    """A home left visible (no identity, code in it): its usual credentials covered one by one."""
    out: list[str] = []
    for name in HOME_SECRETS:
        path = home / name
        if path.is_dir():
            out += ["--tmpfs", str(path)]
        elif path.exists():
            out += ["--ro-bind", "/dev/null", str(path)]
    return out


def wrap(cfg: Mapping[str, Any], argv: list[str], *, ray_temp_dir: Path, session_id: str | None = None,
         cwd: str | None = None, wall: Wall | None = None) -> tuple[list[str], tuple[int, ...]]:
    """argv run inside the sandbox, and the descriptors Popen must pass (pass_fds)."""
    prefix, fds = bwrap_argv(cfg, session_id=session_id, ray_temp_dir=ray_temp_dir, cwd=cwd, wall=wall)
    return prefix + argv, fds


def exit_code(returncode: int) -> int:
    """bwrap reports a sandboxed process killed by signal N as exit 128+N; give it back as -N."""
    return -(returncode - 128) if 128 < returncode < 128 + 65 else returncode


__all__ = ["DEMO_DATA", "OFF_WARNING", "SandboxUnavailable", "bwrap_argv", "check_startup", "clean_env", "denied",
           "enabled", "exit_code", "mode", "session_cache_dir", "unavailable_reason", "wrap"]
