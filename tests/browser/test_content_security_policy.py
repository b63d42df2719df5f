"""The Content-Security-Policy leaves every page working in real Chromium: htmx swaps, the search
playground, the Swagger UI — and Chromium reports no violation on any of them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.audit.conftest import history  # noqa: F401  (fixture)
from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def watch_violations(page: Any) -> list[str]:
    """Collect CSP violations: console errors naming the policy, and securitypolicyviolation."""
    seen: list[str] = []
    page.on(
        "console",
        lambda m: seen.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => "
        "console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI));"
    )
    return seen


def test_htmx_pages_work_under_the_policy(page, auditor, history):  # noqa: F811
    violations = watch_violations(page)
    login(page, "ada", "pw-ada-123")
    page.get_by_label("Action").select_option("entry.revised")
    page.wait_for_url(re.compile(r"/audit/\?.*action=entry\.revised"))
    expect(page.locator("#audit-rows tr[id^=event-]")).to_have_count(2)
    page.goto("/memories/acme/search/?q=cluster")
    expect(page.get_by_role("heading", name=re.compile("Search playground"))).to_be_visible()
    grow = page.locator("div.grow").first
    assert grow.evaluate("e => getComputedStyle(e).flexGrow") == "1"  # app.css, not inline
    page.goto("/review/")
    assert violations == []


def test_the_swagger_ui_renders_under_the_policy(page, staff):
    violations = watch_violations(page)
    login(page, "root", "pw-root-123", next_path="/api/v1/docs/")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible(timeout=20_000)
    assert page.locator(".swagger-ui .opblock").count() >= 20
    assert violations == []


def test_an_htmx_swap_sets_no_style_attribute(page, auditor, history):  # noqa: F811
    """An element may carry a style attribute the page never served: the CSSOM leaves one behind
    (a textarea the user resized, an extension, a cleared ``el.style``). htmx's settle copied it
    onto the swapped-in element with setAttribute, which the policy refuses."""
    violations = watch_violations(page)
    login(page, "ada", "pw-ada-123")
    page.evaluate(
        "() => { const r = document.getElementById('audit-results');"
        " r.style.minHeight = '1px'; r.style.minHeight = ''; }"
    )
    assert page.locator("#audit-results").get_attribute("style") == ""
    page.get_by_label("Action").select_option("entry.revised")
    page.wait_for_url(re.compile(r"/audit/\?.*action=entry\.revised"))
    expect(page.locator("#audit-rows tr[id^=event-]")).to_have_count(2)
    page.wait_for_timeout(100)  # htmx settles 20 ms after the swap
    assert violations == []
