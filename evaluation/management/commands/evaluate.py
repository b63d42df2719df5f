"""``manage.py evaluate [SECTION ...] [--seed N] [--json PATH] [--plot PATH] [--quick]``.

Builds seeded synthetic workloads through the real actions in throwaway Memories (marked
``eval-…`` / ``[evaluation]``) on the configured database, prints one table of metrics, and
optionally writes the JSON report and a PNG of the curves. ``--list`` names the sections.

Those Memories and their pending proposals can never be deleted, so on a database that already
holds other Memories (a served one: reviewers would find the proposals in their inbox) it
refuses before writing anything, unless ``--shared-database`` says to write there anyway.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.report import plot, run_sections, table, write_json
from evaluation.sections import all_sections, select
from evaluation.workbench import NAME_PREFIX, SLUG_PREFIX, Workbench
from memory.models import Memory
from review import notifications


class Command(BaseCommand):
    help = "Evaluate recall quality and lifecycle safety on seeded synthetic workloads."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("sections", nargs="*", metavar="SECTION", help="Default: all.")
        parser.add_argument("--seed", type=int, default=7, help="Workload seed (default 7).")
        parser.add_argument("--json", metavar="PATH", help="Write the JSON report here.")
        parser.add_argument("--plot", metavar="PATH", help="Draw the curves into this PNG.")
        parser.add_argument(
            "--quick", action="store_true", help="Small workloads (what the tests run)."
        )
        parser.add_argument("--list", action="store_true", help="List the sections and exit.")
        parser.add_argument(
            "--locomo",
            metavar="PATH",
            help="conversations: a LoCoMo-format JSON file (read from there, never copied).",
        )
        parser.add_argument(
            "--longmemeval",
            metavar="DIR",
            help="conversations: a folder holding LongMemEval-format sessions.jsonl and "
            "questions.jsonl.",
        )
        parser.add_argument(
            "--shared-database",
            action="store_true",
            help="Write the workloads even though the database holds other Memories.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            for sec in all_sections():
                self.stdout.write(f"{sec.name:<16} {sec.title}")
            return
        try:
            sections = select(options["sections"])
        except KeyError as exc:
            names = ", ".join(s.name for s in all_sections())
            raise CommandError(f"Unknown section(s): {exc.args[0]}. Known: {names}.") from exc
        if not options["shared_database"]:
            refuse_a_served_database()
        bench = Workbench(seed=options["seed"], quick=options["quick"])
        bench.cache["conversation_data"] = {
            "locomo": options.get("locomo"),
            "longmemeval": options.get("longmemeval"),
        }
        # Its proposals are synthetic: reviewers are not told of them.
        with notifications.muted():
            report, results = run_sections(bench, sections)
        self.stdout.write(
            f"evaluate: seed {bench.seed}, backend {bench.backend}, run {bench.run_id}"
            f"{' (quick)' if bench.quick else ''}"
        )
        self.stdout.write(table(results))
        if options["json"]:
            write_json(report, options["json"])
            self.stdout.write(f"report written to {options['json']}")
        if options["plot"]:
            plot([f for _, r, _ in results for f in r.figures], options["plot"])
            self.stdout.write(f"plot written to {options['plot']}")


def refuse_a_served_database() -> None:
    """Refuse a database holding Memories that are not evaluation workloads: what evaluate
    writes there can never be removed and its proposals would wait in reviewers' inboxes. A
    workload carries both marks, its slug's and its name's: a served Memory may well be called
    ``eval-…``."""
    others = Memory.objects.exclude(
        slug__startswith=SLUG_PREFIX, name__startswith=NAME_PREFIX
    ).order_by("pk")
    first = others.values_list("slug", flat=True).first()
    if first is None:
        return
    raise CommandError(
        f"This database holds Memories that are not evaluation workloads (such as '{first}'). "
        "evaluate writes Memories, entries and proposals that can never be deleted, and "
        "reviewers would find its proposals in their inbox. Point DATABASE_URL at a database "
        "of its own, or pass --shared-database to write here anyway."
    )
