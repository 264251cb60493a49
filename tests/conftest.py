"""Shared fixtures: fake AWS credentials, moto, and a DynamoDB endpoint over HTTP.

moto is the engine: in-process (``mock_aws``) for most tests, and a moto server in a
process of its own wherever a test needs an endpoint over HTTP (deployed functions, the
ops CLI, request counts on the wire). ``VIDEO_INDEX_TEST_DYNAMODB_ENDPOINT=URL`` points
those tests at a DynamoDB-compatible endpoint the developer runs instead, and adds it as
a second engine to every engine-parametrized test (docs/testing.md).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from moto import mock_aws

from tests.support.local_stack import RunningStack, start_local, stop
from tests.support.tables import ENDPOINT_ENV, ENGINES, TableFactory, make_table_factory
from video_index.local.moto_process import MotoProcess

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from tests.infra.template import Synth

# Tests never reach real AWS: fake credentials, a fixed region, no X-Ray.
for _name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
    os.environ.pop(_name, None)
# Commands never find a developer's running `video-index local` by itself: the default
# ready file (docs/local.md#the-ready-file) is a path of this run's own, empty until a test
# writes it (each test that starts a stack passes its own).
os.environ["VIDEO_INDEX_READY_FILE"] = os.path.join(
    tempfile.mkdtemp(prefix="video-index-tests-"), "ready.json"
)
os.environ.update(
    AWS_ACCESS_KEY_ID="testing",
    AWS_SECRET_ACCESS_KEY="testing",
    AWS_DEFAULT_REGION="us-east-1",
    POWERTOOLS_TRACE_DISABLED="1",
    POWERTOOLS_METRICS_NAMESPACE="VideoIndexTest",
    POWERTOOLS_LOG_LEVEL="WARNING",
)


@pytest.fixture(scope="session")
def dynamodb_endpoint() -> Iterator[str]:
    """One DynamoDB endpoint over HTTP for the whole run: ``VIDEO_INDEX_TEST_DYNAMODB_ENDPOINT``
    when set, else moto's server in its own process (its tables survive the resets of the
    in-process ``mock_aws``). Tests isolate themselves by table name."""
    given = os.environ.get(ENDPOINT_ENV)
    if given:
        yield given
        return
    with MotoProcess() as server:
        yield server.endpoint


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def new_table(engine: str, request: pytest.FixtureRequest) -> TableFactory:
    return make_table_factory(engine, request)


@pytest.fixture
def aws() -> Iterator[None]:
    """moto for S3/SQS (and DynamoDB when the engine is moto); requests to an endpoint over
    HTTP (``dynamodb_endpoint``) pass through."""
    with mock_aws():
        yield


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


@pytest.fixture(scope="session")
def synth() -> Synth:
    """One synthesis of the default app for every test that reads the template
    (infrastructure tests, and the ops CLI's tests of the state machines' inputs)."""
    # Given the app exactly as app.py builds it, with default settings (IAM authorization)
    # When it is synthesized once for the whole session
    # Then every test reads this one template
    from tests.infra.template import synthesize  # CDK loads only where a test needs it

    return synthesize()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One headless Chromium per test module that drives one (each test opens its own
    context), and one at a time across workers: a module's Chromium holds the run's lock
    while it lives, so a worker never waits for the other's whole session."""
    from tests.support.browser import chromium, run_lock_dir  # Playwright loads only here

    with chromium(run_lock_dir(tmp_path_factory)) as launched:
        yield launched


# --- property tests: deterministic in CI, deeper on demand -------------------------------------
# ``ci`` (the default): the same examples on every run and machine, so a red run is a finding
# that reproduces, never the luck of a draw; no deadline (a shared 2-core machine's timing is
# not the product's). ``deep`` (``make test-deep``): random examples, ten times as many where a
# test names its own budget. Chosen by ``$HYPOTHESIS_PROFILE``.
import hypothesis  # noqa: E402 (here, with what it is for)

HYPOTHESIS_PROFILE_ENV = "HYPOTHESIS_PROFILE"
DEEP_FACTOR = 10
CI_EXAMPLES = 100
hypothesis.settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, max_examples=CI_EXAMPLES, print_blob=True
)
hypothesis.settings.register_profile(
    "deep",
    derandomize=False,
    deadline=None,
    max_examples=CI_EXAMPLES * DEEP_FACTOR,
    print_blob=True,
)
hypothesis.settings.load_profile(os.environ.get(HYPOTHESIS_PROFILE_ENV, "ci"))


#: The run is ``make test-deep``: the ``deep`` profile, which also keeps the ``deep`` tests.
DEEP_RUN = os.environ.get(HYPOTHESIS_PROFILE_ENV) == "deep"


def pytest_itemcollected(item: pytest.Item) -> None:
    """Each test's group for ``--dist loadgroup`` (:func:`_group`), given as it is collected:
    pytest-xdist reads the groups in its own ``pytest_collection_modifyitems``."""
    group = _group(item)
    if group is not None:
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``deep`` (minutes-long runs) are deselected unless the run is deep
    (``make test-deep``) or its ``-m`` names them. Under ``deep``, a test's own ``max_examples``
    (its budget for ``make test``'s time) grows by ``DEEP_FACTOR``, to at least the ``ci``
    profile's default (a world-driving property's small CI budget is no measure of how deep
    it should go): a profile cannot override a test's explicit settings, so the settings
    object ``@settings`` attached to the test is replaced (once per function)."""
    if not DEEP_RUN and "deep" not in (config.getoption("markexpr") or ""):
        deep = [item for item in items if item.get_closest_marker("deep") is not None]
        if deep:
            config.hook.pytest_deselected(items=deep)
            items[:] = [item for item in items if item.get_closest_marker("deep") is None]
    if hypothesis.settings.default.derandomize:
        return
    scaled: set[int] = set()
    for item in items:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or id(test) in scaled or own.max_examples >= CI_EXAMPLES * DEEP_FACTOR:
            continue
        scaled.add(id(test))
        deep = max(own.max_examples * DEEP_FACTOR, CI_EXAMPLES)
        test._hypothesis_internal_use_settings = hypothesis.settings(own, max_examples=deep)


#: The session fixtures that synthesize the app (here and in tests/infra/conftest.py).
SYNTHESES = frozenset({"synth", "replica_synth", "viewer_synth"})


def _group(item: pytest.Item) -> str | None:
    """The worker group of ``item`` under ``--dist loadgroup`` (``make test``'s ``-n 2``):
    every test that drives Chromium on one worker (one browser at a time is the rule, and
    on one worker no test waits in its setup for the other worker's browser), every test
    that reads a synthesized template on one worker (the CDK is loaded and the app
    synthesized once), every test of a module with a module-wide fixture with the rest of
    its module (its stack, media or world built once, not once per worker), any other test
    alone. xdist hands out the largest groups first, so the browser's chain starts at once
    while the other worker takes the templates, then the rest."""
    names = set(getattr(item, "fixturenames", ()))
    if "browser" in names:
        return "browser"
    if names & SYNTHESES:
        return "synth"
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.values() if info is not None else ()
    if any(defs[-1].scope == "module" for defs in definitions if defs):
        return item.nodeid.split("::", 1)[0]
    return None
