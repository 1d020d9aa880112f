"""Settings, each declared once as a typed field of `Config`: default, help, CONSOLE_* override.

`SETTINGS` lists them in declaration order (name, default, help, environment variable). The
README's settings table is checked against it by tests/test_docs.py, so add a setting here and
to the README together.
"""
from __future__ import annotations

import dataclasses
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


# Not a setting: a kernel process reads its server's resolved settings (JSON) from this variable.
KERNEL_CONFIG_ENV = "CONSOLE_KERNEL_CONFIG"
# The server-private part of the data dir, and what lives there (see prepare_data_dir).
PRIVATE_DIR_NAME = "server"
DATABASE_FILE = "console.db"
SECRET_KEY_FILE = "secret_key"


def _bool(text: str) -> bool:
    return text.strip().lower() in {"1", "true", "yes", "on"}


def _paths(text: str) -> list[str]:
    return [p for p in text.split(os.pathsep) if p]


SANDBOX_MODES = ("auto", "on", "off")


def _sandbox_mode(text: str) -> str:
    mode = text.strip().lower()
    if mode not in SANDBOX_MODES:
        raise ValueError(f"expected one of {', '.join(SANDBOX_MODES)}")
    return mode


RAY_CLUSTER_MODES = ("session", "shared")


def _ray_clusters(text: str) -> str:
    mode = text.strip().lower()
    if mode not in RAY_CLUSTER_MODES:
        raise ValueError(f"expected one of {', '.join(RAY_CLUSTER_MODES)}")
    return mode


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """'4G', '512MiB', '1073741824' -> bytes (binary units, as cgroups and free(1) count)."""
    m = _SIZE.match(str(text))
    if m is None:
        raise ValueError(f"expected a size such as 4G, 512M or a number of bytes, not {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def parse_size_or_percent(text: str) -> str:
    """A setting's value kept as written once it parses: '70%' or a size."""
    value = str(text).strip()
    if value.endswith("%"):
        share = float(value[:-1])
        if not 0 < share <= 100:
            raise ValueError(f"a share of memory must be above 0% and at most 100%, not {value}")
        return value
    parse_size(value)
    return value


def _size(text: str) -> str:
    parse_size(text)  # refused here, with the reason, rather than when a kernel starts
    return text.strip()


def _size_or_share(text: str) -> str:
    return parse_size_or_percent(text)


SQL_ENGINES = ("auto", "local", "cluster")


def _sql_engine(text: str) -> str:
    engine = text.strip().lower()
    if engine not in SQL_ENGINES:
        raise ValueError(f"expected one of {', '.join(SQL_ENGINES)}")
    return engine


def _http_url(text: str) -> str:
    """An http(s) URL with a host, refused at start rather than at the first event."""
    from urllib.parse import urlsplit

    url = text.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL with a host")
    return url


def _setting(default: Any, help: str, parse: Callable[[str], Any] = str) -> Any:
    """A Config field: its default, its help (the README's text) and how its env value is parsed."""
    meta = {"help": help, "parse": parse}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Config(Mapping[str, Any]):
    """The resolved settings, read-only. Attributes by setting name (cfg.PORT), plus derived paths.

    It also reads as a mapping of name -> value, so `{**cfg, "PORT": 0}` gives overrides for
    another Config and `dict(cfg)` its JSON for a kernel process.
    """

    DATA_DIR: str = _setting(
        "./console-data", "Folder for the lake, session caches and Ray's temp dir, and (in its server/ folder, "
                          "which user code cannot see) the database and the secret key.")
    DATABASE_URL: str | None = _setting(
        None, "SQLAlchemy URL of the notebook store. Default: SQLite at <data_dir>/server/console.db. "
              "Kernels never get it.")
    HOST: str = _setting("127.0.0.1", "Address the web server listens on.")
    PORT: int = _setting(5000, "Port the web server listens on.", int)
    SECRET_KEY: str | None = _setting(
        None, "Key that signs session cookies. Default: generated once and kept in <data_dir>/server/secret_key.")
    RAY_ADDRESS: str | None = _setting(
        None, "Existing Ray cluster (ray://host:port or a GCS host:port). Default: an embedded head on 127.0.0.1.")
    RAY_AUTH_TOKEN_FILE: str | None = _setting(
        None, "File holding the token of an existing cluster (CONSOLE_RAY_ADDRESS) that runs Ray's token "
              "authentication (RAY_AUTH_MODE=token). Kernels and the nodes the server joins get the token, never "
              "the file. The embedded head always has a token of its own.")
    RAY_CLIENT_PORT: int = _setting(
        10001, "Ray Client port of the embedded head (the seed connects to 127.0.0.1:10001).", int)
    RAY_NUM_CPUS: int | None = _setting(None, "CPUs the embedded Ray head offers. Default: all of this machine's.", int)
    MAX_BODY_BYTES: int = _setting(16 * 1024 * 1024, "Largest request body the API accepts.", int)
    UPLOAD_MAX_BYTES: int = _setting(
        256 * 1024 * 1024, "Largest file the data panel uploads into the lake (CSV, JSON, Parquet, Excel).", int)
    KERNEL_IDLE_SECONDS: int = _setting(
        3600, "An idle kernel is stopped after this many seconds (never while it runs something).", int)
    OUTPUT_INLINE_BYTES: int = _setting(
        256 * 1024, "Output kept inline per cell run (head and tail); the rest is behind a download link.", int)
    RESULT_ROWS: int = _setting(100, "Rows of a result table sent to the browser and stored with the run.", int)
    HISTORY_SETTLE_SECONDS: float = _setting(
        30.0, "A burst of edits becomes one revision in the history once the notebook has been idle this many "
              "seconds (runs and named versions make one at once).", float)
    COEDIT_SAVE_SECONDS: float = _setting(
        1.0, "A notebook being edited live is stored this long after its last keystroke (and at least "
             "every 5 seconds while typing goes on).", float)
    DOC_MAX_BYTES: int = _setting(
        8 * 1024 * 1024, "Largest live co-editing document: its encoded size plus 200 bytes per Yjs item (what "
                         "it costs the server's memory); an edit past it is refused.", int)
    RESULT_KEEP_BYTES: int = _setting(
        256 * 1024 * 1024, "Memory a kernel keeps for its cells' whole results (sort, paging, download); "
                           "older results beyond it move to the session's cache folder.", int)
    SQL_ENGINE: str = _setting(
        "auto", "Where a select runs unless the session sets sql.engine: local (DuckDB in the kernel), cluster "
                "(Daft on the session's Ray cluster), or auto (the cluster only for big inputs on two or more "
                "nodes; docs/cluster-sql.md).", _sql_engine)
    SQL_CLUSTER_TIMEOUT_SECONDS: float = _setting(
        600.0, "A select on the cluster that runs longer is cancelled and fails (a query waiting for CPUs "
               "that other jobs hold never hangs the notebook).", float)
    PIP_INDEX_URL: str | None = _setting(
        None, "Package index a notebook's `%pip install` resolves against (uv's --index-url); `none`: no index, "
              "only CONSOLE_PIP_FIND_LINKS. Default: this machine's pip configuration.")
    PIP_FIND_LINKS: str | None = _setting(
        None, "Folders or URLs of wheels for `%pip install` (uv's --find-links), separated by spaces: a local "
              "wheelhouse. Default: this machine's pip configuration's find-links.")
    PIP_TIMEOUT_SECONDS: float = _setting(
        300.0, "A notebook environment's build (resolve and install) that runs longer is stopped, and the cell "
               "says so; the previous environment stays.", float)
    ENV_KEEP_DAYS: float = _setting(
        14.0, "A notebook environment's layer (console/kernel/envs.py) that no kernel used for this many days is "
              "removed when the server starts; a later kernel of its notebook builds it again.", float)
    PIP_MAX_SIZE: str = _setting(
        "4G", "Largest layer a notebook environment may add to the base (its installed files); a bigger one is "
              "removed and the cell says so; the previous environment stays.", _size)
    SINGLE_USER: bool = _setting(
        False, "Skip login: every request is the local admin. Honoured only when HOST is a loopback address; "
               "`make run` turns it on.", _bool)
    DATA_ROOTS: list[str] = _setting([], "Folders that load/save may touch, separated by ':'. Default: no limit.",
                                     _paths)
    MARKDOWN_REMOTE_IMAGES: bool = _setting(
        False, "Let Markdown cells show images from other sites (each view then tells that site who looked).", _bool)
    WEBHOOK_PRIVATE: bool = _setting(
        False, "Let job webhooks call loopback, private and link-local addresses (this machine, the internal "
               "network). Off: a webhook that names or resolves to one is refused.", _bool)
    OPENLINEAGE_URL: str | None = _setting(
        None, "OpenLineage receiver (Marquez, a lineage catalog) the server sends a run event to for every stored "
              "run: START, then COMPLETE, FAIL or ABORT with the tables and files it read and wrote "
              "(docs/lineage.md). A URL without a path posts to its /api/v1/lineage. Unset: no events.", _http_url)
    OPENLINEAGE_NAMESPACE: str = _setting(
        "mlsql-console", "The OpenLineage job namespace of this server's runs (each cell of a notebook is a job).")

    SANDBOX: str = _setting(
        "auto", "Run kernels, their Python workers and the embedded Ray head in a bubblewrap sandbox that cannot "
                "see the server's files: on, off, or auto (on where bwrap works). Without it a login-mode server "
                "refuses to start unless this is off.", _sandbox_mode)
    SESSION_MEMORY: str = _setting(
        "8G", "Memory one kernel session (its kernel, Python workers and, behind the sandbox, its own Ray "
              "cluster) may use; past it the session's largest process is stopped and the cell says so.", _size)
    SESSION_PROCESSES: int = _setting(
        256, "Processes and threads one kernel session may run at once; past it no new one starts and the "
             "cell says so.", int)
    SESSION_SHM: str = _setting(
        "1G", "Size of a sandboxed session's private /dev/shm (it also counts against CONSOLE_SESSION_MEMORY).", _size)
    RAY_MEMORY: str = _setting(
        "70%", "Memory the embedded Ray head and all its workers may use together (each session's own head, "
               "with CONSOLE_RAY_CLUSTERS=session): a size or a share of this machine's memory.", _size_or_share)
    RAY_CLUSTERS: str = _setting(
        "session", "Which Ray cluster a sandboxed session's code runs on: session (a head of its own, under the "
                   "session's uid and token, started at its first Ray cell and stopped with the session: no "
                   "session reaches another's actors, objects or logs) or shared (one embedded head per data dir, "
                   "one trust zone for every account). Without the sandbox the head is always shared.",
        _ray_clusters)
    RAY_CLUSTER_MAP: str | None = _setting(
        None, "JSON file mapping users to Ray clusters of their own (each a ray:// address and an optional "
              "token file), so each team runs on its own cluster: a notebook runs on its owner's "
              "(docs/security.md). Users it does not name run as CONSOLE_RAY_ADDRESS says.")
    RAY_POOL: int = _setting(
        1, "Session Ray heads kept started before any session asks (CONSOLE_RAY_CLUSTERS=session, behind the "
           "sandbox), each with a session's wall of its own: a kernel that starts takes one, so its first Ray "
           "cell finds its head up. Each idle one holds a head's memory. 0: none (each head starts at its "
           "session's first Ray cell).", int)
    SESSION_OBJECT_STORE: str = _setting(
        "512M", "Object store of a session's own Ray cluster (CONSOLE_RAY_CLUSTERS=session), held in a private "
                "/dev/shm of that size.", _size)
    SESSIONS_PER_USER: int = _setting(
        8, "Kernels one user may have running at once; one more is refused, naming the running ones. 0: no "
           "cap.", int)
    SANDBOX_UID_BASE: int = _setting(
        0, "First of the ids sandboxes run as when the server is root: the namespace holder, the Ray zone, "
           "the members group, the hand-off group, then one uid per kernel session from base+16. 0: a block of "
           "8192 ids from 300000 of this data dir's own, so servers on one machine share none (docs/security.md).",
        int)

    @property
    def data_dir(self) -> Path:
        return Path(self.DATA_DIR).resolve()

    @property
    def private_dir(self) -> Path:
        """The server's own folder: the database and the secret key. Sandboxed user code never sees it."""
        return self.data_dir / PRIVATE_DIR_NAME

    @property
    def database_url(self) -> str:
        return self.DATABASE_URL or f"sqlite:///{self.private_dir / DATABASE_FILE}"

    # Mapping: read-only access by name.
    def __getitem__(self, name: str) -> Any:
        if name not in _NAMES:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(_NAMES)

    def __len__(self) -> int:
        return len(_NAMES)


@dataclass(frozen=True)
class Setting:
    """One setting as the README documents it."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any]

    @property
    def env(self) -> str:
        return f"CONSOLE_{self.name}"


def _declared() -> list[Setting]:
    out = []
    for f in dataclasses.fields(Config):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        out.append(Setting(f.name, default, f.metadata["help"], f.metadata["parse"]))
    return out


SETTINGS: list[Setting] = _declared()
_NAMES: tuple[str, ...] = tuple(s.name for s in SETTINGS)


def load_config(overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then CONSOLE_* environment variables, then explicit overrides (tests, CLI flags).

    An override of None keeps the value below it (a CLI flag that was not given).
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for s in SETTINGS:
        if s.env in env and env[s.env] != "":
            try:
                values[s.name] = s.parse(env[s.env])
            except ValueError as exc:
                raise ValueError(f"{s.env}={env[s.env]!r} is not valid: {exc}") from exc
    for key, value in (overrides or {}).items():
        if key not in _NAMES:
            raise KeyError(f"unknown setting {key!r}")
        if value is not None:
            values[key] = value
    return Config(**values)


def ensure_secret_key(cfg: Config) -> str:
    """The configured secret key, or one generated once and kept in the private folder."""
    if cfg.SECRET_KEY:
        return cfg.SECRET_KEY
    path = cfg.private_dir / SECRET_KEY_FILE
    if not path.exists():
        prepare_data_dir(cfg)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    return path.read_text().strip()


def prepare_data_dir(cfg: Config) -> list[str]:
    """Make the data dir and its private folder (0700), moving a database and key of the old layout in.

    Before the split the database and the cookie key sat in the data dir itself, where user code
    could read them. They are moved (never copied, so no readable copy stays behind); when the
    private folder already has its own, the old file is still moved out of sight, renamed
    `*.stale-<time>`. Returns what was moved, for the log.
    """
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    private = cfg.private_dir
    private.mkdir(mode=0o700, exist_ok=True)
    os.chmod(private, 0o700)
    moved: list[str] = []
    names = [SECRET_KEY_FILE] if not cfg.SECRET_KEY else []
    if not cfg.DATABASE_URL:  # only the default SQLite store lives in the data dir
        names += [DATABASE_FILE + suffix for suffix in ("", "-wal", "-shm", "-journal")]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for name in names:
        old = cfg.data_dir / name
        if not old.is_file():
            continue
        new = private / name
        if new.exists():
            new = private / f"{name}.stale-{stamp}"
        os.replace(old, new)  # the same file system: the private folder is inside the data dir
        os.chmod(new, 0o600)
        moved.append(f"{old} -> {new}")
    return moved
