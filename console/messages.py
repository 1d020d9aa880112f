"""A thin re-export of the wire vocabularies, for the modules that still import their names here.

Each process hop has its own vocabulary in console/wire/: browser.py (Socket.IO commands and
events), kernel.py (server <-> kernel), worker.py (kernel <-> cell worker), head.py (a kernel
asking for the Ray head); codec.py decodes them, channel.py carries the pipes. New code imports
from there; this module goes once nothing imports it.
"""
from __future__ import annotations

from console.wire.browser import (  # noqa: F401
    AwarenessCommand, CellState, CellStatusEvent, DocChangedEvent, DocSavedEvent, DocSyncCommand,
    DocUpdateCommand, ErrorEvent, InterruptCommand, JoinCommand, KernelState, KernelStatusEvent, LeaveCommand,
    MetricsEvent, OutputEvent, OutputHiddenEvent, PresenceEvent, RestartCommand, ResultEvent, RunAllCommand,
    RunCellCommand, RunFromCommand)
from console.wire.codec import Message, message_types  # noqa: F401
from console.wire.kernel import (ExecuteCommand, KernelAnswer, KernelLogEvent, KernelQuery,  # noqa: F401
                                 NotebookCells, NotebookRequest)
from console.wire.worker import (FD_MARK, CellDone, CellError, CellMetrics, CellOutput, ClusterInfo,  # noqa: F401
                                 ClusterUnavailable, NeedCluster, RunJob, UdfCall, WorkerComplete, WorkerCompletion,
                                 WorkerExit, WorkerReady, fd_mark)
