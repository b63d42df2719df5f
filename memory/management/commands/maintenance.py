"""``manage.py maintenance JOB --memory SLUG [--apply]``: run one maintenance job on one Memory.

A dry run by default (the job reports what it would do, writing only its run); ``--apply`` makes
a real run, which needs the job enabled in the Memory's policy (``l1_enabled`` /
``jobs.<job>.enabled``). The run holds the (Memory, job) lock like every other run, shows a
progress bar on stderr while it scans, and prints the run's id, counts and proposals filed.
Runs as the system actor (the operator's own shell).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from lib.wording import one_of
from memory import maintenance
from memory.actors import Actor
from memory.exceptions import DomainError
from memory.models import Memory


class Command(BaseCommand):
    help = "Run one maintenance job on one Memory (dry run unless --apply)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("job", help=one_of(maintenance.job_names()))
        parser.add_argument("--memory", metavar="SLUG", required=True)
        parser.add_argument("--apply", action="store_true", help="A real run (default: dry run).")
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        memory = Memory.objects.filter(slug=options["memory"]).first()
        if memory is None:
            raise CommandError(f"No memory '{options['memory']}'.")
        job: str = options["job"]
        bar = tqdm(
            total=0,
            unit="entries",
            desc=job,
            disable=options["no_progress"],
            file=self.stderr._out,
        )

        def progress(done: int, total: int) -> None:
            if bar.total != total:
                bar.reset(total=total)
            bar.n = done
            bar.refresh()

        try:
            with maintenance.progress_scope(progress):
                run = maintenance.run_job(
                    memory,
                    actor=Actor.system(f"manage.py maintenance {job}"),
                    job=job,
                    dry_run=not options["apply"],
                )
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        finally:
            bar.close()
        self.stdout.write(
            json.dumps(
                {
                    "run": run.pk,
                    "job": run.job,
                    "dry_run": run.dry_run,
                    "counts": run.counts,
                },
                indent=2,
                default=str,
            )
        )
