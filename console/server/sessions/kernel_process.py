"""The web process's handle on one kernel process: spawn, send commands, read events, see it die.

Three reader threads per kernel: the event pipe (console/wire/kernel.py's messages through a
Channel: a kernel that breaks the protocol is stopped with the reason), and the kernel's own stdout
and stderr (anything a library writes there becomes "system" output of the running cell).
A waiter thread turns the exit status into a sentence a user can act on.

The kernel runs in the sandbox (console/cluster/sandbox.py) unless CONSOLE_SANDBOX=off: it gets
an allow-listed environment and settings without the store's URL or the secret key, and a socket
on which it asks this process for the embedded Ray head (the server starts and owns it).
"""
from __future__ import annotations

import codecs
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable
from typing import IO, Any

from console.cluster import limits, sandbox, walls
from console.cluster.guard import auth_token, external_token, token_env
from console.cluster.head import short_temp_dir
from console.cluster.head_link import HEAD_FD_ENV, serve_head_requests
from console.cluster.head_pool import HeadPool
from console.cluster.session_head import SessionCluster, per_session
from console.config import KERNEL_CONFIG_ENV, Config
from console.ids import NotebookId, SessionId
from console.wire.channel import Channel, ProtocolError, new_request_id
from console.wire.codec import M, Message
from console.wire.kernel import FROM_KERNEL, KernelAnswer, KernelQuery

log = logging.getLogger(__name__)

# The kernel's entry module: `python -m <module> --cmd-fd … --event-fd …`. Tests name their own,
# which runs console.kernel.main.main with a scripted engine.
KERNEL_MODULE = "console.kernel.main"
# A per-kernel mark every descendant inherits: Python cell workers lead their own process groups,
# so after a kill -9 of their kernel this is how its orphans are found and stopped. Only worker
# processes are touched: the shared Ray head, when a kernel started it, inherits the mark too.
MARK_ENV = "CONSOLE_KERNEL_MARK"
WORKER_CMD = b"console.worker.main"

OnEvent = Callable[[Message], None]
OnSystem = Callable[[str, str], None]  # (stream, text)
OnExit = Callable[[str, bool], None]  # (reason, expected)


def exit_reason(returncode: int, last_stderr: str = "", limit: str | None = None) -> str:
    """Explain an exit status: a code, or a signal by name (SIGKILL usually means out of memory).

    limit: the session's limit that was passed (limits.explain), which then says why.
    """
    if limit and returncode == -signal.SIGKILL:
        return f"killed by SIGKILL: {limit}" + (f"; last words: {last_stderr}" if last_stderr else "")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        reason = f"killed by {name}"
        if name == "SIGKILL":
            reason += " (out of memory? the system kills the largest process when memory runs out)"
        elif name == "SIGSEGV":
            reason += " (a crash in native code)"
    else:
        reason = f"exited with code {returncode}"
    if last_stderr:
        reason += f"; last words: {last_stderr}"
    return reason


def kill_marked(mark: str) -> list[int]:
    """SIGKILL the group of every cell worker carrying this kernel's mark; returns their pids."""
    needle = f"{MARK_ENV}={mark}".encode()
    own_group = os.getpgid(0)
    killed: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if WORKER_CMD not in fh.read():
                    continue
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
            pid = int(entry)
            group = os.getpgid(pid)
            if group != own_group:
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (OSError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return killed


def kernel_config(cfg: Config) -> str:
    """The resolved settings as JSON for the kernel, with the data dir made absolute.

    Without the store's URL (a PostgreSQL URL carries its password) or the cookie key: the
    kernel never opens the store, and user code must not learn where it is or how to sign in.
    """
    values = dict(cfg)
    values["DATA_DIR"] = str(cfg.data_dir)
    values["DATABASE_URL"] = None
    values["SECRET_KEY"] = None
    values["RAY_AUTH_TOKEN_FILE"] = None  # the token comes in the environment; the file stays the server's
    return json.dumps(values)


def kernel_env(cfg: Config, extra: dict[str, str], sandboxed: bool) -> dict[str, str]:
    """The kernel's environment: the sandbox's allow-list, or (sandbox off) ours less the store's settings."""
    if sandboxed:
        return sandbox.clean_env(os.environ, extra)
    env = {k: v for k, v in os.environ.items() if not sandbox.denied(k)}
    env.update(extra)
    return env


STOPPING_SAID = 4096  # what the server's log keeps of a stopping kernel's words


class KernelProcess:
    def __init__(self, cfg: Config, notebook_id: NotebookId, session_id: SessionId, on_event: OnEvent,
                 on_system: OnSystem, on_exit: OnExit, extra_env: dict[str, str] | None = None,
                 kernel_module: str = KERNEL_MODULE, pool: HeadPool | None = None) -> None:
        self.cfg = cfg
        self.pool = pool  # session heads started before their sessions (cluster/head_pool.py)
        self.kernel_module = kernel_module
        self.extra_env = dict(extra_env or {})
        self.notebook_id = notebook_id
        self.session_id = session_id
        self.on_event = on_event
        self.on_system = on_system
        self.on_exit = on_exit
        self.proc: subprocess.Popen[bytes] | None = None
        self.channel: Channel | None = None
        self.violation = ""  # how the kernel broke the protocol, when it did: why it was stopped
        self._send_lock = threading.Lock()
        self._stopping = False
        self._said_stopping = 0  # characters the kernel wrote once asked to stop (the log keeps the first)
        self._stderr_tail: deque[str] = deque(maxlen=5)
        self._readers: list[threading.Thread] = []
        self.mark = uuid.uuid4().hex
        self.sandboxed = sandbox.enabled(cfg)
        self.wall: walls.SessionWall | None = None  # its uid, cgroup and folders while it lives
        self.cluster: SessionCluster | None = None  # its own Ray head (CONSOLE_RAY_CLUSTERS=session)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        cmd_r, cmd_w = os.pipe()
        evt_r, evt_w = os.pipe()
        head_ours, head_theirs = socket.socketpair()
        env = kernel_env(self.cfg, self.extra_env, self.sandboxed)
        env[MARK_ENV] = self.mark
        env[KERNEL_CONFIG_ENV] = kernel_config(self.cfg)
        env[HEAD_FD_ENV] = str(head_theirs.fileno())
        env["PYTHONUNBUFFERED"] = "1"
        own_cluster = per_session(self.cfg, self.sandboxed)
        if not own_cluster:
            # The shared cluster's token (the embedded head's, or CONSOLE_RAY_AUTH_TOKEN_FILE's): kernels
            # and workers only. A session's own head hands its token over the head channel instead.
            env.update(token_env(external_token(self.cfg) if self.cfg.get("RAY_ADDRESS") else
                                 auth_token(self.cfg.private_dir)))
        argv = [sys.executable, "-m", self.kernel_module, "--cmd-fd", str(cmd_r),
                "--event-fd", str(evt_w), "--notebook-id", self.notebook_id, "--session-id", self.session_id]
        ns_fds: tuple[int, ...] = ()
        try:
            # Its own uid, cgroup and hand-off folder (cluster/walls.py), given back when it ends;
            # taken from the pool with its head already running, when one is ready.
            taken = self.pool.take(self.session_id) if own_cluster and self.pool is not None else None
            if taken is not None:
                self.wall, self.cluster = taken
            else:
                self.wall = walls.session(self.cfg, self.session_id, self.sandboxed,
                                          short_temp_dir(self.cfg.data_dir))
        except BaseException:
            for fd in (cmd_r, cmd_w, evt_r, evt_w):
                os.close(fd)
            head_ours.close()
            head_theirs.close()
            raise
        env.update(self.wall.env)
        ray_temp_dir = short_temp_dir(self.cfg.data_dir)
        if own_cluster and self.cluster is None:
            self.cluster = SessionCluster(self.cfg, self.session_id, self.wall)
            try:
                self.cluster.prepare()
            except BaseException:
                for fd in (cmd_r, cmd_w, evt_r, evt_w):
                    os.close(fd)
                head_ours.close()
                head_theirs.close()
                self.wall.release()
                raise
        if self.cluster is not None:
            ray_temp_dir = self.cluster.temp_dir
        try:
            if self.sandboxed:
                argv, ns_fds = sandbox.wrap(self.cfg, argv, session_id=self.session_id,
                                            ray_temp_dir=ray_temp_dir, wall=self.wall.wall)
            elif self.wall.cgroup is not None:
                argv = limits.launcher(self.wall.wall.cgroups, limits.SANDBOX_OOM_SCORE_ADJ, None) + argv
            # Own process group: a restart or cull can take the kernel's worker processes with it.
            self.proc = subprocess.Popen(
                argv, pass_fds=(cmd_r, evt_w, head_theirs.fileno(), *ns_fds), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
        except BaseException:
            # Nothing started: our ends of the pipes go too (the kernel's ends go below), as do the
            # session's head and wall; a server that failed to start kernels kept four fds each.
            os.close(evt_r)
            os.close(cmd_w)
            head_ours.close()
            if self.cluster is not None:
                self.cluster.stop()
            self.wall.release()
            raise
        finally:
            os.close(cmd_r)
            os.close(evt_w)
            head_theirs.close()
        self.channel = Channel(FROM_KERNEL, read=evt_r, write=cmd_w, answers=(KernelAnswer,),
                               name=f"kernel {self.session_id}")
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            self._thread("events", self._read_events, self.channel),
            self._thread("stdout", self._read_text, self.proc.stdout, "stdout"),
            self._thread("stderr", self._read_text, self.proc.stderr, "stderr"),
        ]
        self._thread("ray-head", serve_head_requests, head_ours, self.cfg, self.cluster)
        self._thread("wait", self._wait)

    def _thread(self, what: str, target: Callable[..., None], *args: object) -> threading.Thread:
        t = threading.Thread(target=target, args=args, name=f"kernel-{self.pid}-{what}", daemon=True)
        t.start()
        return t

    def send(self, msg: Message) -> bool:
        """Write one command; False when the kernel is gone (its exit is reported separately)."""
        return self.channel is not None and self.channel.send(msg)

    def request(self, msg: Message, kind: type[M], timeout: float) -> M:
        """Send a question and wait for its answer of type `kind` (console/wire/channel.py Channel.request)."""
        if self.channel is None:
            raise ConnectionError("the kernel is not running")
        return self.channel.request(msg, kind, timeout)

    def ask(self, what: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
        """A question about the session (console/kernel/queries.py), answered while cells run.

        LookupError: no kernel to ask, or no such thing; ValueError: the question itself was wrong;
        TimeoutError: no answer in time. Each says what its asker may see."""
        try:
            answer = self.request(KernelQuery(new_request_id(), what, args), KernelAnswer, timeout)
        except ConnectionError:
            raise LookupError("the kernel is not running; run the cell again") from None
        except TimeoutError:
            raise TimeoutError(f"the kernel did not answer {what} within {timeout:.0f} s") from None
        if answer.error:
            raise (ValueError if answer.bad_request else LookupError)(answer.error)
        return answer.data

    def _close_commands(self) -> None:
        """EOF on the command pipe: the kernel's reader ends (once; later sends return False)."""
        if self.channel is not None:
            self.channel.close()

    def stop(self, grace: float = 5.0) -> None:
        """Ask the kernel to finish (EOF on its command pipe), then SIGTERM, then SIGKILL its group."""
        self._stopping = True
        self._close_commands()
        if self.proc is None:
            return
        for sig, wait in ((None, grace), (signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
            if sig is not None:
                self._signal_group(sig)
            try:
                self.proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        self._signal_group(signal.SIGKILL)  # leftovers of the group
        kill_marked(self.mark)  # workers in groups of their own
        if self.cluster is not None:  # its own Ray head ends with it
            self.cluster.stop()

    def _signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _read_events(self, channel: Channel) -> None:
        try:
            for msg in channel.messages():
                try:
                    self.on_event(msg)
                except Exception:  # one event we fail to handle must not stop the stream
                    log.exception("handling kernel event %s failed", msg.type)
        except ProtocolError as exc:
            self.stop_for(str(exc))
        finally:
            assert channel.read_fd is not None
            os.close(channel.read_fd)

    def stop_for(self, violation: str) -> None:
        """The kernel broke the protocol: stop it; its death is reported with this reason."""
        log.warning("kernel %s (session %s) broke the protocol and is stopped: %s", self.pid, self.session_id,
                    violation)
        self.violation = f"stopped: it broke the kernel protocol ({violation[:200]})"
        self._thread("stop", self.stop, 1.0)

    def _read_text(self, fh: IO[bytes], stream: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := os.read(fh.fileno(), 65536):
            text = decoder.decode(chunk)
            if stream == "stderr":
                self._stderr_tail.extend(line for line in text.splitlines() if line.strip())
            if not text:
                continue
            if self._stopping:
                # Asked to stop, the kernel says goodbye ("the server closed its command pipe"): that
                # is for the server's log. Given to on_system, it went into the stored output of the
                # session's last run, already ended (a job's run changed after it was done). The log
                # gets the first STOPPING_SAID bytes: a kernel is anyone's code, and may flood.
                if self._said_stopping < STOPPING_SAID:
                    log.info("kernel %s (session %s) while stopping, on %s: %s", self.pid, self.session_id,
                             stream, text[:STOPPING_SAID - self._said_stopping].rstrip())
                self._said_stopping += len(text)
            else:
                self.on_system(stream, text)
        fh.close()

    def _wait(self) -> None:
        assert self.proc is not None
        code = self.proc.wait()
        if self.sandboxed:
            code = sandbox.exit_code(code)  # bwrap reports the kernel's death by signal N as 128+N
        if not self._stopping:
            # Unasked: what the server's log needs to tell a crash from a pipe closed under it.
            log.warning("kernel %s (session %s) ended unasked with status %s; its command pipe was %s",
                        self.pid, self.session_id, code,
                        "closed by the server" if self.channel is not None and self.channel.closed else "open")
            # Orphaned workers of a crashed kernel; they would also hold its stdout open.
            self._signal_group(signal.SIGKILL)
            kill_marked(self.mark)
        # Every event the kernel wrote before dying is handled before its death is announced.
        for t in self._readers:
            t.join(timeout=5)
        self._close_commands()
        last = self._stderr_tail[-1] if self._stderr_tail else ""
        limit = limits.explain(self.wall.cgroup) if self.wall is not None else None
        if self.cluster is not None:  # before its uid goes back to the pool
            self.cluster.stop()
        if self.wall is not None:
            self.wall.release()
        self.on_exit(self.violation or exit_reason(code, last, limit), self._stopping and not self.violation)
