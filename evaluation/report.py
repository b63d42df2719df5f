"""Running sections into one report; the printed table; the plot."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.db import connection

from .registry import Figure, Section, SectionResult
from .workbench import Workbench


def run_sections(bench: Workbench, sections: Sequence[Section]) -> tuple[dict[str, Any], list]:
    """Run ``sections`` in order; the merged report and, per section, its result."""
    report: dict[str, Any] = {}
    results: list[tuple[Section, SectionResult, float]] = []
    for sec in sections:
        started = time.monotonic()
        result = sec.run(bench)
        seconds = time.monotonic() - started
        clash = set(result.report) & (set(report) | {"meta"})
        if clash:
            raise ValueError(f"section {sec.name!r} reports keys already taken: {sorted(clash)}")
        report.update(result.report)
        results.append((sec, result, seconds))
    report["meta"] = {
        "seed": bench.seed,
        "quick": bench.quick,
        "backend": connection.vendor,
        "sections": [s.name for s in sections],
        "seconds": {s.name: round(t, 2) for s, _, t in results},
        "memories": [m.slug for m in bench.memories],
    }
    return report, results


def metrics_only(report: dict[str, Any]) -> dict[str, Any]:
    """The report without its ``meta`` (run id, backend, timings): what must be identical for
    one seed on every backend."""
    return {k: v for k, v in report.items() if k != "meta"}


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def table(results: Sequence[tuple[Section, SectionResult, float]]) -> str:
    """The printed table: section, metric, value."""
    lines: list[tuple[str, str, str]] = []
    for sec, result, _ in results:
        for metric, value in result.rows:
            lines.append((sec.name, metric, format_value(value)))
    if not lines:
        return "(no metrics)"
    w0 = max(len("section"), *(len(a) for a, _, _ in lines))
    w1 = max(len("metric"), *(len(b) for _, b, _ in lines))
    out = [f"{'section':<{w0}}  {'metric':<{w1}}  value", f"{'-' * w0}  {'-' * w1}  -----"]
    out += [f"{a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in lines]
    return "\n".join(out)


def write_json(report: dict[str, Any], path: str) -> None:
    Path(path).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def plot(figures: Sequence[Figure], path: str) -> None:
    """Every section's figures as panels of one PNG (matplotlib, Agg: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    n = max(1, len(figures))
    fig, axes = plt.subplots(n, 1, figsize=(8, 4.2 * n), squeeze=False)
    for ax, figure in zip(axes[:, 0], figures, strict=False):
        for name, points in figure.series.items():
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            # "off" dashed under "on" solid, so identical series stay visible
            off = "off" in name
            ax.plot(
                xs,
                ys,
                marker="s" if off else "o",
                linestyle="--" if off else "-",
                linewidth=2.5 if off else 1.5,
                label=name,
            )
        ax.set_title(figure.title)
        ax.set_xlabel(figure.x_label)
        ax.set_ylabel(figure.y_label)
        ax.set_ylim(-0.02, 1.05)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    if not figures:
        axes[0, 0].text(0.5, 0.5, "no figures in these sections", ha="center", va="center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
