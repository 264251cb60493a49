"""The viewer is usable with the keyboard alone and axe-core finds nothing (docs/viewer.md).

axe-core (npm, MPL-2.0; npm/package.json pins it) is injected into the real page — in a context
that bypasses the page's Content-Security-Policy only so the test may add the script — and
run on each screen a person reaches: the calendar, the day (timeline and player, frame
previews, the export form and its messages), the annotation form and the grid of cameras in
step. Every violation is reported with its rule and elements. The same journey is
then made with the keyboard only: every control is reached by Tab, shows a visible focus, and
Enter or Space works it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page

from tests.support.browser import axe_core_path
from tests.support.local_stack import RunningStack, indexed, put_segments

DEVICE = "cam-a11y"
DAY = "2026-05-12"
ZONE = "Europe/Berlin"


@pytest.fixture(scope="module")
def stack(local_stack: RunningStack) -> RunningStack:
    # Given a device with a few files on one day
    put_segments(local_stack, DEVICE, datetime(2026, 5, 12, 8, 0, tzinfo=UTC), 3)
    indexed(local_stack, DEVICE, 3)
    # And an annotation on it (its list items have controls too)
    status, body, _ = local_stack.call(
        "POST",
        f"/devices/{DEVICE}/annotations",
        {"target": {"from": "2026-05-12T08:00:05.000Z", "to": "2026-05-12T08:00:15.000Z"},
         "description": "a van", "status": "pending"},
        {"X-User": "setup"},
    )  # fmt: skip
    assert status == 201, body
    return local_stack


@pytest.fixture
def page(browser: Browser, stack: RunningStack) -> Iterator[Page]:
    context = browser.new_context(bypass_csp=True, timezone_id=ZONE)
    opened = context.new_page()
    yield opened
    context.close()


def violations(page: Page) -> list[str]:
    """axe-core's violations of the page as it is now: "rule: target, target …"."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(axe_core_path()))
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document)).violations.map(v => "
        "({id: v.id, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))"
    )
    return [f"{v['id']} ({v['help']}): {', '.join(v['nodes'])}" for v in found]


def open_calendar(page: Page, stack: RunningStack) -> None:
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'tz': ZONE})}")
    page.wait_for_selector(f"[data-testid=calendar][data-device={DEVICE}]")
    page.wait_for_selector(f"[data-testid=day-{DAY}]")


def test_axe_finds_no_violation_on_the_calendar_day_and_annotation_screens(
    page: Page, stack: RunningStack
) -> None:
    found: dict[str, list[str]] = {}
    # When the calendar of the device is shown
    open_calendar(page, stack)
    found["calendar"] = violations(page)
    # And the day is opened
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'date': DAY, 'tz': ZONE})}")
    page.wait_for_selector("[data-testid=range]")
    found["day"] = violations(page)
    # And the annotation form is opened
    page.click("[data-testid=add-annotation]")
    page.wait_for_selector("[data-testid=annotation-form]:not([hidden])")
    found["annotation"] = violations(page)
    # And the export form says something (a window without footage)
    page.fill("[data-testid=export-from]", f"{DAY}T20:00:00")
    page.fill("[data-testid=export-to]", f"{DAY}T20:10:00")
    page.click("[data-testid=export-start]")
    page.wait_for_selector("[data-testid=export-state]:has-text('No footage')")
    # And a frame preview is shown by hovering the range
    box = page.locator("[data-testid=range]").first.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector("[data-testid=frame-preview]:not([hidden])")
    found["day with export and preview"] = violations(page)
    # And the grid of cameras in step is opened
    query = urlencode({"devices": DEVICE, "t": "2026-05-12T08:00:05.000Z"})
    page.goto(f"{stack.ready['viewer']}/grid.html?{query}")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector(f"[data-testid=grid-row-{DEVICE}] .grid-range")
    found["grid"] = violations(page)
    # Then axe-core finds no violation on any of them
    assert found == {screen: [] for screen in found}, "\n".join(
        f"{screen}: {violation}" for screen, seen in found.items() for violation in seen
    )


FOCUS_STYLE = """() => {
  const e = document.activeElement;
  const s = getComputedStyle(e);
  return {testid: e.dataset.testid || e.id || e.name || e.tagName,
          outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0,
          shadow: s.boxShadow !== 'none'};
}"""


def tab_to(page: Page, selector: str, limit: int = 80) -> dict[str, Any]:
    """Press Tab until ``selector`` has the focus; its focus style then."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            style: dict[str, Any] = page.evaluate(FOCUS_STYLE)
            assert style["outline"] or style["shadow"], f"no visible focus on {style}"
            return style
    raise AssertionError(f"{selector} never got the focus by Tab")


def test_the_keyboard_alone_reaches_and_works_every_control(
    page: Page, stack: RunningStack
) -> None:
    # Given the viewer opened on the device's month
    open_calendar(page, stack)
    # When the person tabs to the month navigation and presses Enter, then Space
    tab_to(page, "[data-testid=next-month]")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=calendar][data-month='2026-06']")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.dataset.testid") == "prev-month"
    page.keyboard.press(" ")
    page.wait_for_selector("[data-testid=calendar][data-month='2026-05']")
    # And tabs into the calendar, to the day, and opens it with Enter
    tab_to(page, "[data-testid^=day-]")
    page.focus(f"[data-testid=day-{DAY}]")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=range]")
    # Then the day's controls are reached by Tab with a visible focus
    for control in ("[data-testid=prev-day]", "[data-testid=next-day]", "[data-testid=timeline]",
                    "[data-testid=export-from]", "[data-testid=export-to]",
                    "[data-testid=export-start]", "[data-testid=speed]",
                    "[data-testid=add-annotation]"):  # fmt: skip
        tab_to(page, control)
    # And the timeline picks a moment with the arrow keys and Space
    page.focus("[data-testid=timeline]")
    page.keyboard.press("End")
    page.keyboard.press(" ")
    assert page.get_attribute("[data-testid=timeline]", "aria-valuetext") == "23:59:59"
    # And on the timeline, S and E put the export window at the cursor (08:00 to 08:01)
    page.keyboard.press("Home")
    for _ in range(10):  # Europe/Berlin: 08:00 UTC is 10:00 local
        page.keyboard.press("PageUp")
    page.keyboard.press("s")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("e")
    # (Chromium writes a time on the minute without its seconds)
    assert page.input_value("[data-testid=export-from]") == f"{DAY}T10:00"
    assert page.input_value("[data-testid=export-to]") == f"{DAY}T10:01"
    assert page.get_attribute("[data-testid=export-selection]", "data-from") == (
        "2026-05-12T08:00:00.000Z"
    )
    # And the export starts with Enter on its button, and says how it went in words (this
    # device's files are not playable video: nothing to export)
    tab_to(page, "[data-testid=export-start]")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=export-state]:has-text('no playable video file')")
    # And the annotation form opens with Enter and closes with Enter on Cancel
    tab_to(page, "[data-testid=add-annotation]")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=annotation-form]:not([hidden])")
    tab_to(page, "[data-testid=annotation-form] button[name=cancel]")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=annotation-form]", state="hidden")


#: Every control a person can see: what Tab must reach (one radio of a group, and one day
#: of the calendar's grid, which arrow keys move within).
CONTROLS = """() => {
  const all = [...document.querySelectorAll('a[href], button, input:not([type=hidden]), '
    + 'select, textarea, summary, video[controls], [tabindex]')];
  const seen = all.filter((e) => !e.disabled && e.getClientRects().length > 0
    && !e.closest('[hidden], dialog:not([open])')
    && !(e.type === 'radio' && !e.checked)
    && !(e.matches('button.day') && e.tabIndex < 0));
  seen.forEach((e, i) => { e.dataset.control = String(i); });
  return seen.map((e) => e.dataset.testid || e.id || e.name || e.textContent.trim() || e.tagName);
}"""


def test_tab_reaches_every_visible_control_with_a_visible_focus(
    page: Page, stack: RunningStack
) -> None:
    # Given the day open with its annotation listed and the annotation form open
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'date': DAY, 'tz': ZONE})}")
    page.wait_for_selector("[data-testid=annotation]")
    page.click("[data-testid=add-annotation]")
    page.wait_for_selector("[data-testid=annotation-form]:not([hidden])")
    controls = page.evaluate(CONTROLS)
    assert len(controls) > 20, controls
    # When the person presses Tab through the whole page
    page.focus("#home")
    reached: dict[str, Any] = {}
    for _ in range(3 * len(controls)):
        style = page.evaluate(FOCUS_STYLE)
        index = page.evaluate("document.activeElement.dataset.control")
        if index is not None and reached.get(index) is not True:
            reached[index] = True if style["outline"] or style["shadow"] else style
        page.keyboard.press("Tab")
    # Then every visible control got the focus, and each showed it
    missing = [name for i, name in enumerate(controls) if str(i) not in reached]
    assert missing == []
    unseen = [(controls[int(i)], seen) for i, seen in reached.items() if seen is not True]
    assert unseen == []
