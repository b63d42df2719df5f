"""The ``revalidation`` maintenance job: a daily count of the facts due for re-checking and a
notification to each owner when one of theirs falls due — it files nothing, writes no revision,
and never deactivates anything."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from memory import actions, maintenance
from memory.actors import Actor
from memory.models import Head, MaintenanceRun, Revision
from review.models import Notification
from tests.factories import remember

PAST = "2026-01-01"
FUTURE = "2099-01-01"


def test_the_job_counts_due_facts_and_tells_each_owner_once(memory, agent, reviewer):
    User.objects.create_user("sam", email="sam@example.com", password="x")
    me = agent.actor
    owned = remember(memory, me, "The on-call is Sam", owner="sam", review_at=PAST).entry
    remember(memory, me, "The port is 8443", owner="platform-team", review_at=PAST)
    remember(memory, me, "The region is eu-2", review_at=PAST)
    remember(memory, me, "Builds run on Linux", owner="sam", review_at=FUTURE)
    revisions = Revision.objects.count()

    dry = maintenance.run_job(memory, actor=reviewer.actor, job="revalidation", dry_run=True)
    assert dry.counts == {"due": 3, "fell_due": 3, "notified": 0}
    assert not Notification.objects.exists()

    run = maintenance.run_job(memory, actor=reviewer.actor, job="revalidation", dry_run=False)
    assert run.counts == {"due": 3, "fell_due": 3, "notified": 2}
    assert {i["entry_id"] for i in run.items} == {
        h.entry.uid for h in Head.objects.filter(review_at__lte=timezone.now())
    }
    (mail,) = Notification.objects.all()
    assert mail.recipient == "sam@example.com" and mail.event == "entry.review_due"
    assert owned.uid in mail.body and "need re-checking" in mail.subject

    # Nothing written to the Memory, nothing retired.
    assert Revision.objects.count() == revisions
    assert set(Head.objects.values_list("state", flat=True)) == {"active"}

    # The next run: still due, but nothing fell due since, so nobody is told again.
    again = maintenance.run_job(memory, actor=reviewer.actor, job="revalidation", dry_run=False)
    assert again.counts == {"due": 3, "fell_due": 0, "notified": 0}
    assert Notification.objects.count() == 1

    # A reviewer marks a fact due now: the next run tells its owner.
    later = remember(memory, me, "The API lives in eu-1", owner="sam", review_at=FUTURE).entry
    actions.require_reverification(
        memory, actor=reviewer.actor, entry_uid=later.uid, reason="the region moved"
    )
    third = maintenance.run_job(memory, actor=reviewer.actor, job="revalidation", dry_run=False)
    assert third.counts == {"due": 4, "fell_due": 1, "notified": 1}
    latest = Notification.objects.order_by("-pk").first()
    assert latest is not None and later.uid in latest.body


def test_the_job_is_registered_and_scheduled_like_the_others(api, memory, reviewer, agent):
    assert maintenance.check_job("revalidation").gated is False
    # A reviewer's manual real run needs no switch; agents may not run it.
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/revalidation", {"dry_run": False})
    assert r.status_code == 202, r.text
    run = MaintenanceRun.objects.get(pk=r.json()["run"])
    assert run.job == "revalidation" and run.counts["due"] == 0
    r = api.as_(agent).post("/api/v1/memories/acme/maintenance/revalidation", {})
    assert r.status_code == 403
    # Beat runs it daily once the policy enables it.
    staff = Actor.for_user(User.objects.get(username="founder"))
    assert "revalidation" not in maintenance.due_jobs(memory, timezone.now())
    actions.update_memory_policy(
        memory, actor=staff, policy={"jobs": {"revalidation": {"enabled": True}}}
    )
    memory.refresh_from_db()
    assert "revalidation" not in maintenance.due_jobs(memory, timezone.now())  # ran just now
    assert "revalidation" in maintenance.due_jobs(memory, timezone.now() + timedelta(hours=25))
