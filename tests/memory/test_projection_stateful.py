"""Random write sequences keep the incremental projection equal to the rebuilt one
(``rebuild_projection --check`` clean) and keep retired entries out of current recall."""

from __future__ import annotations

import contextlib
import itertools
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from memory import actions
from memory.actors import Actor
from memory.exceptions import DomainError
from memory.lifecycle import rebuild_batch
from memory.models import Entry, Head, Relation, RelationKind, RevisionKind
from memory.search import search

from .conftest import supersede

WORDS = ["deploy", "target", "cache", "ttl", "queue", "leader", "election", "locks", "eu", "us"]
bodies = st.lists(st.sampled_from(WORDS), min_size=2, max_size=5).map(" ".join)
_counter = itertools.count()


class ProjectionMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        n = next(_counter)
        staff = Actor.for_user(User.objects.get(username="root"))
        self.memory = actions.create_memory(actor=staff, slug=f"m{n}", name=f"m{n}")
        self.agent = Actor.system("agent")
        self.reviewer = staff
        self.uids: list[str] = []
        self.serial = 0

    def _body(self, body: str) -> str:
        self.serial += 1
        return f"{body} n{self.serial}"

    def _entry(self, i: int) -> Entry | None:
        if not self.uids:
            return None
        return Entry.objects.get(memory=self.memory, uid=self.uids[i % len(self.uids)])

    @rule(
        body=bodies,
        kind=st.sampled_from(["fact", "decision", "constraint", "working_note", "preference"]),
        current=st.booleans(),
        cite=st.sampled_from([None, "repo", "chat"]),
        session=st.booleans(),
    )
    def add(self, body, kind, current, cite, session):
        result = actions.add_entry(
            self.memory,
            actor=self.agent,
            body=self._body(body),
            kind=kind,
            current_state=current,
            tier="session" if session else "long",
            session_id="s1" if session else None,
            evidence=[{"source": cite, "ref": f"r{self.serial}"}] if cite else None,
        )
        self.uids.append(result.entry.uid)

    @rule(i=st.integers(0, 50), body=bodies, cite=st.sampled_from([None, "repo", "chat"]))
    def revise(self, i, body, cite):
        entry = self._entry(i)
        if entry is None:
            return
        with contextlib.suppress(DomainError):
            actions.revise_entry(
                self.memory,
                actor=self.agent,
                entry_uid=entry.uid,
                body=self._body(body),
                evidence=[{"source": cite, "ref": f"r{self.serial}"}] if cite else None,
            )

    @rule(i=st.integers(0, 50))
    def forget(self, i):
        entry = self._entry(i)
        if entry is not None:
            with contextlib.suppress(DomainError):
                actions.forget_entry(self.memory, actor=self.agent, entry_uid=entry.uid, reason="x")

    @rule(i=st.integers(0, 50))
    def reactivate(self, i):
        entry = self._entry(i)
        if entry is not None:
            with contextlib.suppress(DomainError):
                actions.reactivate_entry(self.memory, actor=self.agent, entry_uid=entry.uid)

    @rule(i=st.integers(0, 50), pinned=st.booleans())
    def pin(self, i, pinned):
        entry = self._entry(i)
        if entry is not None:
            actions.pin_entry(
                self.memory,
                actor=self.reviewer,
                entry_uid=entry.uid,
                pinned=pinned,
                category="durable_decision" if pinned else None,
                reason="r",
            )

    @rule()
    def end_session(self):
        actions.end_session(self.memory, actor=self.agent, session_id="s1")

    @rule(i=st.integers(0, 50), j=st.integers(0, 50))
    def conflict(self, i, j):
        a, b = self._entry(i), self._entry(j)
        if a is not None and b is not None and a.pk != b.pk:
            actions.record_conflict(self.memory, actor=self.agent, from_entry=a.uid, to_entry=b.uid)

    @rule(i=st.integers(0, 50), j=st.integers(0, 50))
    def supersede(self, i, j):
        old, new = self._entry(i), self._entry(j)
        if old is not None and new is not None and old.pk != new.pk:
            supersede(self.memory, old=old, new=new)

    @rule(i=st.integers(0, 50))
    def retire_an_authoritative_edge(self, i):
        edges = list(
            Relation.objects.filter(
                memory=self.memory, kind=RelationKind.SUPERSEDES, retired_by__isnull=True
            ).order_by("pk")
        )
        if not edges:
            return
        edge = edges[i % len(edges)]
        with transaction.atomic():
            locked = actions.lock_memory(self.memory.pk)
            head = Head.objects.get(entry_id=edge.to_entry_id)
            actions.write_revision(
                locked,
                actor=self.reviewer,
                kind=RevisionKind.COMPENSATE,
                changes=[
                    actions.Change(
                        entry=head.entry, to_state=head.state, state_reason=head.state_reason
                    )
                ],
                retire=[edge],
            )

    @invariant()
    def projection_equals_rebuild(self):
        if not getattr(self, "memory", None):
            return
        pks = list(Entry.objects.filter(memory=self.memory).values_list("pk", flat=True))
        diffs, mismatched, _ = rebuild_batch(pks, write=False)
        assert diffs == [] and mismatched == []

    @invariant()
    def current_recall_never_returns_retired_entries(self):
        if not getattr(self, "memory", None) or not self.uids:
            return
        for hit in search(self.memory, actor=self.reviewer, query=" ".join(WORDS), limit=50).hits:
            assert hit.validity in ("current", "unresolved_conflict")
            assert hit.state == "active" and hit.is_head


@pytest.mark.django_db
def test_random_write_sequences_keep_rebuild_check_clean(memory, staff):
    ProjectionMachine.TestCase.settings = settings(
        max_examples=12,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    ProjectionMachine.TestCase().runTest()
    out = StringIO()
    call_command("rebuild_projection", "--check", stdout=out)
    assert "projection clean." in out.getvalue()
