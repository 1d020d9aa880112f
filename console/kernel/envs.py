"""A notebook's Python environment: its requirements, resolved by uv to a lock, installed as a layer.

A layer is a folder `<data_dir>/envs/<lock hash>` that `uv pip install --target` filled with the
packages the lock adds to the base environment (the product's own venv). It goes on the cell
worker's PYTHONPATH, in front of the base's site-packages. Why a --target folder and not a venv
with system site packages: the base is itself a venv, and a venv made from it with
--system-site-packages sees the interpreter's system packages, not the base venv's (tensorflow,
ray, pyarrow would be missing); a plain folder on PYTHONPATH layers on whatever interpreter the
worker runs, and the same folder can be handed to Ray actors through runtime_env's env_vars.

Base packages are never copied or replaced: the base's every distribution is a constraint of
the resolution (`name==version`), a requirement naming a base package at another version is
refused before uv runs, and base packages in the lock are left out of the layer.

A layer is named by the hash of its lock (exact versions and the artifacts' hashes), so every
session whose requirements lock the same shares one folder; a build writes a temporary folder
and renames it into place, so a reader never sees half a layer.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

STATE_FILE = "environment.json"  # in the session's cache folder: the notebook's requirements between kernels
# Behind the sandbox, this kernel's layers are named <lock hash>-<this>: removed when the kernel stops.
_PRIVATE_SUFFIX = f"-{uuid.uuid4().hex[:16]}"
LAYER_NAME = re.compile(r"^[0-9a-f]{24}(-[0-9a-f]{16})?$")
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


class EnvError(Exception):
    """The environment could not be built; the message says which requirement and why."""


@dataclass(frozen=True)
class Layer:
    """A built environment: where it is and what it holds."""

    path: Path | None  # None: the requirements add nothing to the base (no folder, nothing on PYTHONPATH)
    lock_hash: str
    packages: dict[str, str] = field(default_factory=dict)  # canonical name -> version, the layer's own


def envs_dir(data_dir: Path) -> Path:
    return data_dir / "envs"


def _behind_sandbox(data_dir: Path) -> bool:
    """Whether this process runs as another uid than the data dir's owner (a sandboxed kernel)."""
    for folder in (data_dir, *data_dir.parents):  # a data dir not made yet: whoever owns where it will be
        try:
            return os.geteuid() != folder.stat().st_uid
        except FileNotFoundError:
            continue
        except OSError:
            break
    return True  # unknown: the safe answer


def parse_requirement(text: str) -> Requirement:
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        raise EnvError(f"{text!r} is not a requirement pip understands: {exc}") from None


def merge(current: list[str], added: list[str]) -> list[str]:
    """current with `added`: a requirement replaces an earlier one of the same package."""
    by_name = {canonicalize_name(parse_requirement(r).name): r for r in current}
    for r in added:
        by_name[canonicalize_name(parse_requirement(r).name)] = r
    return sorted(by_name.values(), key=lambda r: canonicalize_name(parse_requirement(r).name))


def remove(current: list[str], names: list[str]) -> tuple[list[str], list[str]]:
    """(current without `names`, the names that were not there)."""
    wanted = {canonicalize_name(parse_requirement(n).name) for n in names}
    kept = [r for r in current if canonicalize_name(parse_requirement(r).name) not in wanted]
    present = {canonicalize_name(parse_requirement(r).name) for r in current}
    return kept, sorted(wanted - present)


@functools.lru_cache(maxsize=1)
def base_packages() -> dict[str, str]:
    """The base environment's distributions (this interpreter's): canonical name -> version."""
    out: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out.setdefault(canonicalize_name(name), dist.version)
    return out


def check_base(requirements: list[str], base: Mapping[str, str]) -> None:
    """Refuse a requirement that would replace a base package (another tensorflow, ray, pyarrow …)."""
    for text in requirements:
        req = parse_requirement(text)
        name = canonicalize_name(req.name)
        if name in base and req.specifier and not req.specifier.contains(base[name], prereleases=True):
            raise EnvError(f"{text} is refused: the base environment has {req.name} {base[name]}, and a "
                           f"notebook's environment adds packages to the base but never replaces one "
                           f"(ask for {req.name}=={base[name]}, or leave the version out)")


@functools.lru_cache(maxsize=1)
def _pip_config() -> dict[str, str]:
    """The machine's pip configuration (files and PIP_* variables), which uv does not read itself."""
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out: dict[str, str] = {}
    for line in done.stdout.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            # env values (":env:.find-links") win over the files' ("global.find-links"), as in pip.
            name = key.rsplit(".", 1)[-1]
            if key.startswith(":env:") or name not in out:
                out[name] = value.strip().strip("'\"")
    return out


def index_args(cfg: Mapping[str, Any]) -> list[str]:
    """uv's index options: CONSOLE_PIP_INDEX_URL ("none": no index) and CONSOLE_PIP_FIND_LINKS, else pip's."""
    args: list[str] = []
    index = str(cfg.get("PIP_INDEX_URL") or "")
    links = str(cfg.get("PIP_FIND_LINKS") or "").split()
    if index:
        args += ["--no-index"] if index.lower() == "none" else ["--index-url", index]
    else:
        conf = _pip_config()
        if conf.get("index-url"):
            args += ["--index-url", conf["index-url"]]
        extra = conf.get("extra-index-url", "").split()
        args += [a for url in extra for a in ("--extra-index-url", url)]
        if extra:
            # pip takes the best version from all its indexes; uv by default only from the first
            # that has the package, so a machine whose mirrors split a project's releases (here:
            # tabulate's newest on the first, 0.9.0 on the second) resolved under pip but not uv.
            args += ["--index-strategy", "unsafe-best-match"]
        if not links:
            links = conf.get("find-links", "").split()
    return args + [a for link in links for a in ("--find-links", link)]


def uv_binary() -> str:
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise EnvError("uv is not installed in the base environment (pip install uv)") from None
        return found


def _run(argv: list[str], timeout: float, deadline_note: str, env: Mapping[str, str]) -> subprocess.CompletedProcess:
    """Run uv in a process group of its own, so a build past its limit stops with its children."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=dict(env), stdin=subprocess.DEVNULL)
    try:
        out, err = proc.communicate(timeout=max(0.1, timeout))
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise EnvError(deadline_note) from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _uv_words(stderr: str) -> str:
    """uv's explanation, without its progress lines."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("Resolved ", "Using ", "warning:"))]
    return "\n".join(lines).strip() or stderr.strip()


def lock_packages(lock: str) -> dict[str, str]:
    return {canonicalize_name(m.group(1)): m.group(2) for m in map(_PINNED.match, lock.splitlines()) if m}


class Builder:
    """Resolves and installs layers under one data dir, with one session's uv cache and limits."""

    def __init__(self, cfg: Mapping[str, Any], data_dir: Path, uv_cache: Path,
                 server: Callable[[str], str] | None = None) -> None:
        """server: behind the sandbox, asks the server to build and seal a lock's layer (the kernel's
        pipe, console/kernel/main.py); returns the lock hash or raises EnvError."""
        self.cfg = cfg
        self.root = envs_dir(data_dir)
        self.data_dir = data_dir
        self.uv_cache = uv_cache
        self.timeout = float(cfg.get("PIP_TIMEOUT_SECONDS") or 300)
        behind = _behind_sandbox(data_dir)
        # Behind the sandbox (this kernel runs as a leased uid, not as the data dir's owner) a layer
        # this kernel built would be owned by its uid: it, or a later session leased the same uid,
        # could make its files writable again and put code into every notebook with the same lock.
        # So the server builds it (under a one-off uid) and seals it (its own, read-only), and every
        # session with that lock shares it; a kernel with no server builds one of its own, private.
        self.server = server if behind else None
        self.sealed_only = behind and server is not None  # use no layer the server did not seal
        self.suffix = _PRIVATE_SUFFIX if behind and server is None else ""

    def folder(self, lock_hash: str) -> Path:
        return self.root / f"{lock_hash}{self.suffix}"

    def build(self, requirements: list[str]) -> Layer:
        """The layer for `requirements`: from the cache when its lock was built before. Raises EnvError."""
        base = base_packages()
        check_base(requirements, base)
        if not requirements:
            return Layer(None, "", {})
        import time

        deadline = time.monotonic() + self.timeout
        limit = f"the environment build stopped after {self.timeout:g} s (CONSOLE_PIP_TIMEOUT_SECONDS)"
        env = {**os.environ, "UV_CACHE_DIR": str(self.uv_cache), "UV_NO_PROGRESS": "1", "NO_COLOR": "1"}
        env.pop("VIRTUAL_ENV", None)  # --python names the interpreter; an activated venv must not override it
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="env-resolve-") as tmp:
            req_in, constraints = Path(tmp) / "requirements.in", Path(tmp) / "base.txt"
            req_in.write_text("\n".join(requirements) + "\n", encoding="utf-8")
            constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(base.items())), encoding="utf-8")
            done = _run([uv_binary(), "pip", "compile", str(req_in), "-c", str(constraints), "--generate-hashes",
                         "--no-header", "--no-annotate", "--quiet", "--python", sys.executable, *index_args(self.cfg)],
                        deadline - time.monotonic(), limit, env)
        if done.returncode != 0:
            raise EnvError(self._unresolved(requirements, _uv_words(done.stderr)))
        lock = done.stdout
        lock_hash = lock_name(lock)
        own = {n: v for n, v in lock_packages(lock).items() if n not in base}
        if not own:
            return Layer(None, lock_hash, {})
        final = self.folder(lock_hash)
        if self.server is not None:
            if not is_sealed(final, self.data_dir):
                built = self.server(lock)  # raises EnvError: the server's build failed, and why
                if built != lock_hash or not is_sealed(final, self.data_dir):
                    raise EnvError(f"the server built lock {built}, not {lock_hash}")
            return Layer(final, lock_hash, own)
        if (final / "lock.txt").is_file():
            _used(final)
            return Layer(final, lock_hash, own)
        staging = self.root / f".build-{uuid.uuid4().hex[:12]}"
        try:
            staging.mkdir(parents=True)
            layer_lock = staging / "lock.txt"
            layer_lock.write_text(_without(lock, base), encoding="utf-8")
            done = _run([uv_binary(), "pip", "install", "--target", str(staging / "site"), "--no-deps",
                         "--require-hashes", "--quiet", "--python", sys.executable, "-r", str(layer_lock),
                         *index_args(self.cfg)], deadline - time.monotonic(), limit, env)
            if done.returncode != 0:
                raise EnvError(f"uv could not install the environment:\n{_uv_words(done.stderr)}")
            self._check_size(staging)
            (staging / "requirements.in").write_text("\n".join(requirements) + "\n", encoding="utf-8")
            (staging / "meta.json").write_text(json.dumps({"lock_hash": lock_hash, "packages": own}), encoding="utf-8")
            _read_only(staging)
            try:
                staging.rename(final)  # atomic: another session that built the same lock first wins
            except OSError:
                if not (final / "lock.txt").is_file():
                    raise
        finally:
            if staging.exists():
                _writable(staging)
                shutil.rmtree(staging, ignore_errors=True)
        return Layer(final, lock_hash, own)

    def _check_size(self, folder: Path) -> None:
        """Refuse a layer past CONSOLE_PIP_MAX_SIZE (checked once installed: the session's own disk
        and memory limits bound the install itself)."""
        from console.config import parse_size

        text = str(self.cfg.get("PIP_MAX_SIZE") or "4G")
        limit = parse_size(text)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
        if size > limit:
            raise EnvError(f"the environment would add {size / 2**20:.1f} MiB to the base, over "
                           f"CONSOLE_PIP_MAX_SIZE ({text})")

    def _unresolved(self, requirements: list[str], words: str) -> str:
        low = words.lower()
        named = [r for r in requirements if canonicalize_name(parse_requirement(r).name) in low
                 or parse_requirement(r).name.lower() in low]
        which = ", ".join(named) if named else ", ".join(requirements)
        # A dependency that wants another version of a base package: uv names the base's pin (the
        # constraint), which the user never wrote, so say what it is.
        base = base_packages()
        held = sorted(f"{n} {v}" for n, v in base.items() if f"{n}=={v}" in low)
        why = (f"a dependency would replace a base package ({', '.join(held)}: a notebook's environment never "
               f"replaces one)" if held else "base packages are held at the base's versions")
        return f"the requirements do not resolve ({which}); {why}. uv says:\n{words}"

    def cached(self, lock_hash: str) -> Layer | None:
        """A layer built before, by its lock hash (a restarted kernel finds its notebook's layer without uv)."""
        folder = self.folder(lock_hash)
        if self.sealed_only and not is_sealed(folder, self.data_dir):
            return None  # not the server's: anybody's kernel may have made a folder of that name
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        _used(folder)
        return Layer(folder, lock_hash, {str(k): str(v) for k, v in dict(meta.get("packages", {})).items()})


def lock_name(lock: str) -> str:
    """A layer's name: the hash of its lock, for this interpreter (the server and its kernels run the same)."""
    tag = f"{sys.implementation.cache_tag}-{sys.platform}"
    return hashlib.sha256((tag + "\n" + lock).encode()).hexdigest()[:24]


def is_sealed(folder: Path, data_dir: Path) -> bool:
    """Whether folder is a layer the server sealed: a real folder (no link) owned by the data dir's
    owner, which no other uid can write. Behind the sandbox a kernel uses no other."""
    try:
        st, owner = os.lstat(folder), os.stat(data_dir).st_uid
        meta = os.lstat(folder / "meta.json")
    except OSError:
        return False
    import stat as st_

    return (st_.S_ISDIR(st.st_mode) and st.st_uid == owner and not st.st_mode & 0o222
            and st_.S_ISREG(meta.st_mode) and meta.st_uid == owner)


def site_path(layer: Layer | None) -> str | None:
    """The folder to put on PYTHONPATH for a layer, or None."""
    return str(layer.path / "site") if layer is not None and layer.path is not None else None


def _without(lock: str, base: Mapping[str, str]) -> str:
    """The lock's entries that are not base packages (each entry: a pin line and its --hash lines)."""
    out: list[str] = []
    keep = False
    for line in lock.splitlines():
        m = _PINNED.match(line)
        if m:
            keep = canonicalize_name(m.group(1)) not in base
        elif line and not line[0].isspace():
            keep = False  # a comment or an option line
        if keep:
            out.append(line)
    return "\n".join(out) + "\n"


def _used(folder: Path) -> None:
    """Mark a layer used now (its folder's mtime), so a server start keeps it (prune below)."""
    try:
        os.utime(folder)
    except OSError:  # not ours to touch: a shared layer of another uid is kept by its age alone
        pass


def release_private(data_dir: Path) -> list[str]:
    """Remove this kernel's private layers (behind the sandbox: <lock>-<this process's suffix>), when
    it stops: nobody else can use them. Returns the names removed."""
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(envs_dir(data_dir)) if n.endswith(_PRIVATE_SUFFIX)]
    except OSError:
        return removed
    for name in names:
        if _remove(envs_dir(data_dir) / name):
            removed.append(name)
    return removed


def prune(data_dir: Path, keep_days: float) -> list[str]:
    """At the server's start: remove layers (shared or private) not used for keep_days, and builds
    left half done by a kernel that died. Returns the names removed; a layer it may not remove stays."""
    import time

    root = envs_dir(data_dir)
    try:
        names = os.listdir(root)
    except OSError:
        return []
    now, removed = time.time(), []
    for name in names:
        path = root / name
        try:
            age = now - os.lstat(path).st_mtime
        except OSError:
            continue
        stale = LAYER_NAME.match(name) and age > keep_days * 86400
        if (stale or (name.startswith(".build-") and age > 86400)) and _remove(path):
            removed.append(name)
    return removed


def _remove(folder: Path) -> bool:
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        if os.geteuid() != 0:  # root needs no write bit, and chmods nothing a kernel could swap for a link
            _writable(folder)
        shutil.rmtree(folder)  # by descriptors: a link swapped in is removed, never followed
    except OSError:
        return False
    return True


def _read_only(folder: Path) -> None:
    for dirpath, _dirs, filenames in os.walk(folder):
        for name in filenames:
            p = Path(dirpath, name)
            p.chmod(p.stat().st_mode & 0o555)
    for dirpath, _dirs, _files in os.walk(folder, topdown=False):
        Path(dirpath).chmod(0o555)


def _writable(folder: Path) -> None:
    for dirpath, _dirs, _files in os.walk(folder):  # os.walk follows no link to a folder
        Path(dirpath).chmod(0o755)


def load_state(cache_dir: Path) -> dict[str, Any]:
    """The requirements and lock hash a session of this notebook last built ({} when none)."""
    try:
        data = json.loads((cache_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    reqs = data.get("requirements")
    if not isinstance(reqs, list) or not all(isinstance(r, str) for r in reqs):
        return {}
    return {"requirements": list(reqs), "lock_hash": str(data.get("lock_hash") or "")}


def save_state(cache_dir: Path, requirements: list[str], lock_hash: str) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir / f".{STATE_FILE}.{uuid.uuid4().hex[:8]}"
    tmp.write_text(json.dumps({"requirements": requirements, "lock_hash": lock_hash}), encoding="utf-8")
    tmp.replace(cache_dir / STATE_FILE)


class NotebookEnv:
    """One session's view of its notebook's environment: the requirements, their layer, changes.

    A change builds first and is kept only when the build succeeds, so a failed `%pip install`
    leaves the previous environment (and the worker running in it) as it was.
    """

    def __init__(self, cfg: Mapping[str, Any], data_dir: Path, cache_dir: Path,
                 preset: Mapping[str, Any] | None = None, server: Callable[[str], str] | None = None) -> None:
        """preset: the notebook's stored environment (the server's or the notebook file's), which wins
        over what this session's cache last built; None: the cache's (a kernel without a store)."""
        self.cache_dir = cache_dir
        self.builder = Builder(cfg, data_dir, cache_dir / ".uv-cache", server)
        state = dict(preset) if preset is not None else load_state(cache_dir)
        self.requirements: list[str] = state.get("requirements", [])
        self.lock_hash: str = state.get("lock_hash", "")
        self._layer: Layer | None = None if self.requirements else Layer(None, "", {})

    def layer(self) -> Layer:
        """The current layer; a new kernel of a notebook with requirements finds it by its lock hash
        (built again only when the data dir lost it)."""
        if self._layer is None:
            self._layer = (self.builder.cached(self.lock_hash) if self.lock_hash else None) \
                or self.builder.build(self.requirements)
            self.lock_hash = self._layer.lock_hash
        return self._layer

    def change(self, requirements: list[str]) -> Layer:
        layer = self.builder.build(requirements)  # raises EnvError: nothing below happens
        self.requirements, self.lock_hash, self._layer = list(requirements), layer.lock_hash, layer
        save_state(self.cache_dir, self.requirements, self.lock_hash)
        return layer
