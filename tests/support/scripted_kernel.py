"""A kernel entry module for tests: console.kernel.main with the scripted engine injected.

SessionManager starts it as `python -m tests.support.scripted_kernel …` when a test's server
is made with kernel_module="tests.support.scripted_kernel" (live_server.SCRIPTED_KERNEL).
"""
from __future__ import annotations

import sys

from console.kernel.main import main
from tests.support.scripted_engine import ScriptedEngine

if __name__ == "__main__":
    sys.exit(main(engine_factory=ScriptedEngine))
