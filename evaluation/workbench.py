"""What a section builds its workload with: a seed, throwaway Memories, sources and actors.

Every workload is written through the public actions (``memory.actions``, ``proposals.actions``,
``review.actions``) — the same code the API calls — into Memories created for this run. The
history they write is append-only (the database refuses to delete it), so they are not removed
afterwards; instead they are clearly marked: the slug starts with ``eval-``, the name with
``[evaluation]``, and the run's sources are named ``eval-<run>-…``. Their policy enables nothing
that a maintenance job acts on, so the beat schedule leaves them alone.
"""

from __future__ import annotations

import copy
import random
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from memory import actions
from memory.actors import STAFF, Actor
from memory.models import ActorType, Memory, Sensitivity, Source

SLUG_PREFIX = "eval-"
NAME_PREFIX = "[evaluation] "

# The evaluation writes as the system and decides proposals as a separate staff identity, so
# the "nobody approves their own proposal" rule holds exactly as for people.
WRITER = Actor.system("evaluation")
REVIEWER = Actor(
    type=ActorType.SYSTEM,
    id="system:evaluation-reviewer",
    label="evaluation reviewer",
    role=STAFF,
    clearance=Sensitivity.RESTRICTED,
)

# Evidence declarations a workload can cite.
ATTESTED: actions.Declaration = {"authority": "repository_attested", "verification": "verified"}
UNTRUSTED: actions.Declaration = {"authority": "untrusted", "verification": "unknown"}


@dataclass
class Workbench:
    """One evaluation run: ``seed`` makes every workload reproducible; ``quick`` shrinks them
    (the test suite uses it)."""

    seed: int = 7
    quick: bool = False
    run_id: str = field(default_factory=lambda: secrets.token_hex(4))
    now: datetime = field(default_factory=timezone.now)
    memories: list[Memory] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict)
    _sources: dict[str, Source] = field(default_factory=dict)

    @property
    def backend(self) -> str:
        return connection.vendor

    def rng(self, name: str) -> random.Random:
        """A random generator of its own for each workload, derived from the seed."""
        return random.Random(f"{self.seed}:{name}")

    def size(self, default: int, quick: int) -> int:
        return quick if self.quick else default

    def memory(self, label: str, policy: dict[str, Any] | None = None) -> Memory:
        """A new throwaway Memory for one workload, marked as such."""
        slug = f"{SLUG_PREFIX}{label}-s{self.seed}-{self.run_id}"[:64]
        mem = actions.create_memory(
            actor=REVIEWER,
            slug=slug,
            name=f"{NAME_PREFIX}{label} (seed {self.seed}, run {self.run_id})",
            policy=policy or {},
        )
        self.memories.append(mem)
        return mem

    def source(self, name: str, declaration: actions.Declaration | None = None) -> str:
        """The name of this run's source ``name`` (registered on first use)."""
        if name not in self._sources:
            self._sources[name] = actions.register_source(
                actor=REVIEWER,
                name=f"eval-{self.run_id}-{name}",
                description=f"Evaluation source ({name}), run {self.run_id}",
                declaration=declaration,
            )
        return self._sources[name].name


class Vocabulary:
    """Seeded pseudo-words: distinct, pronounceable, never English (so the stemmer and the stop
    list leave them alone), and a deterministic function of the generator."""

    CONSONANTS = "bdfgklmnprstvz"
    VOWELS = "aeiou"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def word(self) -> str:
        while True:
            w = "".join(
                self.rng.choice(self.CONSONANTS) + self.rng.choice(self.VOWELS) for _ in range(3)
            )
            w += self.rng.choice(self.CONSONANTS)
            if w not in self.used:
                self.used.add(w)
                return w

    def words(self, n: int) -> list[str]:
        return [self.word() for _ in range(n)]


def under_policy(memory: Memory, policy: dict[str, Any]) -> Memory:
    """``memory`` as search would see it with ``policy`` — an unsaved copy: reads only, the
    stored policy is untouched (how the evaluation compares quality off and on over the very
    same entries, and how a replay tries a candidate policy)."""
    clone = copy.copy(memory)
    clone.policy = dict(policy)
    return clone


QUALITY_OFF: dict[str, Any] = {}
QUALITY_ON: dict[str, Any] = {"quality_ranking": True}
MODES = (("quality_off", QUALITY_OFF), ("quality_on", QUALITY_ON))


def days_ago(bench: Workbench, days: float) -> str:
    """An ISO time ``days`` before the run's clock (whole seconds, so both backends store it
    exactly)."""
    return (bench.now.replace(microsecond=0) - timedelta(days=days)).isoformat()
