"""Browser tests: Playwright driving Debian's Chromium against pytest-django's live server.

Fixtures:

- ``browser`` — a headless Chromium (``/usr/bin/chromium``, or ``$CHROMIUM_PATH``), one per test
  module. Playwright's sync API keeps an event loop in this thread while it is running, so the
  fixture stops Playwright at the end of the module (another suite may start its own later) and
  allows the synchronous ORM calls the tests make between browser steps
  (``DJANGO_ALLOW_ASYNC_UNSAFE``) only while it runs.
- ``page`` — a fresh browser context and page per test, with ``base_url`` set to the live server.
- :func:`login` — log in through the real login form.

Mark browser tests ``@pytest.mark.browser``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not found at {CHROMIUM} (set CHROMIUM_PATH)")
    sync_api = pytest.importorskip("playwright.sync_api")
    if asyncio._get_running_loop() is not None:
        # Playwright's sync API cannot start while another instance's loop runs in this thread
        # (a session-wide browser fixture of another suite that ran first).
        pytest.skip(
            "another Playwright instance is running in this process; run tests/browser first"
        )
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_api.sync_playwright() as pw:
            chromium = pw.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser, live_server, transactional_db) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def login(page: Any, username: str, password: str, *, next_path: str = "/audit/") -> None:
    """Log in through the login form and land on ``next_path``."""
    page.goto(f"/accounts/login/?next={next_path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"**{next_path}")
