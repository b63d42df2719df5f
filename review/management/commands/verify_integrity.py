"""``manage.py verify_integrity [--memory SLUG] [--seal]``: read-only integrity check
(review.integrity), then the audit hash chain (memory.audit_chain) over every event.

Prints what it checked per Memory and every finding, one per line
(``<memory> <check> <subject>: <detail>``; audit findings as ``audit <check> …``), then the audit
chain head (keep it elsewhere to detect the newest events removed with their seals); exits 1 when
there is any finding, 0 when all is sound. ``--seal`` first seals events left unsealed by a
crash between their commit and their seal (the one write it makes).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory import audit_chain
from memory.models import Memory
from review.integrity import verify_memory


class Command(BaseCommand):
    help = "Verify revisions, heads, projection and approval records; exit 1 on any finding."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--memory", metavar="SLUG", help="Only this Memory.")
        parser.add_argument(
            "--seal", action="store_true", help="Seal unsealed audit events before checking."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        memories = Memory.objects.order_by("pk")
        if options["memory"]:
            memories = memories.filter(slug=options["memory"])
            if not memories.exists():
                raise CommandError(f"No memory '{options['memory']}'.")
        started = time.monotonic()
        findings = 0
        checked = 0
        for memory in memories.iterator():
            report = verify_memory(memory)
            checked += 1
            findings += len(report.findings)
            for finding in report.findings:
                self.stdout.write(f"  FINDING {finding}")
            self.stdout.write(
                f"{report.memory}: {report.revisions} revisions, {report.entries} entries, "
                f"{report.proposals_checked} proposals checked, {len(report.findings)} findings"
            )
        if options["seal"]:
            self.stdout.write(f"audit: sealed {audit_chain.seal_pending()} unsealed event(s)")
        audit_findings = 0
        for check, subject, detail in audit_chain.verify():
            audit_findings += 1
            self.stdout.write(f"  FINDING audit {check} {subject}: {detail}")
        seq, chain = audit_chain.head()
        self.stdout.write(
            f"audit: {seq} sealed events, chain head {seq}:{chain}, {audit_findings} findings"
        )
        findings += audit_findings
        seconds = time.monotonic() - started
        if findings:
            self.stderr.write(f"integrity: {findings} finding(s) in {checked} memories.")
            sys.exit(1)
        self.stdout.write(f"integrity: ok ({checked} memories, {seconds:.1f}s).")
