"""``manage.py evaluate``: sections, the JSON report, the table, the plot."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.sections import all_sections
from memory.models import Memory


def test_sections_are_registered_in_order():
    names = [s.name for s in all_sections()]
    assert "no_regression" in names
    assert len(names) == len(set(names))


def test_unknown_section_is_refused(db):
    with pytest.raises(CommandError, match="Unknown section"):
        call_command("evaluate", "nonsense")


def test_no_regression_section_reports_quality_off_equals_rrf(db, tmp_path, capsys):
    out = tmp_path / "report.json"
    call_command("evaluate", "no_regression", "--quick", "--seed", "3", "--json", str(out))
    report = json.loads(out.read_text())
    nr = report["no_regression"]
    assert nr["quality_off_equals_rrf"] is True
    assert nr["queries_equal_to_rrf"] == nr["queries"] > 0
    assert nr["quality_on_membership_unchanged"] is True
    assert 0 <= nr["quality_on_max_shift"] <= 2
    # the quality signals do move members on this workload, so the equality above is not vacuous
    assert nr["quality_on_reordered_queries"] > 0
    assert report["meta"]["seed"] == 3
    printed = capsys.readouterr().out
    assert "quality_off_equals_rrf" in printed
    # throwaway Memories, clearly marked
    slugs = report["meta"]["memories"]
    assert slugs and all(s.startswith("eval-") for s in slugs)
    assert all(m.name.startswith("[evaluation]") for m in Memory.objects.filter(slug__in=slugs))


def test_plot_writes_a_png_of_the_density_curve(db, tmp_path):
    png = tmp_path / "curve.png"
    out = tmp_path / "r.json"
    call_command("evaluate", "density", "--quick", "--plot", str(png), "--json", str(out))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(json.loads(out.read_text())["density"]["curve"]) >= 4


def test_a_database_holding_other_memories_is_refused_before_anything_is_written(memory):
    with pytest.raises(CommandError, match=rf"such as '{memory.slug}'.*--shared-database"):
        call_command("evaluate", "no_regression", "--quick")
    assert list(Memory.objects.values_list("slug", flat=True)) == [memory.slug]


def test_shared_database_writes_the_workloads_beside_the_other_memories(memory, tmp_path):
    out = tmp_path / "r.json"
    call_command("evaluate", "no_regression", "--quick", "--shared-database", "--json", str(out))
    slugs = json.loads(out.read_text())["meta"]["memories"]
    assert slugs and Memory.objects.filter(slug__in=slugs).count() == len(slugs)
    # a second run on a database of evaluation workloads only needs no flag
    Memory.objects.filter(pk=memory.pk).update(
        slug="eval-kept-by-an-earlier-run", name="[evaluation] kept by an earlier run"
    )
    call_command("evaluate", "no_regression", "--quick", "--seed", "5")


def test_a_served_memory_whose_slug_reads_like_a_workload_is_still_refused(db):
    served = Memory.objects.create(slug="eval-harness", name="Eval harness team")
    with pytest.raises(CommandError, match=r"such as 'eval-harness'"):
        call_command("evaluate", "no_regression", "--quick")
    assert list(Memory.objects.values_list("slug", flat=True)) == [served.slug]
