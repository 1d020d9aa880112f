"""Resolving a notebook's requirements with uv and installing their lock as a layer (issue 31).

The kernel resolves (`uv pip compile` against the base environment) and, with no server to ask,
installs a private layer; the server installs and seals the shared layer of a lock a sandboxed
kernel sends (console/server/sessions/env_builds.py). Both must name a lock, cut the base's packages out of
it, run uv with the same index options and limits and say uv's failure the same way, so that
code is here, below both rooms (the server may not import the kernel).

Base packages are never copied or replaced: the base's every distribution is a constraint of the
resolution (`name==version`), a requirement naming a base package at another version is refused
before uv runs, and base packages in the lock are left out of the layer.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from console.errors import UserError

_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


class EnvError(UserError):
    """The environment could not be built; the message says which requirement and why."""

    kind = "env"


def parse_requirement(text: str) -> Requirement:
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        raise EnvError(f"{text!r} is not a requirement pip understands: {exc}") from None


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


def install_argv(layer_lock: Path, target: Path, cfg: Mapping[str, Any]) -> list[str]:
    """uv installing a layer's lock into target: no dependency beyond the lock, and every artifact
    checked against the lock's hashes, so a layer named by its lock holds what that lock says."""
    return [uv_binary(), "pip", "install", "--target", str(target), "--no-deps", "--require-hashes", "--quiet",
            "--python", sys.executable, "-r", str(layer_lock), *index_args(cfg)]


def uv_env(uv_cache: Path, environ: Mapping[str, str], **more: str) -> dict[str, str]:
    """uv's environment: its cache, no progress bars or colours in what a cell shows, and no
    activated venv (--python names the interpreter; VIRTUAL_ENV would override it)."""
    env = {**environ, "UV_CACHE_DIR": str(uv_cache), "UV_NO_PROGRESS": "1", "NO_COLOR": "1", **more}
    env.pop("VIRTUAL_ENV", None)
    return env


def timeout_note(timeout: float) -> str:
    return f"the environment build stopped after {timeout:g} s (CONSOLE_PIP_TIMEOUT_SECONDS)"


def run_uv(argv: list[str], timeout: float, deadline_note: str, env: Mapping[str, str],
           pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run uv (or the sandbox wrapping it) in a process group of its own, so a build past its limit
    stops with its children. Raises EnvError(deadline_note) past the limit."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, pass_fds=pass_fds,
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


def uv_words(stderr: str) -> str:
    """uv's explanation, without its progress lines."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("Resolved ", "Using ", "warning:"))]
    return "\n".join(lines).strip() or stderr.strip()


def lock_packages(lock: str) -> dict[str, str]:
    return {canonicalize_name(m.group(1)): m.group(2) for m in map(_PINNED.match, lock.splitlines()) if m}


def lock_name(lock: str) -> str:
    """A layer's name: the hash of its lock, for this interpreter (the server and its kernels run the same)."""
    tag = f"{sys.implementation.cache_tag}-{sys.platform}"
    return hashlib.sha256((tag + "\n" + lock).encode()).hexdigest()[:24]


def without_base(lock: str, base: Mapping[str, str]) -> str:
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


def check_size(cfg: Mapping[str, Any], folder: Path) -> None:
    """Refuse a layer past CONSOLE_PIP_MAX_SIZE (checked once installed: the session's own disk
    and memory limits bound the install itself)."""
    from console.config import parse_size

    text = str(cfg.get("PIP_MAX_SIZE") or "4G")
    limit = parse_size(text)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    if size > limit:
        raise EnvError(f"the environment would add {size / 2**20:.1f} MiB to the base, over "
                       f"CONSOLE_PIP_MAX_SIZE ({text})")
