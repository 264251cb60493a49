"""Stream delivery at its worst, for the I1 property: what Lambda may do to a shard's records.

Records still arrive in shard order (that Lambda guarantees), but cut into batches
of any size, a batch re-delivered from any earlier point (at least once), resumed
from the record a partial failure names, bisected when the function dies, and the
function killed between any two of its writes.
"""

from __future__ import annotations

import random
import threading
from typing import Any

from video_index.local.streams import StreamEventSource


class Killed(Exception):
    """The consumer's process died mid-batch (Lambda sees a function error)."""


class Killer:
    """A DynamoDB client that dies before a random share of its requests."""

    def __init__(self, client: Any, rate: float, seed: int) -> None:
        self._client = client
        self._rate = rate
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.kills = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if name not in {"put_item", "get_item", "query"}:
            return method

        def call(**kwargs: Any) -> Any:
            with self._lock:
                die = self._rng.random() < self._rate
            if die:
                self.kills += 1
                raise Killed(name)
            return method(**kwargs)

        return call


class ChaoticStreamSource(StreamEventSource):
    """:class:`StreamEventSource` with the delivery above (records in order, batches not)."""

    def __init__(self, *args: Any, seed: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rng = random.Random(seed)
        self.invocations = 0

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        done, stuck = 0, 0
        while done < len(batch):
            start = done
            if done and self._rng.random() < 0.2:
                start = self._rng.randint(max(0, done - 5), done)  # delivered again
            end = min(len(batch), done + self._rng.randint(1, 8))
            reached = start + self._invoke(batch[start:end])
            if reached <= done:
                stuck += 1
                assert stuck < 200, "a stream batch never succeeded"
            else:
                stuck = 0
                done = reached
        self.delivered += len(batch)

    def _invoke(self, records: list[dict[str, Any]]) -> int:
        """Records of ``records`` processed from its first before the invocation ended."""
        self.invocations += 1
        try:
            response = self._handler({"Records": records}) or {}
        except Killed:
            half = len(records) // 2
            if not half or self._rng.random() < 0.5:
                return 0  # retried whole
            first = self._invoke(records[:half])  # bisected
            return first if first < half else half + self._invoke(records[half:])
        failures = [f["itemIdentifier"] for f in response.get("batchItemFailures", [])]
        if not failures:
            return len(records)
        sequence = [r["dynamodb"]["SequenceNumber"] for r in records]
        return min(sequence.index(f) for f in failures)
