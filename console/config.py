"""Settings, each declared once: name, default, help and its CONSOLE_* environment override.

The README's settings table is checked against `SETTINGS` by tests/test_docs.py, so add a
setting here and to the README together.
"""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    @property
    def env(self) -> str:
        return f"CONSOLE_{self.name}"


def _bool(text: str) -> bool:
    return text.strip().lower() in {"1", "true", "yes", "on"}


def _paths(text: str) -> list[str]:
    return [p for p in text.split(os.pathsep) if p]


SETTINGS: list[Setting] = [
    Setting("DATA_DIR", "./console-data", "Folder for the database, the lake, session caches and Ray's temp dir."),
    Setting("DATABASE_URL", None, "SQLAlchemy URL of the notebook store. Default: SQLite at <data_dir>/console.db."),
    Setting("HOST", "127.0.0.1", "Address the web server listens on."),
    Setting("PORT", 5000, "Port the web server listens on.", int),
    Setting("SECRET_KEY", None, "Key that signs session cookies. Default: generated once and kept in <data_dir>/secret_key."),
    Setting("RAY_ADDRESS", None, "Existing Ray cluster (ray://host:port or a GCS host:port). Default: an embedded head on 127.0.0.1."),
    Setting("RAY_CLIENT_PORT", 10001, "Ray Client port of the embedded head (the seed connects to 127.0.0.1:10001).", int),
    Setting("RAY_NUM_CPUS", None, "CPUs the embedded Ray head offers. Default: all of this machine's.", int),
    Setting("MAX_BODY_BYTES", 16 * 1024 * 1024, "Largest request body the API accepts.", int),
    Setting("KERNEL_IDLE_SECONDS", 3600, "An idle kernel is stopped after this many seconds (never while it runs something).", int),
    Setting("OUTPUT_INLINE_BYTES", 256 * 1024, "Output kept inline per cell run (head and tail); the rest is behind a download link.", int),
    Setting("RESULT_ROWS", 100, "Rows of a result table sent to the browser and stored with the run.", int),
    Setting("SINGLE_USER", False, "Skip login: every request is the local admin. Honoured only when HOST is a loopback address; `make run` turns it on.", _bool),
    Setting("DATA_ROOTS", [], "Folders that load/save may touch, separated by ':'. Default: no limit.", _paths),
]

_BY_NAME = {s.name: s for s in SETTINGS}


class Config(dict):
    """Resolved settings keyed by name; attribute access for convenience (cfg.DATA_DIR)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    @property
    def data_dir(self) -> Path:
        return Path(self["DATA_DIR"]).resolve()

    @property
    def database_url(self) -> str:
        return self["DATABASE_URL"] or f"sqlite:///{self.data_dir / 'console.db'}"


def load_config(overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then CONSOLE_* environment variables, then explicit overrides (tests, CLI flags)."""
    env = os.environ if environ is None else environ
    cfg = Config()
    for s in SETTINGS:
        value = s.default
        if s.env in env and env[s.env] != "":
            try:
                value = s.parse(env[s.env])
            except ValueError as exc:
                raise ValueError(f"{s.env}={env[s.env]!r} is not valid: {exc}") from exc
        cfg[s.name] = value
    for key, value in (overrides or {}).items():
        if key not in _BY_NAME:
            raise KeyError(f"unknown setting {key!r}")
        if value is not None:
            cfg[key] = value
    return cfg


def ensure_secret_key(cfg: Config) -> str:
    """Return the configured secret key, or one generated once and kept in the data dir."""
    if cfg["SECRET_KEY"]:
        return cfg["SECRET_KEY"]
    path = cfg.data_dir / "secret_key"
    if not path.exists():
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    cfg["SECRET_KEY"] = path.read_text().strip()
    return cfg["SECRET_KEY"]
