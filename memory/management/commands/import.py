"""``manage.py import FILE --memory SLUG [--batch N] [--start-line N] [--checkpoint PATH]``.

Reads JSON Lines — one object a line with the fields of one add (``body``, ``kind``, ``tier``,
``session_id``, ``current_state``, ``effective_at``, ``sensitivity``, ``evidence``), blank lines
skipped — and writes them ``--batch`` lines at a time (default 500, at most 1000) through the
batch add (:func:`memory.actions.add_entries`): each batch all or nothing, one revision, every
admission rule per item, its vectors made in batches after it commits. A progress bar on stderr.

Resumable: after each committed batch the number of the last line it held is written to the
checkpoint file (default ``FILE.checkpoint``); a new run starts after it (or at
``--start-line``). Running the whole file again is harmless too: the lines already written are
exact duplicates, which write nothing. A refused batch stops the run with each refused line
named (its line number, the error code and message); the lines before it stay written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memory.actions import add_entries
from memory.actions.batch import max_batch
from memory.actors import Actor
from memory.exceptions import BatchRefused, DomainError, NotFound
from memory.models import Memory
from memory.serializers import parse_entries


class Command(BaseCommand):
    help = "Import entries from a JSON Lines file through the batch add (resumable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="JSON Lines: one add's fields a line.")
        parser.add_argument("--memory", metavar="SLUG", required=True, help="The Memory.")
        parser.add_argument("--batch", type=int, default=500, help="Lines per batch (≤ 1000).")
        parser.add_argument(
            "--start-line",
            type=int,
            default=None,
            help="First line to import (1-based); default: after the checkpoint, else 1.",
        )
        parser.add_argument(
            "--checkpoint",
            metavar="PATH",
            default=None,
            help="Where the last committed line is kept (default FILE.checkpoint).",
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"No file '{path}'.")
        memory = Memory.objects.filter(slug=options["memory"]).first()
        if memory is None:
            raise CommandError(f"No memory '{options['memory']}'.")
        size = options["batch"]
        if not 1 <= size <= max_batch():
            raise CommandError(f"--batch must be between 1 and {max_batch()}.")
        checkpoint = Path(options["checkpoint"] or f"{path}.checkpoint")
        start = options["start_line"]
        if start is None:
            start = _read_checkpoint(checkpoint) + 1
        if start < 1:
            raise CommandError("--start-line is 1 or more.")
        total = _count_lines(path)
        actor = Actor.system("import")
        created = duplicates = 0
        with (
            path.open(encoding="utf-8") as handle,
            tqdm(
                total=max(0, total - start + 1),
                unit="line",
                file=self.stderr,
                disable=options["no_progress"],
            ) as bar,
        ):
            for lines, items in _batches(handle, start, size):
                try:
                    entries = parse_entries(items)
                    result = add_entries(memory, actor=actor, entries=entries)
                except BatchRefused as exc:
                    raise CommandError(_refusal(exc, lines)) from None
                except (DomainError, NotFound) as exc:
                    raise CommandError(f"lines {lines[0]}–{lines[-1]}: {exc.message}") from None
                checkpoint.write_text(f"{lines[-1]}\n", encoding="utf-8")
                made = sum(1 for r in result.items if r.created)
                created += made
                duplicates += len(result.items) - made
                bar.update(lines[-1] - lines[0] + 1)
        self.stdout.write(
            f"{memory.slug}: {created} entries written, {duplicates} exact duplicates; "
            f"checkpoint {checkpoint}"
        )


def _read_checkpoint(path: Path) -> int:
    try:
        return int(path.read_text(encoding="utf-8").strip() or 0)
    except FileNotFoundError:
        return 0
    except ValueError as exc:
        raise CommandError(f"Checkpoint {path} does not hold a line number.") from exc


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def _batches(handle: Any, start: int, size: int) -> Any:
    """(line numbers, parsed objects) of up to ``size`` non-blank lines from ``start`` on."""
    lines: list[int] = []
    items: list[Any] = []
    for number, text in enumerate(handle, start=1):
        if number < start or not text.strip():
            continue
        try:
            items.append(json.loads(text))
        except json.JSONDecodeError as exc:
            raise CommandError(f"line {number}: not JSON ({exc.msg}).") from None
        lines.append(number)
        if len(items) == size:
            yield lines, items
            lines, items = [], []
    if items:
        yield lines, items


def _refusal(exc: BatchRefused, lines: list[int]) -> str:
    """Each refused item of a batch named by its line in the file."""
    out = [f"lines {lines[0]}–{lines[-1]} refused, nothing of them written ({exc.code}):"]
    for index, error in exc.details.get("entries", {}).items():
        out.append(
            f"  line {lines[int(index)]}: {error['code']}: {error['message']} "
            f"{json.dumps(error['details'], ensure_ascii=False)}"
        )
    return "\n".join(out)
