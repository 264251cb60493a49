"""Waiting until the stream consumer has applied every change made before now.

A writer that needs the aggregates caught up (rebuild before its switch,
reconcile before it mends a bucket) sets a fresh token on one segment item of
each lane it cares about (a segment partition: device × kind) and waits until
the consumer has copied that token to the device item (``m:<kind>``). Records of
one partition are delivered in order, so when the token arrives every change of
that lane written before it has been applied (docs/read-model.md#barriers).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from typing import Final

from video_index.aws.store import ReadModelStore
from video_index.core.errors import TransientError

#: How long a barrier waits before giving up (longer than the largest batching window
#: plus a slow batch; the caller retries later).
DEFAULT_TIMEOUT_SECONDS: Final = 600.0
POLL_SECONDS: Final = 1.0


class AggregationBehind(TransientError):
    """The stream consumer did not catch up in time (see its lag metric and DLQ)."""


Lane = tuple[str, str]  # device, kind


class Barrier:
    def __init__(
        self,
        store: ReadModelStore,
        *,
        pump: Callable[[], object] | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self._store = store
        #: In-process runs without a running consumer (tests) deliver the stream here.
        self._pump = pump
        self._clock = clock
        self._sleep = sleep
        self._timeout = timeout_seconds

    def pass_(self, generation: int, lanes: Iterable[Lane]) -> int:
        """Wait until every change of ``lanes`` made before this call is aggregated;
        returns when the tokens were set (epoch ms)."""
        token = uuid.uuid4().hex
        marked_at = int(self._clock() * 1000)
        waiting = {
            lane
            for lane in sorted(set(lanes))
            if self._store.mark_lane(generation, lane[0], lane[1], token)
        }
        deadline = self._clock() + self._timeout
        while waiting:
            if self._pump is not None:
                self._pump()
            waiting = {
                lane
                for lane in waiting
                if self._store.lane_mark(generation, lane[0], lane[1]) != token
            }
            if not waiting:
                break
            if self._clock() > deadline:
                raise AggregationBehind(
                    f"the stream consumer has not caught up on {len(waiting)} segment"
                    f" partition(s) of generation {generation} (e.g. {sorted(waiting)[0]})"
                )
            if self._pump is None:
                self._sleep(POLL_SECONDS)
        return marked_at
