"""Every page of the product at 390 px in real Chromium: nothing is wider than the viewport
(``document.documentElement.scrollWidth <= window.innerWidth``).

The pages carry the content that used to push them wide: long unbroken URLs and paths in entry
bodies and evidence references, a consolidation with lost details, an operation, revisions with
changes, a maintenance run with items, a search with its trace, notifications and — with the outbox on
— the outbox with a mail in it.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from memory import actions as memory_actions
from memory import maintenance
from memory.actors import Actor
from proposals.actions import add_comment, assign_proposal
from proposals.requests import submit_request
from review.actions import approve_proposal
from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FITS = "document.documentElement.scrollWidth <= window.innerWidth"
WIDTHS = "[document.documentElement.scrollWidth, window.innerWidth]"
# The innermost elements that reach past the viewport, to name the culprit in a failure.
CULPRITS = """() => {
  const w = window.innerWidth, out = [];
  const past = (el) => el.getBoundingClientRect().right > w + 1;
  for (const el of document.querySelectorAll("body *")) {
    if (!past(el) || [...el.children].some(past)) continue;
    const cls = typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\\s+/).join(".") : "";
    out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls + " → " + Math.round(el.getBoundingClientRect().right));
  }
  return out.slice(0, 6);
}"""
LONG_URL = "https://wiki.acme.example/platform/runbooks/" + "deploy-pipeline-" * 8 + "v2"
LONG_PATH = "services/scheduler/" + "very_long_module_name_" * 6 + "leader.py"


def _add(memory: Any, actor: Actor, body: str, ref: str) -> str:
    result = memory_actions.add_entry(
        memory,
        actor=actor,
        body=body,
        kind="fact",
        dedupe=False,
        evidence=[{"source": "repo", "ref": ref, "quote": "quoted " + "x" * 120}],
    )
    return str(result.entry.uid)


def _world(memory: Any, agent: Any, staff: Actor) -> dict[str, Any]:
    """Pages' worth of content, through the real actions."""
    rita = Actor.for_user(User.objects.get(username="rita"))
    a = _add(
        memory, agent.actor, f"Deploys run at 02:00 UTC via deploy.sh, see {LONG_URL}", LONG_PATH
    )
    b = _add(memory, agent.actor, f"Deploys run nightly; the runbook is {LONG_URL}", LONG_URL)
    memory_actions.revise_entry(
        memory,
        actor=agent.actor,
        entry_uid=a,
        body=f"Deploys run at 02:30 UTC via deploy.sh and {LONG_PATH}, see {LONG_URL}",
    )
    lossy = submit_request(
        actor=agent.actor,
        data={
            "memory": memory.slug,
            "kind": "consolidation",
            "rationale": "Same deploy schedule twice " + LONG_URL,
            "target": {"entry_id": a, "version": 2},
            "redundant": [{"entry_id": b, "version": 1}],
            "body": "Deploys run nightly",
        },
    ).proposal
    c = _add(memory, agent.actor, f"Backups go to s3://acme-backups/{'nightly-' * 10}", LONG_PATH)
    d = _add(
        memory, agent.actor, f"Backups are written nightly to s3://acme-backups/{'n' * 60}", "b"
    )
    kept = submit_request(
        actor=agent.actor,
        data={
            "memory": memory.slug,
            "kind": "consolidation",
            "rationale": "Backups stated twice",
            "target": {"entry_id": c, "version": 1},
            "redundant": [{"entry_id": d, "version": 1}],
            "body": f"Backups go nightly to s3://acme-backups/{'nightly-' * 10} and "
            f"s3://acme-backups/{'n' * 60}",
        },
    ).proposal
    decided = approve_proposal(kept.pk, actor=rita, comment="Same backups")
    operation = decided.proposal.operation
    assign_proposal(lossy, actor=staff, reviewer="rita")
    add_comment(lossy, actor=agent.actor, body="The runbook is " + LONG_URL)
    run = maintenance.run_job(memory, actor=Actor.system("t"), job="near_duplicates")
    return {
        "entry": a,
        "proposal": lossy.pk,
        "operation": operation.pk,
        "revision": operation.revision_number,
        "run": run.pk,
    }


def test_every_page_fits_a_390_px_phone(
    browser, live_server, settings, memory, agent, reviewer, other_reviewer, auditor, staff
):
    settings.STEWARD_OUTBOX = True  # the outbox page exists only then
    User.objects.filter(username__in=["rita", "ravi"]).update(email="team@acme.example")
    w = _world(memory, agent, staff)
    slug = memory.slug
    pages = [
        "/",
        "/review/",
        f"/review/proposals/{w['proposal']}/",
        f"/operations/{w['operation']}/",
        "/audit/",
        f"/memories/{slug}/entries/{w['entry']}/",
        f"/memories/{slug}/revisions/{w['revision']}/",
        f"/memories/{slug}/search/?q=deploy+runbook",
        f"/memories/{slug}/search/?q=deploy&view=history",
        f"/memories/{slug}/",
        f"/memories/{slug}/maintenance/",
        f"/memories/{slug}/maintenance/{w['run']}/",
        f"/memories/{slug}/entries/",
        "/notifications/",
        "/outbox/",
    ]
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    try:
        anonymous = context.new_page()
        anonymous.set_default_timeout(15_000)
        anonymous.goto("/accounts/login/")
        assert anonymous.evaluate(FITS), f"/accounts/login/ is {anonymous.evaluate(WIDTHS)}"
        anonymous.close()

        page = context.new_page()
        page.set_default_timeout(15_000)
        login(page, "rita", "pw-rita-123", next_path="/")
        wide = []
        for path in pages:
            response = page.goto(path)
            assert response is not None and response.status == 200, (path, response)
            page.wait_for_load_state("networkidle")
            if not page.evaluate(FITS):
                wide.append(f"{path}: {page.evaluate(WIDTHS)} {page.evaluate(CULPRITS)}")
        assert not wide, "wider than 390 px (scrollWidth, innerWidth):\n" + "\n".join(wide)
    finally:
        context.close()
