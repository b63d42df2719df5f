"""``manage.py load_demo``: the demo Memory, its history, pending proposals and credentials.

Lives in ``review`` (the top of the dependency chain) because it composes every app.

``--base-url`` is where the demo server will listen: the printed links name it, and so do the
links in the mail the demo sends while loading (it stands in for ``STEWARD_PUBLIC_URL``, which
gives the default when set).
"""

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings

from lib.public_url import clean_public_url
from memory.actors import Actor
from memory.demo import CHAT_SLUG, DEMO_PASSWORD, DEMO_SLUG, load_demo
from memory.models import Entry
from proposals.demo import load_demo_governance, load_demo_proposals
from review.demo import load_demo_discussion


def _staff() -> Actor:
    from django.contrib.auth.models import User

    return Actor.for_user(User.objects.get(username="admin"))


class Command(BaseCommand):
    help = "Load the demo Memory (idempotent) and print how to log in and an agent key."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--quiet", action="store_true", help="print only the agent key")
        parser.add_argument(
            "--base-url",
            default=None,
            help="where the server will listen, for the printed links and the links in the "
            "demo's mail (default: STEWARD_PUBLIC_URL, else http://127.0.0.1:8000; make demo "
            "passes its own)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            given = clean_public_url(opts["base_url"] or "", name="--base-url")
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        base = given or settings.STEWARD_PUBLIC_URL or "http://127.0.0.1:8000"
        if not given:
            self.load(base, quiet=opts["quiet"])
            return
        with override_settings(STEWARD_PUBLIC_URL=given):  # the demo's mail links to it too
            self.load(base, quiet=opts["quiet"])

    def load(self, base: str, *, quiet: bool) -> None:
        result = load_demo()
        proposals = 0
        if result.entries:
            filed = load_demo_proposals(result.memory, agent_actor=result.agent)
            proposals = len(filed)
            proposals += load_demo_discussion(
                result.memory, agent_actor=result.agent, first=filed[0]
            )
            proposals += len(
                load_demo_governance(result.memory, agent_actor=result.agent, staff_actor=_staff())
            )
        if quiet:
            self.stdout.write(result.agent_key)
            return
        w = self.stdout.write
        w("")
        w(self.style.SUCCESS(f"Demo Memory '{DEMO_SLUG}' is ready."))
        if result.entries:
            # Every entry of the Memory, the proposals' own included (what its page counts).
            written = Entry.objects.filter(memory=result.memory).count()
            w(f"  {written} entries written, {proposals} proposals filed.")
        if not Entry.objects.filter(memory__slug=CHAT_SLUG).exists():
            w(f"  '{CHAT_SLUG}' is empty and has no admission review: load a conversation there.")
        w("")
        w(f"Browser ({base}/accounts/login/):")
        w(f"  reviewer  rita / {DEMO_PASSWORD}     (second reviewer: ravi / {DEMO_PASSWORD})")
        w(f"  auditor   ada  / {DEMO_PASSWORD}     admin: admin / {DEMO_PASSWORD}")
        w("")
        w("API keys (shown once; only hashes are stored):")
        w(f"  agent     {result.agent_key}")
        w(f"  reviewer  {result.reviewer_key}")
        w(f"  auditor   {result.auditor_key}")
        w("")
        w("Try:")
        w(
            f'  curl -s -H "Authorization: Bearer {result.agent_key}" '
            f"{base}/api/v1/memories/{DEMO_SLUG}/revisions?since_revision=0"
        )
        w("")
