"""What running the synthesized functions needs: a Lambda-like environment and endpoints.

Infrastructure tests read the one synthesis of the session ``synth`` fixture
(tests/conftest.py): the ops CLI's tests read the same template.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.settings import StackSettings
from tests.infra.template import Synth, synthesize
from video_index.local.stack import MotoServer
from worlds.lambda_env import LambdaEnvironment, lambda_environment


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


#: The viewer deployed (docs/viewer.md): JWT authorization, the page on, an OIDC client.
VIEWER_CONTEXT = {
    "api_auth": "jwt",
    "api_jwt_issuer": "https://issuer.example.com/pool-1",
    "api_jwt_audience": "viewer-web, ops-console",
    "viewer": "on",
    "viewer_oidc_client_id": "viewer-web",
    # Cognito's token endpoint is on the user pool's domain, not on the issuer's host
    "viewer_oidc_token_origin": "https://video.auth.eu-west-1.amazoncognito.com",
}


@pytest.fixture(scope="session")
def replica_synth() -> Synth:
    # Given the app synthesized with -c replication=on (once for every test that needs it)
    return synthesize({"replication": "on"})


@pytest.fixture(scope="session")
def viewer_synth() -> Synth:
    # Given the app built with the viewer on (JWT authorization, an OIDC client)
    return synthesize(VIEWER_CONTEXT)
