"""Stand-in for Hermes Agent v0.19.0 ``tools/interrupt.py``: an interrupt flag per agent thread."""

import threading

_lock = threading.Lock()
_interrupted = set()


def set_interrupt(active, thread_id=None):
    thread_id = thread_id if thread_id is not None else threading.get_ident()
    with _lock:
        (_interrupted.add if active else _interrupted.discard)(thread_id)


def is_interrupted():
    with _lock:
        return threading.get_ident() in _interrupted
