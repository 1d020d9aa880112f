"""The Ray cluster cells run on: an embedded head we start and stop by PID, or an existing one.

The embedded head is a `ray start --head --block` subprocess in its own process group, so every
Ray process it spawns can be stopped by that group without `ray stop` (which kills every Ray on
the machine). Several kernel processes on one data dir share one head: its address and PID are
recorded in `<data_dir>/server/head.json` (the private folder), guarded by a file lock. The server owns stopping it.

The server also starts it, inside the sandbox (cluster/sandbox.py), when a kernel first asks: a
sandboxed kernel lives in its own PID namespace, so a head it started would die with it and its
recorded PIDs would mean nothing outside. Such a kernel asks its server over a socket the server
hands it and gets the ClusterInfo back (cluster/head_link.py).

The embedded head is closed: Ray's token authentication (RAY_AUTH_MODE=token) with a token kept
in the private folder (cluster/guard.py), handed to the head and to kernels (ClusterInfo.auth_token)
and to nobody else, so a local process without it is refused by the GCS, the raylet and the
Ray Client server alike. Sandboxed, it runs as the Ray zone's uid (cluster/identity.py) in a
cgroup of CONSOLE_RAY_MEMORY (cluster/limits.py).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Protocol

from console.cluster.guard import WORKER_PORTS, auth_token, check_ports, external_token, token_env
from console.cluster.procs import free_ports, pid_alive, port_open, process_start, stop_process_group
from console.config import PRIVATE_DIR_NAME
from console.wire.head import ClusterInfo

log = logging.getLogger(__name__)
PORT_TRIES = 3  # starts of one node: its chosen ports were taken before Ray bound them, or Ray gave up registering it

# Set on the head and inherited by everything it spawns (docs/architecture.md and docs/python-runtime.md explain them).
RAY_ENV: dict[str, str] = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_DEDUP_LOGS": "0",
    "RAY_COLOR_PREFIX": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",  # a node we start for tests or an external cluster; the embedded head: token
    # Each Ray process writes logs/events/event_<KIND>_<pid>.log, named by pid only: a cell worker
    # under one session's uid aborted (SIGABRT, "Permission denied") where another uid's process had
    # had the same pid on that node (pids wrap at 32,768 and differ per PID namespace). Only Ray's
    # dashboard reads these files, and our heads run none.
    "RAY_event_log_reporter_enabled": "0",
    # When a head's first driver connects, its raylet starts one Python worker per CPU for jobs
    # without a runtime env, and holds the driver's ray.init until they are up. Every driver of
    # ours has one (the actors' setup hook, env vars), so no actor or task of ours could use them:
    # they sat idle (82 of 240 worker processes in one suite run's kept heads) and delayed each
    # session's first cell (bench/ray_first_driver.py). Workers still start on demand.
    "RAY_prestart_worker_first_driver": "0",
    "TF_CPP_MIN_LOG_LEVEL": "2",
    "TF_ENABLE_ONEDNN_OPTS": "0",
}
# Not a setting: the descriptor of a kernel's socket to its server, which starts the head for it.
_SOCKET_PATH_MAX = 107  # AF_UNIX sun_path limit on Linux, minus the NUL
_SOCKET_SUFFIX = 75  # what Ray appends under --temp-dir: session_<date>_<pid>/sockets/plasma_store
def recorded_alive(info: "ClusterInfo") -> bool:
    """The recorded node's process still runs and is the one recorded (not a reused pid)."""
    if not info.pid or not pid_alive(info.pid):
        return False
    if info.started is not None:
        return process_start(info.pid) == info.started
    try:  # a record written before `started` was kept: it is a Ray process, or not ours
        with open(f"/proc/{info.pid}/cmdline", "rb") as fh:
            return b"ray" in fh.read()
    except OSError:
        return False


def short_temp_dir(data_dir: Path) -> Path:
    """Ray's temp dir: under the data dir unless Ray's Unix socket paths would get too long."""
    preferred = data_dir / "ray" / "tmp"
    if len(str(preferred)) + _SOCKET_SUFFIX <= _SOCKET_PATH_MAX:
        return preferred
    digest = hashlib.sha1(str(data_dir).encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / f"mlsqlray-{digest}"


def start_head(
    temp_dir: Path,
    *,
    num_cpus: int | None = None,
    client_port: int | None = 10001,
    resources: Mapping[str, float] | None = None,
    address: str | None = None,
    log_path: Path | None = None,
    timeout: float = 120.0,  # a loaded 2-core machine has taken over 60 s
    env: Mapping[str, str] | None = None,
    wrap: Callable[[list[str]], tuple[list[str], tuple[int, ...]]] | None = None,
    python: str | None = None,
    node_ip: str | None = "127.0.0.1",
    auth_token: str | None = None,
    after_start: Callable[[Path], None] | None = None,
    object_store_memory: int | None = None,
    autoscaler: bool = True,
) -> ClusterInfo:
    """Start a Ray node with `ray start --block`: a head, or with `address` a node joining one.

    Returns once the node is reachable. The process leads its own group; stop it with
    stop_process_group(info.pid). wrap: runs the command in the sandbox (it then gets only the
    sandbox's allow-listed environment). python: the interpreter the node runs, and so every
    worker it starts (Ray records the `ray start` process's own); default: this one's `ray`.
    node_ip: the address the node announces; None lets Ray pick the one that reaches the head.
    auth_token: a head with Ray's token authentication (clients without it are refused).
    after_start: called with the temp dir once the node answers (the sandbox opens Ray's session
    folders to the members group there).
    autoscaler: a head's autoscaler monitor (a Python process of ~50 MB); a head that never
    grows (a session's own) goes without it.
    """
    temp_dir.mkdir(parents=True, exist_ok=True)
    if log_path is not None:
        # Under a long data dir the temp dir is a short one elsewhere (socket paths), and the data
        # dir's own ray/ folder, which holds this log, was never made (issue 28).
        log_path.parent.mkdir(parents=True, exist_ok=True)
    else:
        # The node's own log, never one beside it: a short temp dir's parent is /tmp, where every
        # node started without a log path once appended to one file, and another node's "Ray
        # runtime started." there counted as this one's (a head taken for up that was not).
        log_path = temp_dir / "ray-start.log"
    ray_bin = str(Path(sys.executable).with_name("ray"))
    if python is not None:
        launcher = [python, "-m", "ray.scripts.scripts"]
    else:
        launcher = [ray_bin if os.path.exists(ray_bin) else "ray"]
    for attempt in range(1, PORT_TRIES + 1):
        ports = free_ports(4, avoid=(client_port,) if client_port else ())
        cmd = [*launcher, "start", "--block", "--disable-usage-stats", f"--temp-dir={temp_dir}",
               f"--min-worker-port={WORKER_PORTS[0]}", f"--max-worker-port={WORKER_PORTS[1]}",
               # fixed defaults (52365, 8080…) would collide with other clusters on this machine
               f"--dashboard-agent-listen-port={ports[0]}", f"--metrics-export-port={ports[1]}",
               f"--runtime-env-agent-port={ports[2]}"]
        if node_ip:
            cmd.append(f"--node-ip-address={node_ip}")
        if address is None:
            check_ports(client_port, {"the GCS port": ports[3], "the dashboard agent's port": ports[0],
                                      "the metrics port": ports[1], "the runtime env agent's port": ports[2]})
        gcs_port = None
        if address is None:
            gcs_port = ports[3]
            cmd += ["--head", f"--port={gcs_port}", "--include-dashboard=false"]
            if client_port:
                cmd.append(f"--ray-client-server-port={client_port}")
            if not autoscaler:
                cmd.append("--no-monitor")
        else:
            cmd.append(f"--address={address}")
        if num_cpus is not None:
            cmd.append(f"--num-cpus={num_cpus}")
        if object_store_memory is not None:
            cmd.append(f"--object-store-memory={object_store_memory}")
        if resources:
            cmd.append(f"--resources={json.dumps(dict(resources))}")
        if wrap is not None:
            from console.cluster.sandbox import clean_env

            env = clean_env(os.environ, {**RAY_ENV, **(env or {}), **token_env(auth_token)})
            cmd, fds = wrap(cmd)
        else:
            fds = ()
            env = {**os.environ, **RAY_ENV, **(env or {}), **token_env(auth_token)}
        if address is not None:  # single-machine mode refuses to join a cluster
            env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "1"
        env.pop("RAY_ADDRESS", None)  # would make `ray start --head` try to join that cluster
        out = open(log_path, "ab")
        said_from = out.seek(0, os.SEEK_END)  # the log is appended to: only this start's lines count
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=str(temp_dir.parent), pass_fds=fds)
        out.close()
        gcs_address = f"127.0.0.1:{gcs_port}" if gcs_port else address
        assert gcs_address is not None
        deadline = time.monotonic() + timeout
        started = time.time() - 1.0  # a reused temp dir holds earlier sessions' sockets
        ready = False
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if gcs_port is not None:
                # A head is up once `ray start` says so: it says it after the raylet registered with
                # the GCS. An open GCS port alone is too early: a driver connecting then found no
                # raylet ("Failed to register worker to Raylet"); the Ray Client server, checked
                # alone before, happened to start late enough.
                ready = (port_open("127.0.0.1", gcs_port) and _said_started(log_path, said_from)
                         and (not client_port or port_open("127.0.0.1", client_port)))
            else:
                # A joining node too: `ray start` says so after the node registered with the GCS,
                # which it waits for 30 s at most, and then exits with its raylet. The raylet's
                # socket alone came first: a walled session on a loaded machine was told its node
                # was up, and its cell's driver then found no raylet for 95 s (a fresh-clone run).
                ready = _node_registered(temp_dir, started) and _said_started(log_path, said_from)
            if ready:
                break
            time.sleep(0.2)
        if ready:
            break
        stop_process_group(proc.pid, grace=2.0)
        tail = _tail(log_path, said_from)
        if attempt < PORT_TRIES and _port_taken(tail):
            # The ports were free when chosen, and taken before Ray bound them (another node's
            # component, a client's own port): the same start with other free ports.
            log.warning("a Ray node's port was taken before it started; starting it on other ports")
            continue
        if attempt < PORT_TRIES and _registration_timed_out(tail):
            log.warning("a Ray node did not register with the GCS within Ray's 30 s; starting it again")
            continue
        raise RuntimeError(f"Ray node did not start (exit {proc.poll()}):\n{tail}")
    assert gcs_address is not None  # the loop ends only on a start that answered
    if after_start is not None:
        after_start(temp_dir)
    client = f"127.0.0.1:{client_port}" if (address is None and client_port) else None
    return ClusterInfo(address=gcs_address, client_address=client, pid=proc.pid, started=process_start(proc.pid),
                       temp_dir=str(temp_dir), num_cpus=num_cpus or os.cpu_count(), embedded=True,
                       auth_token=auth_token)


def _said_started(log_path: Path, offset: int) -> bool:
    try:
        with open(log_path, "rb") as fh:
            fh.seek(offset)
            return b"Ray runtime started." in fh.read()
    except OSError:
        return False


def _node_registered(temp_dir: Path, since: float) -> bool:
    # A joining node is up once its raylet has written its socket (this session's, not an earlier one's).
    for sock in temp_dir.glob("session_*/sockets/raylet"):
        try:
            if sock.stat().st_mtime >= since:
                return True
        except OSError:
            continue
    return False


def _tail(path: Path, offset: int = 0, n: int = 4000) -> str:
    """The last n bytes the log got from `offset` on (this start's lines, not an earlier one's)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read()[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


def _registration_timed_out(said: str) -> bool:
    # ray/_private/node.py: a busy GCS answered the node's own lookup too late.
    return "The current node timed out during startup" in said


def _port_taken(said: str) -> bool:
    # GCS: "Failed to start the grpc server. The specified port is N … `Address already in use`";
    # the raylet and agents say "Address already in use" or "is already in use".
    return "Failed to start the grpc server" in said or "already in use" in said


class HeadAsker(Protocol):
    """A sandboxed kernel's way to its server's head (cluster/head_link.py HeadLink)."""

    def ask(self) -> ClusterInfo: ...


class RayCluster:
    """The cluster a runtime uses: CONSOLE_RAY_ADDRESS if set, else the shared embedded head."""

    def __init__(self, cfg: Mapping[str, Any], head: HeadAsker | None = None) -> None:
        """head: a sandboxed kernel's link to its server, which starts and owns the embedded head
        for it (HeadLink.from_env); None everywhere else (the server, a script, a test)."""
        self.cfg = cfg
        self.head = head
        self.data_dir = Path(cfg.get("DATA_DIR") or "./console-data").resolve()
        self.state_dir = self.data_dir / "ray"  # Ray's log and temp dir: sandboxes write here
        # The head's record (its PIDs, which the server signals) sits where no sandbox can forge it.
        self.record_dir = self.data_dir / PRIVATE_DIR_NAME
        self._info: ClusterInfo | None = None

    @property
    def external_address(self) -> str | None:
        return self.cfg.get("RAY_ADDRESS") or None

    @property
    def external_gcs(self) -> str | None:
        """The external cluster's GCS address (not a ray:// one): drivers need a node of it here."""
        addr = self.external_address
        return addr if addr and not addr.startswith("ray://") else None

    def ensure(self, sandboxed: bool = False) -> ClusterInfo:
        """Return a running cluster, starting the embedded head (once per data dir) if needed.

        This process is recorded as a user of the embedded head until release().

        sandboxed: asked for a sandboxed kernel (the server's side of the head channel). With an
        external GCS address such a kernel needs a node in its sandbox: a GCS driver attaches
        to a raylet it finds among its own machine's processes, and the sandbox's PID namespace
        and private /tmp hide every node the user runs here. The server then joins a node with
        no CPUs to the cluster inside the sandbox, started, recorded and stopped like the
        embedded head; ray:// drivers need nothing local.
        """
        if self.external_address and not (self.external_gcs and (sandboxed or self.head is not None)):
            addr = self.external_address
            client = addr[len("ray://"):] if addr.startswith("ray://") else None
            # A server's kernel gets the token in its environment, never the file (kernel_process.py).
            token = external_token(self.cfg) or (os.environ.get("RAY_AUTH_TOKEN") or None
                                                 if os.environ.get("RAY_AUTH_MODE") == "token" else None)
            return ClusterInfo(address=addr, client_address=client, embedded=False, auth_token=token)
        if self.head is not None:  # a server's kernel: the server starts and owns the head
            self._info = self.head.ask()
            return self._info
        if self._info and self._healthy(self._info):
            return self._info
        with self._lock():
            state = self._read_state()
            info = _info_of(state)
            gcs = self.external_gcs
            # One recorded for the other setting (embedded head vs driver node, or another cluster) is stopped.
            wrong = info is not None and (info.address != gcs if gcs else not info.embedded)
            if info is None or wrong or not self._healthy(info):
                if info is not None and recorded_alive(info):
                    assert info.pid is not None
                    stop_process_group(info.pid, grace=2.0)  # a half-dead head of ours, or one of another setting
                info = self._start_driver_node() if self.external_gcs else self._start()
                state = {"info": info.to_json(), "users": [], "owner": state.get("owner")}
            users = {p for p in state.get("users", []) if pid_alive(p)} | {os.getpid()}
            state["users"] = sorted(users)
            self._write_state(state)
            self._info = info
            return info

    def _start(self) -> ClusterInfo:
        from console.cluster import sandbox

        temp_dir = short_temp_dir(self.data_dir)
        wrap, after = None, None
        if sandbox.enabled(self.cfg):
            from console.cluster import walls

            wall = walls.ray_zone(self.cfg, temp_dir)
            zone = wall.identity
            after = (lambda folder: walls.open_ray_session(folder, zone)) if zone is not None else None

            def wrap(cmd: list[str]) -> tuple[list[str], tuple[int, ...]]:
                return sandbox.wrap(self.cfg, cmd, ray_temp_dir=temp_dir, cwd=str(self.state_dir), wall=wall)
        return start_head(temp_dir, num_cpus=self.cfg.get("RAY_NUM_CPUS"),
                          client_port=self.cfg.get("RAY_CLIENT_PORT") or None,
                          log_path=self.state_dir / "ray-start.log", wrap=wrap,
                          auth_token=auth_token(self.record_dir), after_start=after)

    def _start_driver_node(self) -> ClusterInfo:
        from console.cluster import sandbox

        gcs = self.external_gcs
        assert gcs is not None
        temp_dir = short_temp_dir(self.data_dir)
        from console.cluster import walls

        wall = walls.ray_zone(self.cfg, temp_dir)
        zone = wall.identity

        def wrap(cmd: list[str]) -> tuple[list[str], tuple[int, ...]]:
            return sandbox.wrap(self.cfg, cmd, ray_temp_dir=temp_dir, cwd=str(self.state_dir), wall=wall)
        # On a remote cluster the node must name an address its other nodes reach: Ray finds it.
        loopback = gcs.rsplit(":", 1)[0] in ("127.0.0.1", "localhost")
        info = start_head(temp_dir, num_cpus=0, address=gcs, log_path=self.state_dir / "ray-start.log", wrap=wrap,
                          auth_token=external_token(self.cfg), node_ip="127.0.0.1" if loopback else None,
                          after_start=(lambda folder: walls.open_ray_session(folder, zone)) if zone else None)
        return ClusterInfo(address=gcs, pid=info.pid, started=info.started, temp_dir=info.temp_dir, num_cpus=0,
                           embedded=False, auth_token=info.auth_token)

    def own(self) -> None:
        """Make this process (the server) the head's owner: it outlives kernels and stops it itself."""
        if self.external_address:
            return
        with self._lock():
            state = self._read_state()
            state["owner"] = os.getpid()
            self._write_state(state)

    def release(self) -> bool:
        """This process no longer uses the head; the last user stops it unless an owner lives. True if stopped."""
        if self.external_address or self.head is not None:  # the server's head is not ours to stop
            self._info = None
            return False
        with self._lock():
            state = self._read_state()
            info = _info_of(state)
            users = {p for p in state.get("users", []) if pid_alive(p) and p != os.getpid()}
            state["users"] = sorted(users)
            self._info = None
            owner = state.get("owner")
            if info is None or users or (owner and owner != os.getpid() and pid_alive(owner)) or owner == os.getpid():
                self._write_state(state)
                return False
            self._stop_locked(info)
            return True

    def running(self) -> ClusterInfo | None:
        """The embedded head recorded for this data dir, if it is alive; starts nothing."""
        info = _info_of(self._read_state())
        return info if info is not None and self._healthy(info) else None

    def stop(self, grace: float = 10.0) -> bool:
        """Stop the embedded head (or driver node) recorded for this data dir, by its process group. True if one ran."""
        if self.head is not None:
            return False
        with self._lock():
            return self._stop_locked(_info_of(self._read_state()), grace)

    def _stop_locked(self, info: ClusterInfo | None, grace: float = 10.0) -> bool:
        (self.record_dir / "head.json").unlink(missing_ok=True)
        self._info = None
        stopped = bool(info is not None and info.pid and recorded_alive(info))
        if stopped:
            assert info is not None and info.pid is not None
            stop_process_group(info.pid, grace=grace)
        # A temp dir outside the data dir (short_temp_dir under a long path) belongs to no one once
        # the head is gone: left, each data dir that ever ran a head kept one in /tmp (thousands here).
        temp = short_temp_dir(self.data_dir)
        if not temp.is_relative_to(self.data_dir):
            shutil.rmtree(temp, ignore_errors=True)
        return stopped

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.record_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.record_dir / "head.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _read_state(self) -> dict[str, Any]:
        try:
            state = json.loads((self.record_dir / "head.json").read_text())
            return state if isinstance(state, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write_state(self, state: dict[str, Any]) -> None:
        tmp = self.record_dir / "head.json.tmp"
        tmp.write_text(json.dumps(state))
        tmp.replace(self.record_dir / "head.json")

    @staticmethod
    def _healthy(info: ClusterInfo) -> bool:
        if info.pid and not recorded_alive(info):
            return False
        host, _, port = info.address.rpartition(":")
        return port.isdigit() and port_open(host or "127.0.0.1", int(port))


def _info_of(state: dict[str, Any]) -> ClusterInfo | None:
    try:
        return ClusterInfo(**state["info"])
    except (KeyError, TypeError):
        return None


def own_embedded_head(cfg: Mapping[str, Any]) -> None:
    """Record the server as the embedded head's owner: kernels come and go, the server stops it on exit."""
    try:
        RayCluster(cfg).own()
    except OSError:  # an unwritable data dir: the last kernel to release the head stops it instead
        log.exception("cannot record the server as the Ray head's owner")


def stop_embedded(cfg: Mapping[str, Any]) -> bool:
    """Stop the embedded head of cfg's data dir; what the server calls on exit."""
    return RayCluster(cfg).stop()
