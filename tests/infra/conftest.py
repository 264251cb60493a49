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
