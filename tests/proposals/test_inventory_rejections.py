"""The inventory counts rejected proposals by kind and reason (spec 000's acceptance list asks
for near-duplicate rejections), and the capacity trigger follows the seed: every 50 new low
entries, "low" being the seed's importance 0 (the L1 floor)."""

from __future__ import annotations

from memory import inventory, maintenance
from memory.actors import Actor
from memory.models import Entry
from proposals.models import Proposal
from review.actions import reject_proposal
from tests.factories import remember

BASE = "The nightly export job writes the billing ledger to the archive bucket at midnight"


def test_the_inventory_counts_rejected_proposals_by_kind_and_reason(api, memory, agent, reviewer):
    remember(memory, agent.actor, BASE)
    remember(memory, agent.actor, BASE + " UTC")  # a restatement: a consolidation is filed
    (p,) = Proposal.objects.filter(kind="consolidation")
    assert inventory.inventory(memory)["rejected_proposals"] == {}
    reject_proposal(
        p.pk, actor=reviewer.actor, reason="duplicate_of_other", comment="Both say the same"
    )
    figures = api.as_(reviewer).get("/api/v1/memories/acme/inventory").json()
    assert figures["rejected_proposals"] == {"consolidation": {"duplicate_of_other": 1}}
    assert figures["pending_proposals"] == {}


def test_the_capacity_trigger_fires_at_fifty_new_low_entries(memory, agent):
    system = Actor.system("test")
    me = agent.actor
    for i in range(49):
        remember(memory, me, f"Scratch note number {i}", kind="working_note", dedupe=False)
    # Facts start at importance 1 ("normal"): never low, however many.
    for i in range(10):
        remember(memory, me, f"Service {i} listens on port {8000 + i}", dedupe=False)
    run = maintenance.run_job(memory, actor=system, job="capacity", dry_run=True)
    assert run.parameters["capacity_low_entries"] == 50
    assert run.parameters["importance_floor"] == 0
    assert run.counts["triggered"] is False
    remember(memory, me, "Scratch note number 49", kind="working_note", dedupe=False)
    run = maintenance.run_job(memory, actor=system, job="capacity", dry_run=True)
    assert run.counts["triggered"] is True
    (item,) = [i for i in run.items if i.get("reason") == "capacity"]
    listed = set(item["entries"])
    assert listed and set(Entry.objects.filter(uid__in=listed).values_list("kind", flat=True)) == {
        "working_note"
    }
