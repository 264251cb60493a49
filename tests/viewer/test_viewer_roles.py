"""The viewer shows what the caller's role allows and nothing else (docs/viewer.md,
docs/access.md): one journey per role in a real Chromium, on a local stack.

The local stack stands in for an authorizer with ``X-User``, ``X-Roles`` and ``X-Devices``
(docs/access.md); here the test adds them to every request the page makes to the API
(Playwright's routing, in the test: the page has no knob for it), as a deployed token would
carry the role and scope. The stack's access policy maps the site ``north`` to its cameras.

* a ``viewer`` sees no control to annotate (button, key, or any control on a listed
  annotation), and a request forged from the page to annotate is refused (403);
* a ``reviewer`` annotates (it is listed, and the API has it as theirs), and may only set
  the review status of someone else's annotation (the other fields are locked);
* an ``operator`` scoped to one site sees exactly that site's cameras, and a link to a camera
  of another site shows "no such device", as for a camera that does not exist.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route

from tests.support.local_stack import RunningStack, indexed, put_segments, start_local, stop
from tests.viewer.test_viewer_journey import Watch
from video_index.core.access import ENV_ACCESS_POLICY

DAY = "2026-05-12"
ZONE = "UTC"
NORTH = ("north-gate", "north-yard")
SOUTH = "south-dock"
DEVICE = NORTH[0]
#: The setup's annotation, made by someone else (an admin).
THEIRS = "a van at the gate"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    # Given a local stack whose access policy names a site, and three cameras: two of it
    policy = {"sites": {"north": ["north-*"]}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_ACCESS_POLICY, json.dumps(policy))
        running = start_local(tmp_path_factory.mktemp("roles"), "--visibility-timeout", "2")
    try:
        for device in (*NORTH, SOUTH):
            put_segments(running, device, datetime(2026, 5, 12, 8, 0, tzinfo=UTC), 2, playable=True)
        for device in (*NORTH, SOUTH):
            indexed(running, device, 2)
        # And an annotation on the first, made by an admin
        status, body, _ = running.call(
            "POST",
            f"/devices/{DEVICE}/annotations",
            {"target": {"from": "2026-05-12T08:00:02.000Z", "to": "2026-05-12T08:00:06.000Z"},
             "description": THEIRS, "status": "pending"},
            {"X-User": "ada", "X-Roles": "admin"},
        )  # fmt: skip
        assert status == 201, body
        yield running
    finally:
        stop(running.process)


def acting_as(
    browser: Browser, stack: RunningStack, user: str, role: str, devices: str | None = None
) -> BrowserContext:
    """A browser whose requests to the API name the caller, as the local authorizer reads it."""
    context = browser.new_context(timezone_id=ZONE, viewport={"width": 1280, "height": 900})
    caller = {"X-User": user, "X-Roles": role}
    if devices is not None:
        caller["X-Devices"] = devices

    def as_caller(route: Route) -> None:
        route.continue_(headers={**route.request.headers, **caller})

    context.route(f"{stack.ready['api']}/**", as_caller)
    return context


def open_day(page: Page, stack: RunningStack) -> None:
    link = urlencode({"device": DEVICE, "date": DAY, "tz": ZONE})
    page.goto(f"{stack.ready['viewer']}?{link}")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector("[data-testid=range]")
    page.locator("[data-testid=annotation]", has_text=THEIRS).wait_for()


def forged_annotation(page: Page) -> int:
    """A POST made by the page's own script, bypassing its controls: its status."""
    status: int = page.evaluate(
        """async (device) => (await fetch(`devices/${device}/annotations`, {
          method: "POST", headers: {"Content-Type": "application/json"},
          body: JSON.stringify({target: {from: "2026-05-12T08:00:10Z",
                                         to: "2026-05-12T08:00:12Z"}}),
        })).status""",
        DEVICE,
    )
    return status


def test_a_viewer_sees_no_control_to_annotate_and_the_api_refuses_a_forged_one(
    browser: Browser, stack: RunningStack
) -> None:
    # Given a person with the viewer role
    context = acting_as(browser, stack, "vera", "viewer")
    page = context.new_page()
    watch = Watch()
    watch.attach(page, "vera")
    # When they open a day with an annotation
    open_day(page, stack)
    # Then the page knows the role, and shows no control to annotate or change one
    assert page.get_attribute("body", "data-role") == "viewer"
    assert page.locator("[data-testid=add-annotation]").is_hidden()
    assert page.locator("[data-testid=export-form]").is_hidden()
    listed = page.locator("[data-testid=annotation]", has_text=THEIRS)
    assert listed.locator("button").count() == 0
    # And the annotate key opens nothing
    page.locator("body").press("a")
    assert page.locator("[data-testid=annotation-form]").is_hidden()
    # When a request to annotate is forged from the page itself
    status = forged_annotation(page)
    # Then the API refuses it, and nothing was added
    assert status == 403
    _, body = stack.get(
        f"/devices/{DEVICE}/annotations", **{"from": f"{DAY}T00:00:00Z", "to": f"{DAY}T23:59:59Z"}
    )
    assert [item["description"] for item in body["items"]] == [THEIRS]
    # And nothing else failed on the way
    assert [r for r in watch.failed_requests if " 403 POST " not in r] == []
    assert [e for e in watch.console_errors if "403" not in e] == []
    context.close()


def test_a_reviewer_annotates_and_only_reviews_anothers_annotation(
    browser: Browser, stack: RunningStack
) -> None:
    # Given a person with the reviewer role, on the day
    context = acting_as(browser, stack, "rita", "reviewer")
    page = context.new_page()
    watch = Watch()
    watch.attach(page, "rita")
    open_day(page, stack)
    assert page.get_attribute("body", "data-role") == "reviewer"
    # When they annotate a moment of the day
    page.click("[data-testid=add-annotation]")
    form = page.locator("[data-testid=annotation-form]")
    form.locator("input[name=from]").fill(f"{DAY}T08:00:11")
    form.locator("input[name=to]").fill(f"{DAY}T08:00:15")
    form.locator("textarea[name=description]").fill("a cyclist")
    form.locator("button[name=save]").click()
    # Then it is listed, with their controls, and the API has it as theirs
    mine = page.locator("[data-testid=annotation]", has_text="a cyclist")
    mine.wait_for()
    assert mine.locator("[data-action=edit]").count() == 1
    assert mine.locator("[data-action=delete]").count() == 1
    stored = _annotation(stack, mine.get_attribute("data-annotation-id") or "")
    assert (stored["created_by"], stored["description"]) == ("rita", "a cyclist")
    assert (stored["target"]["from"], stored["target"]["to"]) == (
        f"{DAY}T08:00:11.000Z",
        f"{DAY}T08:00:15.000Z",
    )
    # And someone else's annotation offers a review, not an edit or a deletion
    theirs = page.locator("[data-testid=annotation]", has_text=THEIRS)
    assert theirs.locator("[data-action=edit], [data-action=delete]").count() == 0
    # When they review it: only its status may change
    theirs.locator("[data-action=review]").click()
    form.locator("select[name=status]").wait_for()
    assert form.locator("textarea[name=description]").is_disabled()
    assert form.locator("input[name=tags]").is_disabled()
    assert form.locator("input[name=from]").is_disabled()
    form.locator("select[name=status]").select_option("approved")
    form.locator("button[name=save]").click()
    # Then the API has it approved by them, everything else as it was
    page.locator("[data-testid=annotation][data-status=approved]", has_text=THEIRS).wait_for()
    reviewed = _annotation(stack, theirs.get_attribute("data-annotation-id") or "")
    assert (reviewed["status"], reviewed["updated_by"], reviewed["created_by"]) == (
        "approved",
        "rita",
        "ada",
    )
    assert reviewed["description"] == THEIRS
    assert watch.failed_requests == [] and watch.console_errors == []
    context.close()


def _annotation(stack: RunningStack, annotation_id: str) -> dict[str, object]:
    status, body = stack.get(f"/devices/{DEVICE}/annotations/{annotation_id}")
    assert status == 200, body
    return body  # type: ignore[no-any-return]


def test_an_operator_of_one_site_sees_only_its_cameras(
    browser: Browser, stack: RunningStack
) -> None:
    # Given an operator whose scope is the site "north"
    context = acting_as(browser, stack, "otto", "operator", devices="site:north")
    page = context.new_page()
    watch = Watch()
    watch.attach(page, "otto")
    # When they open the viewer
    page.goto(stack.ready["viewer"])
    page.wait_for_selector("body[data-ready=true]")
    # Then the device list is the site's cameras, exactly (every camera exists: an admin sees all)
    shown = page.eval_on_selector_all(
        "[data-testid^=device-]", "els => els.map(e => e.dataset.testid.slice(7))"
    )
    assert sorted(shown) == sorted(NORTH)
    _, every = stack.get("/devices")
    assert SOUTH in {d["device"] for d in every["items"]}
    assert page.get_attribute("body", "data-role") == "operator"
    # When they follow a link to a camera of another site, and to one that does not exist
    seen = {}
    for device in (SOUTH, "nowhere-cam"):
        page.goto(f"{stack.ready['viewer']}?{urlencode({'device': device, 'tz': ZONE})}")
        page.wait_for_selector("body[data-ready=true]")
        seen[device] = page.inner_text("#status")
        # Then the page says there is no such device, and shows none of it
        assert page.locator("#calendar-section").is_hidden()
    assert seen == {
        SOUTH: f'no such device "{SOUTH}"',
        "nowhere-cam": 'no such device "nowhere-cam"',
    }
    # (the only failures: those two devices' 404s)
    assert all(" 404 GET " in r for r in watch.failed_requests), watch.failed_requests
    assert len(watch.failed_requests) == 2, watch.failed_requests
    context.close()
