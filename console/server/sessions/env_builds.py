"""Notebook environment layers built by the server and sealed, so sessions with the same lock share one
(issue 31): the answer to a sandboxed kernel's environment_build.

A layer a kernel built itself would be owned by the kernel's leased uid: that session, or a later one
leased the same uid, could make its files writable again and put code into every notebook with the
same lock. So behind the sandbox a kernel only resolves (uv pip compile, in its own sandbox) and sends
the lock; the server then

1. names the layer by the hash of the lock text it received (console/envlayers/build.py lock_name), so a
   name always stands for what that lock installs (uv checks every wheel against the lock's hashes,
   --require-hashes);
2. installs it with `uv pip install --target --no-deps --require-hashes` in a sandbox of its own:
   a one-off uid leased for the build and in no group (not the members', so it can write nothing
   of theirs), the session's cgroups (its memory and process limits), CONSOLE_PIP_TIMEOUT_SECONDS,
   a fresh uv cache, and only uv in it. Its folder is a session cache folder of its own, which no
   kernel's sandbox shows (each sees only its own cache folder);
3. seals it: copies the installed tree (plain files and folders only: a link or anything else fails
   the build) into a folder of its own, read-only, so whatever the build's processes still hold
   open changes nothing; then renames it into place, <data_dir>/envs/<lock hash>, atomically.

A kernel uses a shared layer only if it is sealed (envlayers.layers.is_sealed: the data dir
owner's, not writable), so a folder of that name that a member's kernel made first is never used; the server
replaces it.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from console.cluster import identity, sandbox
from console.cluster.head import short_temp_dir
from console.envlayers.build import (EnvError, base_packages, check_size, install_argv, lock_name, lock_packages,
                                     run_uv, timeout_note, uv_env, uv_words, without_base)
from console.envlayers.layers import envs_dir, is_sealed, mark_used, read_only, remove_layer
from console.wire.kernel import EnvironmentBuild, EnvironmentBuilt

if TYPE_CHECKING:
    from console.config import Config
    from console.server.sessions.kernel_process import KernelProcess

log = logging.getLogger(__name__)
_guard = threading.Lock()
_building: dict[str, threading.Lock] = {}  # lock hash -> held while one build of it runs
_asking: set[str] = set()  # kernel sessions with a build under way: one each (a kernel runs a member's code)


def answer(cfg: Config, kp: KernelProcess, msg: EnvironmentBuild) -> None:
    """Build (or find) the layer of msg.lock and answer the kernel; run on a thread of its own."""
    with _guard:
        busy = kp.session_id in _asking
        _asking.add(kp.session_id)
    if busy:
        kp.send(EnvironmentBuilt(msg.request_id, error="another environment build of this session is under way"))
        return
    try:
        cgroups = kp.wall.wall.cgroups if kp.wall is not None else ()
        reply = EnvironmentBuilt(msg.request_id, lock_hash=build(cfg, msg.lock, cgroups))
    except EnvError as exc:
        reply = EnvironmentBuilt(msg.request_id, error=str(exc)[:65536])
    except Exception:  # a fault of ours: the kernel's cell says so, the traceback is in our log
        log.exception("building an environment for kernel %s failed", kp.session_id)
        reply = EnvironmentBuilt(msg.request_id, error="the server could not build the environment (see its log)")
    finally:
        with _guard:
            _asking.discard(kp.session_id)
    kp.send(reply)


def build(cfg: Config, lock: str, cgroups: tuple[Any, ...] = ()) -> str:
    """The sealed layer of `lock` under <data_dir>/envs, built when missing; its lock hash. Raises EnvError."""
    lock_hash = lock_name(lock)
    final = envs_dir(cfg.data_dir) / lock_hash
    with _guard:
        one = _building.setdefault(lock_hash, threading.Lock())
    with one:
        if is_sealed(final, cfg.data_dir):
            mark_used(final)
            return lock_hash
        base = base_packages()
        own = {n: v for n, v in lock_packages(lock).items() if n not in base}
        if not own:
            raise EnvError("the lock adds nothing to the base environment")
        layer_lock = without_base(lock, base)
        site = _install(cfg, layer_lock, cgroups)
        try:
            _seal(cfg, site, final, lock_hash, own, layer_lock)
        finally:
            shutil.rmtree(site.parent, ignore_errors=True)
    return lock_hash


def _install(cfg: Config, layer_lock: str, cgroups: tuple[Any, ...]) -> Path:
    """uv in a sandbox of its own, under a one-off uid: the installed `site` folder (in the build's folder)."""
    build_id = f"envbuild-{uuid.uuid4().hex[:16]}"
    work = sandbox.session_cache_dir(cfg.data_dir, build_id)
    lease = identity.lease_session(cfg, cfg.private_dir) if identity.available() else None
    try:
        # In no group: the members' folders (lake, envs, ray) are not the build's to write.
        who = identity.Identity(lease.uid, lease.uid, (), "an environment build") if lease else None
        work.mkdir(parents=True, exist_ok=False)
        (work / "lock.txt").write_text(layer_lock, encoding="utf-8")
        os.chmod(work / "lock.txt", 0o444)
        if who is not None:
            identity.own_folder(work, who.uid, who.gid, 0o700)
        argv = install_argv(work / "lock.txt", work / "site", cfg)
        env = uv_env(work / ".uv-cache", sandbox.clean_env(os.environ), HOME=str(work))  # the allow-listed part only
        wall = sandbox.Wall(identity=who, cgroups=cgroups)
        wrapped, fds = sandbox.wrap(cfg, argv, ray_temp_dir=short_temp_dir(cfg.data_dir), session_id=build_id,
                                    cwd=str(work), wall=wall)
        timeout = float(cfg.PIP_TIMEOUT_SECONDS)
        done = run_uv(wrapped, timeout, timeout_note(timeout), env, pass_fds=fds)
        if done.returncode != 0:
            raise EnvError(f"uv could not install the environment:\n{uv_words(done.stderr)}")
        return work / "site"
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        if lease is not None:
            lease.release()


def _seal(cfg: Config, site: Path, final: Path, lock_hash: str, own: dict[str, str], layer_lock: str) -> None:
    """Copy the build's tree into a folder of the server's, read-only, and rename it to `final`."""
    staging = final.parent / f".seal-{uuid.uuid4().hex[:12]}"
    staging.mkdir(mode=0o700)
    try:
        _copy_tree(site, staging / "site")
        check_size(cfg, staging)
        (staging / "lock.txt").write_text(layer_lock, encoding="utf-8")
        (staging / "meta.json").write_text(json.dumps({"lock_hash": lock_hash, "packages": own}), encoding="utf-8")
        read_only(staging)
        for _attempt in range(3):
            if final.is_symlink() or final.exists():
                # A folder of that name that is not sealed: a member's kernel made it (envs is the
                # members' folder, sticky); it is never used, and the server's replaces it.
                if final.is_dir() and not final.is_symlink():
                    remove_layer(final)
                else:
                    final.unlink()
            try:
                staging.rename(final)
                return
            except OSError:
                if is_sealed(final, cfg.data_dir):
                    return  # another build of the same lock won
        raise EnvError(f"the layer {lock_hash} could not be put in place")
    finally:
        if staging.exists():
            remove_layer(staging)


def _copy_tree(src: Path, dst: Path) -> None:
    """Plain files and folders only, each opened without following a link, relative to its opened
    parent (a build process still running cannot swap a folder for a link to elsewhere midway);
    anything else fails the build."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    top = os.open(src, flags | os.O_DIRECTORY)
    try:
        _copy_from(top, dst)
    finally:
        os.close(top)


def _copy_from(dir_fd: int, dst: Path) -> None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    dst.mkdir(mode=0o755)
    for name in os.listdir(dir_fd):
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        except OSError as exc:  # a link (ELOOP), or gone
            raise EnvError(f"the built environment holds {name!r}, which is not a file or a folder "
                           f"({exc.strerror})") from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                _copy_from(fd, dst / name)
            elif stat.S_ISREG(st.st_mode):
                with open(dst / name, "xb") as out:
                    while chunk := os.read(fd, 1 << 20):
                        out.write(chunk)
                os.chmod(dst / name, 0o755 if st.st_mode & 0o111 else 0o644)
            else:
                raise EnvError(f"the built environment holds {name!r}, which is not a file or a folder")
        finally:
            os.close(fd)
