"""A step's output kept to a size: the first half of the limit as it comes, the last half at
the end, and one line saying how many bytes were left out between them. A step printing
200 MB must not become a 200 MB log file and a 200 MB CI log: the start of the output shows
what ran, the end shows how it failed."""

from __future__ import annotations

from collections import deque


class HeadTailCap:
    """Fed the (already masked) output in pieces; says what to write now and, at the end,
    what to write last."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head_written = 0
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.left_out = 0
        self._reported = 0  # of left_out, what a line already said

    def feed(self, text: str) -> str:
        """The part of `text` to write now (the head); the rest is held for the tail."""
        data = text.encode("utf-8")
        room = self.head_limit - self.head_written
        if room >= len(data):
            self.head_written += len(data)
            return text
        head = data[:max(room, 0)].decode("utf-8", "ignore")  # a character cut in two stays out whole
        kept = len(head.encode("utf-8"))
        self.head_written += kept
        self.head_written = max(self.head_written, self.head_limit)  # nothing more goes to the head
        self._hold(data[kept:])
        return head

    def _hold(self, data: bytes) -> None:
        self._tail.append(data)
        self._tail_size += len(data)
        # Drop whole pieces from the front while the rest still covers the tail.
        while self._tail and self._tail_size - len(self._tail[0]) >= self.tail_limit:
            self.left_out += len(self._tail[0])
            self._tail_size -= len(self._tail.popleft())

    def finish(self) -> str:
        """The line saying what was left out (when anything was) and the held tail."""
        data = b"".join(self._tail)
        self._tail.clear()
        excess = max(0, len(data) - self.tail_limit)
        # Start the tail on a character boundary: skip UTF-8 continuation bytes (10xxxxxx).
        while excess < len(data) and data[excess] & 0xC0 == 0x80:
            excess += 1
        self.left_out += excess
        tail = data[excess:].decode("utf-8", "replace")
        unreported, self._reported = self.left_out - self._reported, self.left_out
        if not unreported:
            return tail
        marker = (
            f"\n… reviewgate: {unreported} bytes of output left out here (a step log keeps its first "
            f"{self.head_limit} and last {self.tail_limit} bytes; [verify] log_limit) …\n"
        )
        return marker + tail
