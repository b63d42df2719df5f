"""Every failed htmx request says so in place, with a way forward (static/js/htmx-errors.js):
a session that ended while a reviewer typed a rejection, a security token rotated by logging in
again in another tab, a server that cannot be reached. What was typed stays in its field, and
"Retry" after logging in again sends it — with the fresh token."""

from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session
from playwright.sync_api import expect

from proposals.models import Proposal, ProposalStatus
from review.models import Decision
from tests.review_ui.conftest import consolidate, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COMMENT = "Drops the 02:00 schedule the other entry keeps."


def test_a_rejection_after_the_session_ended_is_kept_and_retried_after_logging_in(
    page, memory, agent, reviewer
):
    p = consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    row = page.locator(f"#proposal-{p.pk}")
    row.locator("summary").click()
    row.get_by_label("Reason").select_option("wrong")
    row.get_by_label("Rejection comment").fill(COMMENT)
    Session.objects.all().delete()  # the session ends while the reviewer types

    row.get_by_role("button", name=f"Reject proposal #{p.pk}", exact=True).click()
    error = row.locator("[data-request-error]")
    expect(error).to_be_visible()
    assert "Your session has ended" in error.inner_text()
    assert "what you typed is still here" in error.inner_text()
    assert page.url.endswith("/review/"), "the page was left"
    assert row.get_by_label("Rejection comment").input_value() == COMMENT
    assert Proposal.objects.get(pk=p.pk).status == ProposalStatus.PENDING

    # "Log in again" opens a new tab; logging in there rotates the CSRF token.
    with page.context.expect_page() as tab_info:
        error.get_by_role("link", name="Log in again").click()
    tab = tab_info.value
    tab.get_by_label("Username").fill("rita")
    tab.get_by_label("Password").fill("pw-rita-123")
    tab.get_by_role("button", name="Log in").click()
    tab.wait_for_url("**/review/")
    tab.close()

    error.get_by_role("button", name="Retry").click()
    page.locator(f"#proposal-{p.pk} .notice.success").wait_for()
    assert Proposal.objects.get(pk=p.pk).status == ProposalStatus.REJECTED
    assert Decision.objects.get(proposal=p).comment == COMMENT


def test_a_stale_security_token_and_a_lost_connection_are_said_in_place(
    page, memory, agent, reviewer
):
    p = consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    row = page.locator(f"#proposal-{p.pk}")
    # The token this page holds goes stale (as after logging in again elsewhere).
    page.evaluate(
        "document.querySelectorAll('input[name=csrfmiddlewaretoken]').forEach("
        "i => i.value = 'x'.repeat(32));"
        "document.body.setAttribute('hx-headers', JSON.stringify({'X-CSRFToken': 'x'.repeat(32)}))"
    )
    row.get_by_role("button", name=f"Approve proposal #{p.pk}").click()
    page.locator("#shortcut-confirm").get_by_role("button", name="Yes, approve").click()
    error = row.locator("[data-request-error]")
    expect(error).to_be_visible()
    assert "security token is out of date" in error.inner_text()
    assert Proposal.objects.get(pk=p.pk).status == ProposalStatus.PENDING

    # The server cannot be reached: said too, and Retry (with the cookie's token) approves
    # without asking again.
    page.route("**/review/proposals/**", lambda route: route.abort())
    error.get_by_role("button", name="Retry").click()
    expect(row.locator("[data-request-error]")).to_contain_text("could not be reached")
    page.unroute("**/review/proposals/**")
    row.locator("[data-request-error]").get_by_role("button", name="Retry").click()
    page.locator(f"#proposal-{p.pk} .notice.success").wait_for()
    assert Proposal.objects.get(pk=p.pk).status == ProposalStatus.APPROVED
