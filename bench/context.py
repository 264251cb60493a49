"""What every benchmark gets: a console, the run's options and a shared DynamoDB endpoint."""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from types import TracebackType

from rich.console import Console

from video_index.local.moto_process import MotoProcess


class BenchmarkFailed(RuntimeError):
    """A benchmark's own correctness check failed: its figures are not to be trusted."""


def isolate_from_aws() -> None:
    """Fake credentials and a fixed region: a benchmark never reaches real AWS."""
    for name in (
        "AWS_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_DYNAMODB",
        "AWS_ENDPOINT_URL_S3",
    ):
        os.environ.pop(name, None)
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        POWERTOOLS_TRACE_DISABLED="1",
        POWERTOOLS_METRICS_NAMESPACE="VideoIndexBench",
        POWERTOOLS_LOG_LEVEL="ERROR",
    )


@dataclass
class BenchContext:
    console: Console
    quick: bool = False
    _stack: ExitStack = field(default_factory=ExitStack, repr=False)
    _dynamodb: MotoProcess | None = field(default=None, repr=False)

    def dynamodb_server(self) -> MotoProcess:
        """One moto server process for the whole run, the DynamoDB endpoint over loopback
        (started on first use, stopped at exit)."""
        if self._dynamodb is None:
            self._dynamodb = self._stack.enter_context(MotoProcess())
        return self._dynamodb

    def __enter__(self) -> BenchContext:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stack.close()
