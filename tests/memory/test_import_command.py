"""``manage.py import FILE --memory SLUG``: JSON Lines through the batch add, resumable."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from memory.models import Entry, Revision

pytestmark = pytest.mark.django_db

AWS = "The CI key is AKIAIOSFODNN7EXAMPLE for the build account"


def write(tmp_path, bodies):
    path = tmp_path / "turns.jsonl"
    path.write_text(
        "\n".join(json.dumps({"body": b, "kind": "fact", "session_id": "s1"}) for b in bodies)
        + "\n",
        encoding="utf-8",
    )
    return path


def run(path, *extra):
    out = io.StringIO()
    call_command("import", str(path), "--memory", "acme", "--no-progress", *extra, stdout=out)
    return out.getvalue()


def test_imports_in_batches_of_one_revision_each(memory, tmp_path):
    path = write(tmp_path, [f"Turn {i} of the standup" for i in range(7)])
    out = run(path, "--batch", "3")
    assert "7 entries written, 0 exact duplicates" in out
    assert Entry.objects.filter(memory=memory, session_id="s1").count() == 7
    assert Revision.objects.filter(memory=memory).count() == 3
    assert (tmp_path / "turns.jsonl.checkpoint").read_text().strip() == "7"


def test_a_refused_line_stops_the_run_and_a_rerun_resumes_after_the_checkpoint(memory, tmp_path):
    bodies = [f"Turn {i} of the standup" for i in range(6)]
    bodies[4] = AWS
    path = write(tmp_path, bodies)
    with pytest.raises(CommandError) as exc:
        run(path, "--batch", "2")
    assert "line 5: secret_detected" in str(exc.value)
    assert "AKIA" not in str(exc.value)
    # The batches before the refused one are written; the checkpoint names their last line.
    assert Entry.objects.count() == 4
    assert (tmp_path / "turns.jsonl.checkpoint").read_text().strip() == "4"
    bodies[4] = "Turn 4 of the standup, the key redacted"
    path = write(tmp_path, bodies)
    out = run(path, "--batch", "2")
    assert "2 entries written, 0 exact duplicates" in out
    assert Entry.objects.count() == 6
    # From the first line again: every line is an exact duplicate, nothing written.
    out = run(path, "--start-line", "1")
    assert "0 entries written, 6 exact duplicates" in out
    assert Entry.objects.count() == 6


def test_a_malformed_line_is_named(memory, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"body": "ok", "kind": "fact"}\n{"body": "x", "kind": "rumour"}\nnope\n')
    with pytest.raises(CommandError) as exc:
        run(path)
    assert "line 3: not JSON" in str(exc.value)
    path.write_text('{"body": "ok", "kind": "fact"}\n\n{"body": "x", "kind": "rumour"}\n')
    with pytest.raises(CommandError) as exc:
        run(path)
    assert "line 3: invalid" in str(exc.value)
    assert Entry.objects.count() == 0
