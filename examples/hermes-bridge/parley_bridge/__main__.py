"""``python -m parley_bridge``: starts the Bridge in front of the Hermes Agent installed in this Python.

Logs go to stderr (or ``--log-file``), never to stdout: Hermes prints to stdout even in quiet mode, so the
Bridge turns stdout into log lines too. Secrets are masked in every log line.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import sys
import threading

from . import PROTOCOL, __version__
from .config import BridgeConfig, parse
from .core import BridgeCore
from .hermes import HermesApi
from .redact import RedactingFilter, Secrets
from .server import BridgeServer

log = logging.getLogger("parley_bridge")


class _StdoutToLog(io.TextIOBase):
    """What Hermes prints, as log lines of the logger ``hermes.stdout``."""

    def __init__(self) -> None:
        self._logger = logging.getLogger("hermes.stdout")
        self._partial = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            if line.strip():
                self._logger.info("%s", line.rstrip())
        return len(text)


def setup_logging(config: BridgeConfig, secrets: Secrets) -> None:
    """Root logging to stderr or the log file, secrets masked; stdout (Python's and fd 1) into the log."""
    stream = open(config.log_file, "a", encoding="utf-8") if config.log_file else sys.stderr
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(threadName)s: %(message)s"))
    handler.addFilter(RedactingFilter(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(config.log_level.upper())
    try:
        os.dup2(sys.stderr.fileno(), 1)  # anything written to fd 1 below Python goes to stderr
    except (OSError, ValueError):
        pass
    sys.stdout = _StdoutToLog()


def main(argv: list[str] | None = None) -> int:
    config = parse(argv)
    secrets = Secrets()
    secrets.add(config.token)
    setup_logging(config, secrets)
    try:
        hermes = HermesApi()
    except ImportError as error:
        log.error("Hermes Agent is not importable here (%s): install it into this Python, or run the Bridge"
                  " with the Python of your Hermes install", error)
        return 2
    except RuntimeError as error:
        log.error("Refusing to start: %s", error)
        return 2
    server = BridgeServer(BridgeCore(config, hermes, secrets))
    if config.port_file:
        config.port_file.write_text(str(server.port), encoding="utf-8")
    log.info("Parley Hermes Bridge %s (%s) listening on http://%s:%d%s", __version__, PROTOCOL, config.host,
             server.port, "" if config.token else " without authentication")

    def stop(signum: int, frame: object) -> None:
        log.info("Stopping (signal %d)", signum)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever(poll_interval=0.5)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
