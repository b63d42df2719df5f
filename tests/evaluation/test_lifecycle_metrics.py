"""The lifecycle sections: the safety figures hold, and one seed gives one report on every
backend — the suite runs on SQLite and on PostgreSQL, and both runs must equal the same stored
expectation (``expected/lifecycle_quick_seed11.json``, recorded from a run)."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.report import metrics_only, run_sections
from evaluation.sections import LIFECYCLE, select
from evaluation.workbench import Workbench

EXPECTED = Path(__file__).parent / "expected" / "lifecycle_quick_seed11.json"


def test_lifecycle_metrics_hold_and_match_the_stored_expectation_on_this_backend(db):
    report, _ = run_sections(Workbench(seed=11, quick=True), select(list(LIFECYCLE)))

    assert report["stale_recall_rate"] == 0
    assert report["ledger"]["current_accuracy"] == 1.0
    assert report["ledger"]["at_revision_accuracy"] == 1.0
    assert report["conflict_exposure"] == 1.0
    assert report["no_regression"]["quality_off_equals_rrf"] is True
    curve = report["density"]["curve"]
    assert len(curve) >= 4
    for point in curve:
        assert set(point) == {
            "injected",
            "recall_at_10_quality_off",
            "recall_at_10_quality_on",
            "mrr_quality_off",
            "mrr_quality_on",
        }
        assert point["recall_at_10_quality_on"] >= point["recall_at_10_quality_off"]
    # the workloads are not vacuous: density hurts plain RRF, history keeps the stale version,
    # aging unattested current state declines, while history and constraints are not penalized
    assert curve[-1]["mrr_quality_off"] < curve[0]["mrr_quality_off"]
    fresh = report["freshness"]
    assert fresh["history_view_stale_labelled"] == 1.0
    assert fresh["quality_on"]["aging_current_state_declined"] > 0
    assert fresh["quality_on"]["historical_newer_wins_penalties"] == 0
    assert fresh["quality_on"]["historical_recall_at_10"] == 1.0
    assert report["context_pack"]["within_budget"] is True

    expected = json.loads(EXPECTED.read_text())
    assert metrics_only(json.loads(json.dumps(report))) == expected
