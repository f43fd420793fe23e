"""A run's frame log: numbered SSE frames in a bounded buffer that any number of streams can follow."""

from __future__ import annotations

import json
import threading
import time
from typing import Any


class FramesGone(Exception):
    """The frames a reader asked for were evicted from the buffer; it cannot resume exactly."""


class FrameLog:
    """The frames of one run, numbered 1, 2, 3 … (``seq``), each already encoded as an SSE event.

    Contract:
    - :meth:`append` stamps ``runId``, ``seq``, ``ts``, ``tsMicros`` and ``kind`` into the payload and
      wakes every reader; after :meth:`close` (called once ``done`` was appended) it appends nothing.
    - The buffer keeps at most ``max_frames`` frames and ``max_bytes`` encoded bytes, dropping the oldest;
      a reader asking for frames older than the first one kept gets :class:`FramesGone`, never a gap.
    - Thread-safe: the run's thread appends, HTTP threads read.
    """

    def __init__(self, run_id: str, max_frames: int, max_bytes: int) -> None:
        self.run_id = run_id
        self._max_frames = max(16, max_frames)
        self._max_bytes = max(64 * 1024, max_bytes)
        self._frames: list[tuple[int, bytes]] = []
        self._first = 1  # seq of self._frames[0]
        self._bytes = 0
        self._next = 1
        self._closed = False
        self._cond = threading.Condition()

    @property
    def last_seq(self) -> int:
        """The seq of the newest frame, 0 before the first."""
        with self._cond:
            return self._next - 1

    @property
    def closed(self) -> bool:
        """True once the run's ``done`` frame is in the log."""
        with self._cond:
            return self._closed

    def byte_size(self) -> int:
        with self._cond:
            return self._bytes

    def append(self, kind: str, payload: dict[str, Any], *, last: bool = False) -> int:
        """Appends one frame and returns its seq (0 if the log is closed). ``last`` closes the log."""
        with self._cond:
            if self._closed:
                return 0
            seq = self._next
            micros = time.time_ns() // 1000
            data = {"runId": self.run_id, "seq": seq, "ts": micros // 1000, "tsMicros": micros, "kind": kind}
            data.update(payload)
            line = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            frame = f"id: {seq}\nevent: {kind}\ndata: {line}\n\n".encode("utf-8")
            self._frames.append((seq, frame))
            self._bytes += len(frame)
            self._next += 1
            while len(self._frames) > 1 and (len(self._frames) > self._max_frames or self._bytes > self._max_bytes):
                _, dropped = self._frames.pop(0)
                self._bytes -= len(dropped)
                self._first += 1
            if last:
                self._closed = True
            self._cond.notify_all()
            return seq

    def read(self, after: int, timeout: float) -> tuple[list[bytes], bool]:
        """Frames with seq > ``after``, waiting up to ``timeout`` s for one; and whether the log is closed.

        Raises :class:`FramesGone` when frame ``after + 1`` was evicted.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if after + 1 < self._first:
                    raise FramesGone(f"frames after seq {after} are no longer kept (the oldest kept is {self._first})")
                if after + 1 < self._next:
                    start = after + 1 - self._first
                    return [frame for _, frame in self._frames[start:]], self._closed
                if self._closed:
                    return [], True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return [], False
                self._cond.wait(remaining)
