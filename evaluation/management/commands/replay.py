"""``manage.py replay --memory SLUG --policy FILE [--queries FILE] [--limit K] [--json PATH]``.

Shows what a candidate policy (a JSON object of policy keys, merged over the Memory's current
policy) would change in recall: per query, the entries entering or leaving the top k, the rank
moves, the Context Pack items gained or lost, and what the validity filter withheld. Queries
come from the Memory's recall events when they are recorded, otherwise from ``--queries``.
Nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.replay import ReplayReport, parse_queries, replay
from lib.errors import DomainError
from memory.actors import Actor
from memory.models import Memory


class Command(BaseCommand):
    help = "Replay queries under the current and a candidate policy and show what would change."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--memory", metavar="SLUG", required=True)
        parser.add_argument("--policy", metavar="FILE", required=True, help="JSON policy keys.")
        parser.add_argument("--queries", metavar="FILE", help="Queries (lines or a JSON list).")
        parser.add_argument("--limit", type=int, default=10, help="Top k (default 10).")
        parser.add_argument("--json", metavar="PATH", help="Also write the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        memory = Memory.objects.filter(slug=options["memory"]).first()
        if memory is None:
            raise CommandError(f"No memory '{options['memory']}'.")
        try:
            policy = json.loads(Path(options["policy"]).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"Cannot read the policy file: {exc}") from exc
        queries = None
        if options["queries"]:
            try:
                queries = parse_queries(Path(options["queries"]).read_text(encoding="utf-8"))
            except OSError as exc:
                raise CommandError(f"Cannot read the query file: {exc}") from exc
            except DomainError as exc:
                raise CommandError(f"{exc}: {exc.details}") from exc
        try:
            report = replay(
                memory,
                actor=Actor.system("replay"),
                policy=policy,
                queries=queries,
                limit=options["limit"],
            )
        except DomainError as exc:
            raise CommandError(f"{exc}: {exc.details}") from exc
        self.stdout.write(render(report))
        if options["json"]:
            Path(options["json"]).write_text(
                json.dumps(report.as_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
            self.stdout.write(f"report written to {options['json']}")


def render(report: ReplayReport) -> str:
    s = report.summary()
    lines = [
        f"replay {report.memory}: {s['queries']} queries ({report.source}), top {report.limit}",
        f"  current policy:   {json.dumps(report.current_policy, sort_keys=True)}",
        f"  candidate policy: {json.dumps(report.candidate_policy, sort_keys=True)}",
        f"  {s['queries_changed']} queries change: {s['entered']} entries enter the top "
        f"{report.limit}, {s['left']} leave, {s['moved']} move; Context Pack: "
        f"{s['pack_entered']} items in, {s['pack_left']} out",
    ]
    for q in report.queries:
        head = f"\n{q.query!r}" + (f" (intent {q.intent})" if q.intent else "")
        filtered = ", ".join(f"{k} {v}" for k, v in sorted(q.validity_filtered.items()))
        lines.append(
            f"{head}: quality {q.quality_current} → {q.quality_candidate}; "
            f"validity filtered: {filtered or 'none'}"
        )
        if not q.changed:
            lines.append("  no change")
        for m in q.entered:
            lines.append(f"  + enters at {m.after:>2}   {m.entry_id} v{m.version}  {m.label}")
        for m in q.left:
            lines.append(f"  - leaves from {m.before:>2} {m.entry_id} v{m.version}  {m.label}")
        for m in q.moved:
            arrow = "↑" if m.delta > 0 else "↓"
            lines.append(
                f"  {arrow} {m.before:>2} → {m.after:<2}     {m.entry_id} v{m.version}  {m.label}"
            )
        if q.pack_entered or q.pack_left:
            lines.append(
                f"  Context Pack: in {', '.join(q.pack_entered) or '-'}; "
                f"out {', '.join(q.pack_left) or '-'}"
            )
    return "\n".join(lines)
