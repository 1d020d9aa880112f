"""A replay of a recorded run in the kernel (issue 32): read each input as the original run did.

The server sends the recorded inputs with the command (wire/kernel.py ReplayInputs). A delta load of a
pinned lake table reads the pinned version (time travel, `versionAsOf`), unless the statement names
its own version or range: that already reads what it says, the same at the replay as at the
original run. A plain file is read as it is now, and its facts (size, digest of its first bytes,
computed as for any run's manifest) are compared with the recorded ones: a file that changed fails
the replay, naming what changed, unless the replay was told to go on (`force`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from console.kernel.errors import CellError
from console.kernel.manifest import lake_table
from console.wire.kernel import ManifestEntry, ReplayInputs

# A load that names its own version or range reads what the source says, at the replay as at the
# original run; a pin over it would change what the cell means.
_SELF_PINNED = ("versionasof", "timestampasof", "startingversion", "endingversion")
_COMPARED = ("size", "digest", "files")


def pinned_options(pins: Mapping[str, int], shown: str, options: dict[str, str]) -> dict[str, str]:
    """The options to load table `shown` with: `versionAsOf` the pinned version when pinned."""
    version = pins.get(shown)
    if version is None or any(k.lower() in _SELF_PINNED for k in options):
        return options
    if version < 0:
        raise ValueError(f"pin for {shown} is not a delta version: {version}")
    return {**options, "versionAsOf": str(version)}


def load_options(replay: ReplayInputs | None, fmt: str, path: str, options: dict[str, str]) -> dict[str, str]:
    """A load's options: a pinned delta table of the lake read at its recorded version."""
    if replay is None or fmt.lower() != "delta" or not replay.pins:
        return options
    shown = lake_table(fmt, path)
    return pinned_options(replay.pins, shown, options) if shown else options


def check_environment(replay: ReplayInputs | None, lock_now: Callable[[], str]) -> None:
    """A replay runs in the environment the recorded run ran in, or says it cannot (unless forced).

    Only a recorded lock is compared: a run records '' also when its session had not yet built the
    notebook's environment (no Python cell had run), so '' does not tell the base apart from that.
    """
    if replay is None or replay.force or not replay.lock_hash:
        return
    now = lock_now()
    if now == replay.lock_hash:
        return
    was = f"lock {replay.lock_hash[:12]}"
    then = f"lock {now[:12]}" if now else "the base environment"
    raise CellError("data", f"the notebook's environment changed since the recorded run ({was} then, {then} now). "
                            "Replay it with force to run it in today's environment.", None, 1)


def checked(replay: ReplayInputs | None, entry: ManifestEntry) -> ManifestEntry:
    """A load's manifest entry, after comparing a plain file's facts with the recorded ones."""
    if replay is None or entry.access != "read" or replay.force:
        return entry
    for was in replay.files:
        if (was.format.lower(), was.path) != (entry.format.lower(), entry.path):
            continue
        changed = [k for k in _COMPARED if getattr(was, k) not in (None, "") and getattr(entry, k) != getattr(was, k)]
        if changed:
            raise CellError("data", f"{entry.path} changed since the recorded run: {', '.join(changed)} "
                                    "differ. Replay it with force to run it on the file as it is now.",
                            entry.line or None, 1)
    return entry


__all__ = ["check_environment", "checked", "load_options", "pinned_options"]
