"""One synthesis of the default app for every infrastructure test (synthesis is slow)."""

from __future__ import annotations

import pytest

from tests.infra.template import Synth, synthesize


@pytest.fixture(scope="session")
def synth() -> Synth:
    # Given the app exactly as app.py builds it, with default settings (IAM authorization)
    # When it is synthesized once for the whole session
    # Then every infrastructure test reads this one template
    return synthesize()


#: The viewer deployed (docs/viewer.md): JWT authorization, the page on, an OIDC client.
VIEWER_CONTEXT = {
    "api_auth": "jwt",
    "api_jwt_issuer": "https://issuer.example.com/pool-1",
    "api_jwt_audience": "viewer-web, ops-console",
    "viewer": "on",
    "viewer_oidc_client_id": "viewer-web",
}


@pytest.fixture(scope="session")
def viewer_synth() -> Synth:
    # Given the app built with the viewer on (JWT authorization, an OIDC client)
    return synthesize(VIEWER_CONTEXT)
