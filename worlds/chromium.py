"""Chromium as the tests and the benchmarks drive it (``tests/support/browser.py``,
``bench/live.py``): the machine's own Chromium (Debian's decodes H.264 through Media Source
Extensions), never Playwright's download, with the flags a headless run in a container
needs. Playwright is imported where a browser is launched, never at import time.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

DEFAULT_CHROMIUM: Final = "/usr/bin/chromium"

CHROMIUM_FLAGS: Final[tuple[str, ...]] = (
    "--no-sandbox",  # tests run as root in containers, where the sandbox cannot start
    "--disable-gpu",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
    "--autoplay-policy=no-user-gesture-required",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-quic",
    "--mute-audio",
    # Played media must not be paused or throttled for being in an unseen page.
    "--disable-background-media-suspend",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
)


def chromium_executable() -> str | None:
    """``$CHROMIUM`` or ``/usr/bin/chromium`` when it runs here, else None."""
    return shutil.which(os.environ.get("CHROMIUM") or DEFAULT_CHROMIUM)


@contextmanager
def launched(executable: str) -> Iterator[Any]:
    """A headless Chromium (``executable``) through Playwright, closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=list(CHROMIUM_FLAGS)
        )
        try:
            yield browser
        finally:
            browser.close()
