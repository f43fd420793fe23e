"""Stand-in for Hermes Agent v0.19.0 ``tools/terminal_tool.py``: the guards, then a real subprocess."""

import json
import os
import signal
import subprocess
import threading
import time

from tools import approval, interrupt

_lock = threading.Lock()
_overrides = {}
COMMANDS_RUN = []  # (task_id, command, cwd): what really ran, for tests


def register_task_env_overrides(task_id, overrides):
    with _lock:
        _overrides[task_id] = dict(overrides)


def clear_task_env_overrides(task_id):
    with _lock:
        _overrides.pop(task_id, None)


def terminal_tool(command, task_id=None, timeout=60):
    """Checks the command guards, then runs it in the task's cwd; an interrupt kills it (exit 130)."""
    guard = approval.check_all_command_guards(command, "local")
    if not guard.get("approved"):
        return json.dumps({"output": "", "exit_code": -1, "error": guard.get("message"), "status": "blocked"})
    with _lock:
        cwd = _overrides.get(task_id, {}).get("cwd") or os.getcwd()
        COMMANDS_RUN.append((task_id, command, cwd))
    process = subprocess.Popen(command, shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        if interrupt.is_interrupted() or time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)  # the shell and what it started
            process.communicate()
            return json.dumps({"output": "[interrupted]", "exit_code": 130, "error": None})
        time.sleep(0.02)
    output = process.communicate()[0]
    return json.dumps({"output": output, "exit_code": process.returncode, "error": None})
