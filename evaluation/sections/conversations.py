"""``conversations``: recall on real conversations, loaded as an agent would load them.

Two third-party data sets, read from the paths given on the command line (never copied into the
project): a LoCoMo-format file (``--locomo PATH``: a JSON list of samples, each a
``conversation`` of ``session_N`` turns ``{speaker, dia_id, text, blip_caption?}`` with
``session_N_date_time``, and ``qa`` items ``{question, evidence: [dia_id], category}``) and a
LongMemEval-format folder (``--longmemeval DIR``: ``sessions.jsonl`` of ``{id, timestamp,
turns: [{id, role, content, metadata: {has_answer}}]}`` and ``questions.jsonl`` of ``{question,
category, ground_truth: {supporting_session_ids}}``).

Each conversation (each LoCoMo sample; the whole LongMemEval haystack) is written into a
throwaway Memory through the batch import, a turn per entry with its session id and the
session's date as ``effective_at``; then every question is asked through the same search an
agent calls. Configurations: ``lexical`` (the lexical channel alone), ``vector`` (the vector
channel alone), ``hybrid`` (``search()``: both fused by RRF, the pipeline an agent gets),
``reranked`` (the same with the cross-encoder reranker, when its package is installed) and the
reference ``bm25``: plain Okapi BM25 (k1 1.2, b 0.75, term frequencies counted) over each
turn's own analyzer tokens, computed here in Python. Reported per category: turn-level
any@5 / all@5 / any@10, session any@5 (LoCoMo) or session and turn recall@5 (LongMemEval), MRR,
nDCG@10, the search latency p50 / p95 and the import throughput.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from memory.actions.batch import add_entries
from memory.embeddings import get_provider
from memory.models import Memory
from memory.search import SearchResult, search, vector_channel
from memory.search.common import CURRENT, channel_cap, query_terms
from memory.search.cross_encoder import CrossEncoderReranker, model_dir
from memory.search.lexical import lexical_channel
from memory.text import tokenize

from ..metrics import mean, ndcg_at_k, reciprocal_rank
from ..registry import SectionResult, section
from ..workbench import WRITER, Workbench

LIMIT = 10
CONFIGURATIONS = ("bm25", "lexical", "vector", "hybrid", "reranked")
#: Questions per data set in ``--quick`` runs, and LoCoMo conversations.
QUICK_QUESTIONS = 20
QUICK_CONVERSATIONS = 1
#: LoCoMo's categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
#: (reported apart: its questions ask about things the conversation does not hold).
LOCOMO_SCORED = (1, 2, 3, 4)
#: Turns per import request (the batch endpoint's limit).
BATCH = 1000


@dataclass
class Turn:
    key: str
    session: str
    body: str
    at: datetime | None


@dataclass
class Question:
    text: str
    category: str
    turns: set[str]
    sessions: set[str]


@dataclass
class Conversation:
    label: str
    turns: list[Turn]
    questions: list[Question]


@dataclass
class Scores:
    """Per-question figures of one configuration, by category."""

    rows: dict[str, list[dict[str, float]]] = field(default_factory=lambda: defaultdict(list))
    latencies: list[float] = field(default_factory=list)


# --- Reading the data sets -------------------------------------------------------------------


def _locomo_time(text: str) -> datetime | None:
    """LoCoMo's session stamp, "1:56 pm on 8 May, 2023"."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def read_locomo(path: Path) -> list[Conversation]:
    out: list[Conversation] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        turns: list[Turn] = []
        numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
        for n in numbers:
            at = _locomo_time(conv.get(f"session_{n}_date_time", ""))
            for t in conv[f"session_{n}"]:
                body = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    body += f" [shares a photo of {t['blip_caption']}]"
                turns.append(Turn(t["dia_id"], f"s{n}", body, at))
        session_of = {t.key: t.session for t in turns}
        questions = [
            Question(
                text=q["question"],
                category=str(q["category"]),
                turns={e for e in q.get("evidence", []) if e in session_of},
                sessions={session_of[e] for e in q.get("evidence", []) if e in session_of},
            )
            for q in sample["qa"]
        ]
        questions = [q for q in questions if q.turns]
        out.append(Conversation(str(sample.get("sample_id", len(out))), turns, questions))
    return out


def _longmemeval_time(text: str) -> datetime | None:
    """LongMemEval's stamp, "2023/05/20 (Sat) 02:21"."""
    try:
        return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text), "%Y/%m/%d %H:%M").replace(
            tzinfo=UTC
        )
    except ValueError:
        return None


def read_longmemeval(folder: Path) -> Conversation:
    turns: list[Turn] = []
    answers: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        s = json.loads(line)
        at = _longmemeval_time(s.get("timestamp", ""))
        for t in s["turns"]:
            turns.append(Turn(t["id"], s["id"], f"{t['role']}: {t['content']}", at))
            if (t.get("metadata") or {}).get("has_answer"):
                answers[s["id"]].add(t["id"])
    questions = []
    for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        sessions = set(q["ground_truth"]["supporting_session_ids"])
        questions.append(
            Question(
                text=q["question"],
                category=q["category"],
                turns=set().union(*(answers[s] for s in sessions)) if sessions else set(),
                sessions=sessions,
            )
        )
    return Conversation("longmemeval", turns, questions)


# --- Loading and asking ----------------------------------------------------------------------


def load(bench: Workbench, conv: Conversation) -> tuple[Memory, dict[int, Turn], float]:
    """Write ``conv`` into a new Memory through the batch import; the entry pk of each turn and
    the import throughput (turns per second, vectors included in the embedded mode)."""
    memory = bench.memory(f"conv-{conv.label}")
    by_pk: dict[int, Turn] = {}
    started = time.perf_counter()
    for start in range(0, len(conv.turns), BATCH):
        chunk = conv.turns[start : start + BATCH]
        items: list[dict[str, Any]] = [
            {
                "body": t.body[:8000],
                "kind": "fact",
                "tier": "long",
                "session_id": t.session,
                "effective_at": t.at.isoformat() if t.at else None,
            }
            for t in chunk
        ]
        results = import_batch(memory, items)
        for t, pk in zip(chunk, results, strict=True):
            by_pk[pk] = t
    elapsed = time.perf_counter() - started
    return memory, by_pk, len(conv.turns) / elapsed if elapsed else 0.0


def import_batch(memory: Memory, items: list[dict[str, Any]]) -> list[int]:
    """Entry pks of ``items`` written into ``memory``, in order."""
    entries = [{k: v for k, v in item.items() if v is not None} for item in items]
    outcome = add_entries(memory, actor=WRITER, entries=entries)
    return [r.entry.pk for r in outcome.items]


class PlainBM25:
    """Okapi BM25 (k1 1.2, b 0.75) over each turn's own analyzer tokens, written out here:
    the reference every published peer starts from."""

    def __init__(self, docs: dict[int, list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = {pk: Counter(tokens) for pk, tokens in docs.items()}
        self.lengths = {pk: len(tokens) for pk, tokens in docs.items()}
        self.avgdl = mean(list(self.lengths.values())) or 1.0
        self.df: Counter[str] = Counter(t for c in self.docs.values() for t in c)
        self.n = len(docs)
        self.k1, self.b = k1, b

    def rank(self, query: str, limit: int) -> list[int]:
        terms = query_terms(query)
        scores: dict[int, float] = {}
        for t in terms:
            df = self.df.get(t, 0)
            if not df:
                continue
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for pk, counts in self.docs.items():
                tf = counts.get(t, 0)
                if tf:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[pk] / self.avgdl)
                    scores[pk] = scores.get(pk, 0.0) + idf * tf * (self.k1 + 1) / (tf + norm)
        return sorted(scores, key=lambda pk: (-scores[pk], pk))[:limit]


def rankers(memory: Memory, by_pk: dict[int, Turn]) -> dict[str, Callable[[str], list[int]]]:
    """Each configuration as a function from a question to entry pks, best first."""
    cap = channel_cap(LIMIT)
    bm25 = PlainBM25({pk: tokenize(t.body) for pk, t in by_pk.items()})
    out: dict[str, Callable[[str], list[int]]] = {
        "bm25": lambda q: bm25.rank(q, LIMIT),
        "lexical": lambda q: [
            c.entry_pk for c in lexical_channel(memory.pk, query_terms(q), view=CURRENT, limit=cap)
        ][:LIMIT],
    }
    if get_provider() is not None:
        out["vector"] = lambda q: [
            c.entry_pk for c in vector_channel(memory.pk, q, view=CURRENT, limit=cap)
        ][:LIMIT]
        out["hybrid"] = lambda q: [h.entry_pk for h in _hybrid(memory, q).hits]
        if reranker_available():  # the hybrid pipeline with the reranker
            reranker = CrossEncoderReranker()
            out["reranked"] = lambda q: [
                h.entry_pk
                for h in search(memory, actor=WRITER, query=q, limit=LIMIT, reranker=reranker).hits
            ]
    return out


def _hybrid(memory: Memory, query: str) -> SearchResult:
    """The search without a reranker, even when ``STEWARD_RERANKER`` configures one: the
    ``reranked`` row is the one with it."""
    return search(memory, actor=WRITER, query=query, limit=LIMIT, reranker=None)


def reranker_available() -> bool:
    try:
        model_dir()
    except ImproperlyConfigured:
        return False
    return True


def score_question(ranked: Sequence[int], by_pk: dict[int, Turn], q: Question) -> dict[str, float]:
    keys = [by_pk[pk].key for pk in ranked if pk in by_pk]
    sessions = list(dict.fromkeys(by_pk[pk].session for pk in ranked[:5] if pk in by_pk))
    top5 = set(keys[:5])
    return {
        "any@5": float(bool(top5 & q.turns)),
        "all@5": float(q.turns <= top5),
        "any@10": float(bool(set(keys[:10]) & q.turns)),
        "turn_r@5": len(top5 & q.turns) / len(q.turns) if q.turns else 0.0,
        "session_any@5": float(bool(set(sessions) & q.sessions)),
        "session_r@5": len(set(sessions) & q.sessions) / len(q.sessions) if q.sessions else 0.0,
        "mrr": reciprocal_rank(keys, q.turns),
        "ndcg@10": ndcg_at_k(keys, q.turns, 10),
    }


def evaluate(
    bench: Workbench, conversations: list[Conversation], questions_cap: int | None
) -> tuple[dict[str, Scores], list[float]]:
    scores: dict[str, Scores] = defaultdict(Scores)
    throughput = []
    for conv in conversations:
        memory, by_pk, rate = load(bench, conv)
        throughput.append(rate)
        questions = conv.questions[:questions_cap] if questions_cap else conv.questions
        for name, rank in rankers(memory, by_pk).items():
            for q in questions:
                started = time.perf_counter()
                ranked = rank(q.text)
                scores[name].latencies.append(time.perf_counter() - started)
                scores[name].rows[q.category].append(score_question(ranked, by_pk, q))
    return scores, throughput


def _percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, math.ceil(p * len(ordered)) - 1)]


def summarize(scores: dict[str, Scores], scored: Sequence[str] | None) -> dict[str, Any]:
    """Means per configuration: ``all`` over the scored categories, and each category."""
    out: dict[str, Any] = {}
    for name, s in scores.items():
        cats = {c: rows for c, rows in sorted(s.rows.items())}
        kept = [r for c, rows in cats.items() if scored is None or c in scored for r in rows]
        metrics = kept[0].keys() if kept else []
        out[name] = {
            "all": {m: round(mean([r[m] for r in kept]), 3) for m in metrics},
            "questions": len(kept),
            "categories": {
                c: {m: round(mean([r[m] for r in rows]), 3) for m in rows[0]} | {"n": len(rows)}
                for c, rows in cats.items()
            },
            "latency_ms": {
                "p50": round(1000 * _percentile(s.latencies, 0.5), 1),
                "p95": round(1000 * _percentile(s.latencies, 0.95), 1),
            },
        }
    return out


@section("conversations", title="Recall on real conversations (LoCoMo, LongMemEval)", order=15)
def run(bench: Workbench) -> SectionResult:
    paths = bench.cache.get("conversation_data", {})
    report: dict[str, Any] = {"backend": bench.backend}
    rows: list[tuple[str, Any]] = []
    cap = QUICK_QUESTIONS if bench.quick else None
    if paths.get("locomo"):
        convs = read_locomo(Path(paths["locomo"]))
        if bench.quick:
            convs = convs[:QUICK_CONVERSATIONS]
        scores, rate = evaluate(bench, convs, cap)
        scored = [str(c) for c in LOCOMO_SCORED]
        summary = summarize(scores, scored)
        report["locomo"] = {
            "conversations": len(convs),
            "import_turns_per_s": round(mean(rate), 1),
            "configurations": summary,
        }
        for name, figures in summary.items():
            a = figures["all"]
            rows.append(
                (
                    f"locomo {name} any@5 / all@5 / any@10 / session@5 / MRR / nDCG@10",
                    f"{a['any@5']:.3f} / {a['all@5']:.3f} / {a['any@10']:.3f} / "
                    f"{a['session_any@5']:.3f} / {a['mrr']:.3f} / {a['ndcg@10']:.3f}",
                )
            )
            c5 = figures["categories"].get("5")
            if c5:
                rows.append((f"locomo {name} category 5 any@5", f"{c5['any@5']:.3f}"))
        rows.append(("locomo import turns/s", f"{mean(rate):.1f}"))
    if paths.get("longmemeval"):
        conv = read_longmemeval(Path(paths["longmemeval"]))
        scores, rate = evaluate(bench, [conv], cap)
        summary = summarize(scores, None)
        report["longmemeval"] = {
            "import_turns_per_s": round(mean(rate), 1),
            "configurations": summary,
        }
        for name, figures in summary.items():
            a = figures["all"]
            rows.append(
                (
                    f"longmemeval {name} session R@5 / turn R@5 / MRR / nDCG@10",
                    f"{a['session_r@5']:.3f} / {a['turn_r@5']:.3f} / {a['mrr']:.3f} / "
                    f"{a['ndcg@10']:.3f}",
                )
            )
    for name in CONFIGURATIONS:
        for data in ("locomo", "longmemeval"):
            lat = report.get(data, {}).get("configurations", {}).get(name, {}).get("latency_ms")
            if lat:
                rows.append((f"{data} {name} search p50 / p95 ms", f"{lat['p50']} / {lat['p95']}"))
    if not rows:
        rows.append(("conversations", "skipped: give --locomo PATH and/or --longmemeval DIR"))
    return SectionResult(report={"conversations": report}, rows=rows)
