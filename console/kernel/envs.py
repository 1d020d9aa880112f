"""A notebook's Python environment: its requirements, resolved by uv to a lock, installed as a layer.

A layer is a folder `<data_dir>/envs/<lock hash>` that `uv pip install --target` filled with the
packages the lock adds to the base environment (the product's own venv). It goes on the cell
worker's PYTHONPATH, in front of the base's site-packages. Why a --target folder and not a venv
with system site packages: the base is itself a venv, and a venv made from it with
--system-site-packages sees the interpreter's system packages, not the base venv's (tensorflow,
ray, pyarrow would be missing); a plain folder on PYTHONPATH layers on whatever interpreter the
worker runs, and the same folder can be handed to Ray actors through runtime_env's env_vars.

Base packages are never copied or replaced (console/envlayers/build.py, which the server's
builds share). A layer is named by the hash of its lock (exact versions and the artifacts'
hashes), so every session whose requirements lock the same shares one folder; behind the sandbox
the server builds and seals it (console/server/sessions/env_builds.py). A build writes a temporary folder
and renames it into place, so a reader never sees half a layer.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from packaging.utils import canonicalize_name

from console.envlayers.build import (EnvError, base_packages, check_base, check_size, index_args, install_argv,
                                     lock_name, lock_packages, parse_requirement, run_uv, timeout_note, uv_binary,
                                     uv_env, uv_words, without_base)
from console.envlayers.layers import envs_dir, is_sealed, mark_used, read_only, remove_layer, writable

STATE_FILE = "environment.json"  # in the session's cache folder: the notebook's requirements between kernels
# Behind the sandbox, this kernel's layers are named <lock hash>-<this>: removed when the kernel stops.
_PRIVATE_SUFFIX = f"-{uuid.uuid4().hex[:16]}"
# EnvError and parse_requirement are the kernel's words too: commands and tests take them from here.
__all__ = ["Builder", "EnvError", "Layer", "NotebookEnv", "merge", "parse_requirement", "release_private", "remove",
           "site_path"]


@dataclass(frozen=True)
class Layer:
    """A built environment: where it is and what it holds."""

    path: Path | None  # None: the requirements add nothing to the base (no folder, nothing on PYTHONPATH)
    lock_hash: str
    packages: dict[str, str] = field(default_factory=dict)  # canonical name -> version, the layer's own


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
        limit = timeout_note(self.timeout)
        env = uv_env(self.uv_cache, os.environ)
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="env-resolve-") as tmp:
            req_in, constraints = Path(tmp) / "requirements.in", Path(tmp) / "base.txt"
            req_in.write_text("\n".join(requirements) + "\n", encoding="utf-8")
            constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(base.items())), encoding="utf-8")
            done = run_uv([uv_binary(), "pip", "compile", str(req_in), "-c", str(constraints), "--generate-hashes",
                           "--no-header", "--no-annotate", "--quiet", "--python", sys.executable,
                           *index_args(self.cfg)], deadline - time.monotonic(), limit, env)
        if done.returncode != 0:
            raise EnvError(self._unresolved(requirements, uv_words(done.stderr)))
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
            mark_used(final)
            return Layer(final, lock_hash, own)
        staging = self.root / f".build-{uuid.uuid4().hex[:12]}"
        try:
            staging.mkdir(parents=True)
            layer_lock = staging / "lock.txt"
            layer_lock.write_text(without_base(lock, base), encoding="utf-8")
            done = run_uv(install_argv(layer_lock, staging / "site", self.cfg), deadline - time.monotonic(), limit,
                          env)
            if done.returncode != 0:
                raise EnvError(f"uv could not install the environment:\n{uv_words(done.stderr)}")
            check_size(self.cfg, staging)
            (staging / "requirements.in").write_text("\n".join(requirements) + "\n", encoding="utf-8")
            (staging / "meta.json").write_text(json.dumps({"lock_hash": lock_hash, "packages": own}), encoding="utf-8")
            read_only(staging)
            try:
                staging.rename(final)  # atomic: another session that built the same lock first wins
            except OSError:
                if not (final / "lock.txt").is_file():
                    raise
        finally:
            if staging.exists():
                writable(staging)
                shutil.rmtree(staging, ignore_errors=True)
        return Layer(final, lock_hash, own)

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
        mark_used(folder)
        return Layer(folder, lock_hash, {str(k): str(v) for k, v in dict(meta.get("packages", {})).items()})


def site_path(layer: Layer | None) -> str | None:
    """The folder to put on PYTHONPATH for a layer, or None."""
    return str(layer.path / "site") if layer is not None and layer.path is not None else None


def release_private(data_dir: Path) -> list[str]:
    """Remove this kernel's private layers (behind the sandbox: <lock>-<this process's suffix>), when
    it stops: nobody else can use them. Returns the names removed."""
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(envs_dir(data_dir)) if n.endswith(_PRIVATE_SUFFIX)]
    except OSError:
        return removed
    for name in names:
        if remove_layer(envs_dir(data_dir) / name):
            removed.append(name)
    return removed


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
