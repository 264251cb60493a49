"""The annotation form's times never shift (docs/viewer.md, "Times that never shift").

On both of Europe/Berlin's daylight-saving days of 2026 a person edits annotations in a real
Chromium on the local stack: an edit of only the text leaves the stored instants exactly as
they were (milliseconds included, the earlier of two repeated instants included); in the
repeated hour the form shows the offset and the person's choice is what is saved; a time the
clocks skip is refused with a message instead of being moved. The stored instants are read
back through the API; the expected instants are written out here, not computed by the page.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack, indexed, put_segments

DEVICE = "cam-form-times"
ZONE = "Europe/Berlin"
FALL_BACK = "2026-10-25"  # 03:00 CEST → 02:00 CET at 01:00Z: 02:00–03:00 happens twice
SPRING_FORWARD = "2026-03-29"  # 02:00 CET → 03:00 CEST at 01:00Z: 02:00–03:00 never happens


@pytest.fixture(scope="module")
def stack(local_stack: RunningStack) -> RunningStack:
    # Given video on both DST days, so the days open in the viewer
    put_segments(local_stack, DEVICE, datetime(2026, 10, 25, 0, 20, tzinfo=UTC), 1)
    put_segments(local_stack, DEVICE, datetime(2026, 3, 29, 0, 50, tzinfo=UTC), 1)
    indexed(local_stack, DEVICE, 2)
    return local_stack


@pytest.fixture
def page(browser: Browser, stack: RunningStack) -> Iterator[Page]:
    context = browser.new_context(timezone_id="America/New_York")
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors


def create(stack: RunningStack, start: str, end: str, text: str) -> str:
    status, body, _ = stack.call(
        "POST",
        f"/devices/{DEVICE}/annotations",
        {"target": {"from": start, "to": end}, "description": text, "status": "pending"},
        {"X-User": "setup"},
    )
    assert status == 201, body
    return str(body["annotation_id"])


def stored(stack: RunningStack, annotation_id: str) -> dict[str, Any]:
    status, body = stack.get(f"/devices/{DEVICE}/annotations/{annotation_id}")
    assert status == 200, body
    return dict(body)


def open_form(page: Page, stack: RunningStack, day: str, annotation_id: str) -> Any:
    """Open the day in Berlin, sign in by name, and start editing the annotation."""
    viewer = stack.ready["viewer"]
    page.goto(viewer)
    page.wait_for_selector("body[data-ready=true]")
    page.click("[data-testid=sign-in]")
    page.click("[data-testid=sign-in-dialog] summary")
    page.fill("#user-input", "editor")
    page.click("[data-testid=sign-in-save]")
    page.goto(f"{viewer}?{urlencode({'device': DEVICE, 'date': day, 'tz': ZONE})}")
    page.wait_for_selector("body[data-ready=true]")
    page.locator(f"[data-annotation-id='{annotation_id}'] [data-action=edit]").click()
    form = page.locator("[data-testid=annotation-form]")
    form.locator("textarea[name=description]").wait_for()
    return form


def save_and_wait(page: Page, form: Any, stack: RunningStack, annotation_id: str) -> dict[str, Any]:
    before = stored(stack, annotation_id)["version"]
    form.locator("button[name=save]").click()
    page.wait_for_selector("[data-testid=annotation-form]", state="hidden")
    after = stored(stack, annotation_id)
    assert after["version"] == before + 1
    return after


def test_an_edit_of_the_text_in_the_repeated_hour_keeps_both_instants(
    page: Page, stack: RunningStack
) -> None:
    # Given an annotation from the first 02:30:00.123 (CEST) to the second 02:30:00.987 (CET)
    aid = create(stack, "2026-10-25T00:30:00.123Z", "2026-10-25T01:30:00.987Z", "first")
    form = open_form(page, stack, FALL_BACK, aid)
    # Then both fields show 02:30 and, since it happens twice, the offset of each
    assert form.locator("input[name=from]").input_value() == "2026-10-25T02:30"
    assert form.locator("input[name=to]").input_value() == "2026-10-25T02:30"
    from_offset = form.locator("[data-testid=from-offset]")
    to_offset = form.locator("[data-testid=to-offset]")
    assert from_offset.is_visible() and to_offset.is_visible()
    assert "UTC+02:00" in from_offset.locator("option:checked").inner_text()
    assert "UTC+01:00" in to_offset.locator("option:checked").inner_text()
    # When only the text is edited and saved
    form.locator("textarea[name=description]").fill("only the text changed")
    after = save_and_wait(page, form, stack, aid)
    # Then the stored instants are exactly the ones before, milliseconds included
    assert after["description"] == "only the text changed"
    assert after["target"] == {"from": "2026-10-25T00:30:00.123Z", "to": "2026-10-25T01:30:00.987Z"}


def test_the_person_chooses_which_repeated_instant_is_meant(
    page: Page, stack: RunningStack
) -> None:
    # Given an annotation before the repeated hour
    aid = create(stack, "2026-10-24T22:00:00.500Z", "2026-10-25T02:00:00.000Z", "choose")
    form = open_form(page, stack, FALL_BACK, aid)
    # When the person types 02:15 as its start: a time that happens twice
    form.locator("input[name=from]").fill("2026-10-25T02:15:00")
    from_offset = form.locator("[data-testid=from-offset]")
    from_offset.wait_for(state="visible")
    labels = from_offset.locator("option").all_inner_texts()
    assert len(labels) == 2 and "UTC+02:00" in labels[0] and "UTC+01:00" in labels[1]
    # And chooses the second one (winter time, UTC+01:00)
    from_offset.select_option(index=1)
    after = save_and_wait(page, form, stack, aid)
    # Then that instant is saved, and the untouched end is kept exactly
    assert after["target"] == {"from": "2026-10-25T01:15:00.000Z", "to": "2026-10-25T02:00:00.000Z"}


def test_an_edit_of_the_text_on_the_spring_forward_day_keeps_both_instants(
    page: Page, stack: RunningStack
) -> None:
    # Given an annotation across Berlin's skipped hour: 01:59:59.750 CET to 03:00:00.250 CEST
    aid = create(stack, "2026-03-29T00:59:59.750Z", "2026-03-29T01:00:00.250Z", "spring")
    form = open_form(page, stack, SPRING_FORWARD, aid)
    assert form.locator("input[name=from]").input_value() == "2026-03-29T01:59:59"
    assert form.locator("input[name=to]").input_value() == "2026-03-29T03:00"
    assert form.locator("[data-testid=from-offset]").is_hidden()
    # When only the text is edited and saved
    form.locator("textarea[name=description]").fill("spring, text only")
    after = save_and_wait(page, form, stack, aid)
    # Then the stored instants are unchanged, milliseconds included
    assert after["target"] == {"from": "2026-03-29T00:59:59.750Z", "to": "2026-03-29T01:00:00.250Z"}


def test_a_time_the_clocks_skip_is_refused_not_moved(page: Page, stack: RunningStack) -> None:
    # Given an annotation on the spring-forward day
    aid = create(stack, "2026-03-29T00:50:00.000Z", "2026-03-29T01:10:00.000Z", "skip")
    form = open_form(page, stack, SPRING_FORWARD, aid)
    # When the person types 02:30, which does not exist in Berlin that day, and saves
    form.locator("input[name=to]").fill("2026-03-29T02:30:00")
    form.locator("button[name=save]").click()
    # Then the form says so, naming the field, and nothing is saved
    error = form.locator(".form-error")
    error.wait_for(state="visible")
    assert "to" in error.inner_text() and "does not exist" in error.inner_text()
    assert stored(stack, aid)["version"] == 1
    # When the person corrects it to 03:30 (CEST)
    form.locator("input[name=to]").fill("2026-03-29T03:30:00")
    after = save_and_wait(page, form, stack, aid)
    # Then that is saved, and the untouched start is kept
    assert after["target"] == {"from": "2026-03-29T00:50:00.000Z", "to": "2026-03-29T01:30:00.000Z"}
