"""One synthesis of the default app for every infrastructure test (synthesis is slow), and
what running the synthesized functions needs: a Lambda-like environment and endpoints."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.settings import StackSettings
from tests.infra.template import Synth, synthesize
from tests.support.lambda_env import LambdaEnvironment, lambda_environment
from video_index.local.stack import MotoServer


@pytest.fixture(scope="session")
def synth() -> Synth:
    # Given the app exactly as app.py builds it, with default settings (IAM authorization)
    # When it is synthesized once for the whole session
    # Then every infrastructure test reads this one template
    return synthesize()


@pytest.fixture(scope="session")
def lambda_env() -> LambdaEnvironment:
    """The python3.13 runtime's and the stack's Powertools layer's packages, nothing else."""
    return lambda_environment(StackSettings().powertools_layer_version)


@pytest.fixture(scope="module")
def moto_server() -> Iterator[MotoServer]:
    """S3 and SQS on a loopback port (each test makes its own buckets)."""
    server = MotoServer().start()
    try:
        yield server
    finally:
        server.stop()
