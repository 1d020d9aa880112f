"""Test-only entry of a server child process: `mlsql-console serve`'s gunicorn server, kernels of a test's choosing.

    python -m tests.support.serve --host H --port P --data-dir D --threads N --kernel-module M [--clock-ahead S]

Settings come as for `mlsql-console serve` (defaults, CONSOLE_* environment, these flags); the
kernel module reaches create_app as an argument, never through the environment. --clock-ahead
starts the server with its clock S seconds ahead of the machine's (as if started that much later:
a dead server's job leases have lapsed for it at once).
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta

from console.clock import SystemClock
from console.config import load_config
from console.server import create_app
from console.server.server import GunicornServer


class AheadClock(SystemClock):
    """The machine's clock, `seconds` ahead."""

    def __init__(self, seconds: float) -> None:
        self.ahead = timedelta(seconds=seconds)

    def now(self) -> datetime:
        return super().now() + self.ahead


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.serve")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--kernel-module", required=True)
    parser.add_argument("--clock-ahead", type=float, default=0.0)
    args = parser.parse_args(argv)
    cfg = load_config({"DATA_DIR": args.data_dir, "HOST": args.host, "PORT": args.port})
    clock = {"CLOCK": AheadClock(args.clock_ahead)} if args.clock_ahead else {}
    app = create_app({**dict(cfg), **clock}, kernel_module=args.kernel_module)
    GunicornServer(app, host=cfg.HOST, port=cfg.PORT, threads=args.threads).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
