"""A notebook's environment between the store and its kernels (issue 31): handed to a kernel at its
start, kept when the kernel's `%pip` changed it."""
from __future__ import annotations

import json
import logging

from console.config import Config
from console.wire import environment as envspec
from console.protocols import RunStore
from console.server.sessions.kernel_session import KernelSession
from console.store.errors import Invalid, NotFound
from console.wire.kernel import EnvironmentChanged

log = logging.getLogger(__name__)


def prune_layers(cfg: Config) -> None:
    """At the server's start: layers no kernel used for CONSOLE_ENV_KEEP_DAYS go (console/envlayers/layers.py)."""
    from console.envlayers.layers import prune

    removed = prune(cfg.data_dir, float(cfg.ENV_KEEP_DAYS))
    if removed:
        log.info("removed %d notebook environment layers unused for %g days", len(removed), cfg.ENV_KEEP_DAYS)


def start_env(store: RunStore, session: KernelSession) -> dict[str, str]:
    """The notebook's stored requirements for its new kernel (any session, lane or job run), so its
    first Python cell runs in the notebook's layer (console/kernel/envs.py) without %pip again."""
    try:
        env = store.get_environment(session.notebook_id)
    except NotFound:
        return {}
    # Sent when empty too: the session's cache folder may remember a list the notebook has since
    # dropped (a job's lane after an uninstall in the page), and the store's list wins.
    return {envspec.START_ENV: json.dumps(env)}


def save(store: RunStore, session: KernelSession, msg: EnvironmentChanged) -> None:
    """%pip changed the list: kept with the notebook. Taken only about the kernel's current run, as
    its other run messages; checked again, since the kernel runs a member's code."""
    with session.lock:
        run = session.current
    if run is None or run.run_id != msg.run_id:
        return
    try:
        store.set_environment(session.notebook_id, {"requirements": list(msg.requirements),
                                                     "lock_hash": msg.lock_hash})
    except (Invalid, NotFound) as exc:
        log.warning("kernel %s: environment not kept: %s", session.session_id, exc)
