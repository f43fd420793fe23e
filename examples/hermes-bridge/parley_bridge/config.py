"""The Bridge's settings, from the command line and the environment."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TOKEN_ENV = "PARLEY_BRIDGE_TOKEN"


@dataclass
class BridgeConfig:
    """Settings; the defaults are the documented ones (``python -m parley_bridge --help``)."""
    host: str = "127.0.0.1"
    port: int = 8642
    port_file: Path | None = None
    token: str | None = field(default=None, repr=False)
    log_file: Path | None = None
    log_level: str = "INFO"
    heartbeat: float = 15.0
    max_sessions: int = 64
    retained_runs: int = 64
    max_run_frames: int = 200_000
    max_run_bytes: int = 32 * 1024 * 1024
    max_result_chars: int = 100_000
    max_body_bytes: int = 8 * 1024 * 1024
    approval_timeout: float = 60.0
    allow_always: bool = False
    strict_sessions: bool = False
    cancel_grace: float = 15.0
    toolsets: list[str] | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    max_iterations: int = 90
    work_root: Path = field(default_factory=lambda: Path.home() / ".parley-bridge" / "work")
    attachment_types: list[str] = field(default_factory=lambda: ["*/*"])
    max_attachment_bytes: int = 25 * 1024 * 1024
    max_attachments: int = 10


def parse(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> BridgeConfig:
    """A configuration from ``argv`` (the token from the variable ``--token-env`` names)."""
    env = os.environ if environ is None else environ
    defaults = BridgeConfig()
    p = argparse.ArgumentParser(prog="python -m parley_bridge",
                                description="Parley's reference Hermes Bridge: the Hermes Bridge protocol v1, "
                                            "served by Hermes Agent in this process.")
    p.add_argument("--host", default=defaults.host, help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=defaults.port, help="port (default 8642; 0 = any free port)")
    p.add_argument("--port-file", type=Path, help="write the port listened on to this file once listening")
    p.add_argument("--token-env", default=DEFAULT_TOKEN_ENV,
                   help=f"environment variable holding the bearer token clients must send (default {DEFAULT_TOKEN_ENV};"
                        " unset or empty = no authentication, refused unless --host is loopback)")
    p.add_argument("--log-file", type=Path, help="log here instead of to stderr (never to stdout)")
    p.add_argument("--log-level", default=defaults.log_level)
    p.add_argument("--heartbeat", type=float, default=defaults.heartbeat, help="seconds between ': ping' (≤ 15)")
    p.add_argument("--max-sessions", type=int, default=defaults.max_sessions,
                   help="agents kept (least recently used evicted; default 64)")
    p.add_argument("--retained-runs", type=int, default=defaults.retained_runs,
                   help="finished runs whose frames are kept for re-attaching (default 64)")
    p.add_argument("--max-run-frames", type=int, default=defaults.max_run_frames, help="frames kept per run")
    p.add_argument("--max-run-bytes", type=int, default=defaults.max_run_bytes, help="frame bytes kept per run")
    p.add_argument("--max-result-chars", type=int, default=defaults.max_result_chars,
                   help="a tool result longer than this is cut, with a marker (default 100000)")
    p.add_argument("--approval-timeout", type=float, default=defaults.approval_timeout,
                   help="seconds an approval waits before it expires as denied (default 60, Hermes' "
                        "approvals.timeout; keep it at most that; 0 = Hermes' own timeout only)")
    p.add_argument("--allow-always", action="store_true",
                   help="offer 'always' (Hermes then adds the pattern to its command_allowlist for everyone)")
    p.add_argument("--strict-sessions", action="store_true",
                   help="410 SESSION_NOT_FOUND for an unknown session, also to clients that cannot send history")
    p.add_argument("--cancel-grace", type=float, default=defaults.cancel_grace,
                   help="seconds a cancelled agent has to stop before the stream ends done{cancelled} anyway")
    p.add_argument("--toolsets", help="comma-separated Hermes toolsets to enable (default: Hermes' own choice)")
    p.add_argument("--model", help="model when a request names none (default: Hermes' configured one)")
    p.add_argument("--provider", help="provider when a request names none")
    p.add_argument("--base-url", help="model API base URL when a request names none")
    p.add_argument("--max-iterations", type=int, default=defaults.max_iterations)
    p.add_argument("--work-root", type=Path, default=defaults.work_root,
                   help="each conversation's working directory is created below it (default ~/.parley-bridge/work)")
    p.add_argument("--attachment-types", default=",".join(defaults.attachment_types),
                   help="comma-separated media types a message's files may have ('image/*' for a family; default "
                        "'*/*': any file; 'none' turns attachments off)")
    p.add_argument("--max-attachment-bytes", type=int, default=defaults.max_attachment_bytes,
                   help="the most bytes a message's files may hold together (default 25 MiB)")
    p.add_argument("--max-attachments", type=int, default=defaults.max_attachments,
                   help="the most files one message may carry (default 10)")
    a = p.parse_args(argv)
    if a.heartbeat <= 0 or a.heartbeat > 15:
        p.error("--heartbeat must be above 0 and at most 15 seconds")
    types = [t.strip().lower() for t in a.attachment_types.split(",") if t.strip()]
    if types == ["none"]:
        types = []
    if any(t.count("/") != 1 or t.startswith("/") or t.endswith("/") for t in types):
        p.error("--attachment-types takes media types such as image/png, image/* or */*, or none")
    if a.max_attachment_bytes < 1 or a.max_attachments < 0:
        p.error("--max-attachment-bytes must be positive and --max-attachments not negative")
    token = env.get(a.token_env) or None
    if token is None and a.host not in ("127.0.0.1", "localhost", "::1"):
        p.error(f"binding {a.host} without a token: set {a.token_env}")
    return BridgeConfig(
        host=a.host, port=a.port, port_file=a.port_file, token=token, log_file=a.log_file, log_level=a.log_level,
        heartbeat=a.heartbeat, max_sessions=a.max_sessions, retained_runs=a.retained_runs,
        max_run_frames=a.max_run_frames, max_run_bytes=a.max_run_bytes, max_result_chars=a.max_result_chars,
        approval_timeout=max(0.0, a.approval_timeout), allow_always=a.allow_always,
        strict_sessions=a.strict_sessions, cancel_grace=a.cancel_grace,
        toolsets=[t.strip() for t in a.toolsets.split(",") if t.strip()] if a.toolsets else None,
        model=a.model, provider=a.provider, base_url=a.base_url, max_iterations=a.max_iterations,
        work_root=a.work_root.expanduser(), attachment_types=types, max_attachment_bytes=a.max_attachment_bytes,
        max_attachments=a.max_attachments)
