"""The running ``video-index local`` shared by the tests of this folder (one per session)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.local_stack import RunningStack, start_local, stop


@pytest.fixture(scope="session")
def local_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    """``video-index local --visibility-timeout 2`` for the session; stopped afterwards.

    Tests sharing it must not depend on one another: each uses its own device (the
    poison-message test leaves the DLQ non-empty).
    """
    stack = start_local(tmp_path_factory.mktemp("local"), "--visibility-timeout", "2")
    try:
        yield stack
    finally:
        stop(stack.process)
