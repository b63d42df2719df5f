"""The Memory home and maintenance pages in real Chromium: the vendored charts draw, nothing
overflows horizontally on a 390 px phone, and a queued run's page follows the run by itself."""

from __future__ import annotations

from playwright.sync_api import expect

from memory import actions, maintenance
from memory.actors import Actor
from tests.browser.conftest import login
from tests.browser.test_content_security_policy import watch_violations
from tests.factories import remember

WIDE = "document.documentElement.scrollWidth > document.documentElement.clientWidth"

# Per chart: the value axis (its minimum and tick values) and, for a bar chart, where each bar
# sits against its category tick and the plot area.
CHART_GEOMETRY = """() => Array.from(document.querySelectorAll('canvas')).map(c => {
  const chart = Chart.getChart(c), x = chart.scales.x, y = chart.scales.y, area = chart.chartArea;
  const bars = chart.config.type !== 'bar' ? [] : chart.getDatasetMeta(0).data.map((b, i) => {
    const p = b.getProps(['x', 'width'], true);
    return {centre: p.x, tick: x.getPixelForTick(i), left: p.x - p.width / 2,
            right: p.x + p.width / 2};
  });
  return {id: c.id, min: y.min, ticks: y.ticks.map(t => t.value), bars: bars,
          left: area.left, right: area.right};
})"""


def test_memory_home_draws_its_charts_and_fits_a_phone(page, reviewer, memory, agent):
    for i in range(4):
        remember(memory, agent.actor, f"Phone fact number {i} about s3://acme-cache", dedupe=False)
    run = maintenance.run_job(memory, actor=Actor.system("t"), job="near_duplicates")
    login(page, "rita", "pw-rita-123", next_path="/memories/acme/")
    page.wait_for_function("typeof Chart !== 'undefined'")
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('canvas')).filter(c => Chart.getChart(c)).length"
    )
    assert drawn == 5
    for path in (
        "/memories/acme/",
        "/memories/acme/maintenance/",
        f"/memories/acme/maintenance/{run.pk}/",
    ):
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(path)
        assert not page.evaluate(WIDE), f"horizontal overflow at 390 px on {path}"


def test_the_entry_browser_never_breaks_a_kind_or_tier_inside_a_word(page, reviewer, memory, agent):
    # At a laptop width the body column takes the room; the short token columns keep their words
    # whole ("working_note", not "working_not / e").
    remember(memory, agent.actor, "A note " + "with a rather long body " * 12, kind="working_note")
    login(page, "rita", "pw-rita-123", next_path="/memories/acme/entries/")
    page.set_viewport_size({"width": 1024, "height": 900})
    page.goto("/memories/acme/entries/")
    for label in ("Kind", "Tier", "Head"):
        cell = page.locator(f'.entry-list td[data-label="{label}"]').first
        lines = cell.evaluate(
            "td => { const r = document.createRange(); r.selectNodeContents(td);"
            " return new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top))).size; }"
        )
        assert lines == 1, f"the {label} cell wraps onto {lines} lines"


def test_memory_home_charts_count_from_zero_and_bars_sit_on_their_ticks(
    page, reviewer, memory, agent
):
    for i in range(3):
        remember(memory, agent.actor, f"Chart fact number {i} about the deploy window")
    remember(
        memory, agent.actor, "Use pnpm here", kind="working_note", tier="session", session_id="s1"
    )
    actions.end_session(memory, actor=agent.actor, session_id="s1")  # one auto-deactivation
    login(page, "rita", "pw-rita-123", next_path="/memories/acme/")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/memories/acme/")
        page.wait_for_function("typeof Chart !== 'undefined'")
        charts = page.evaluate(CHART_GEOMETRY)
        assert len(charts) == 5
        for chart in charts:
            where = f"{chart['id']} at {width} px"
            assert chart["min"] == 0, where
            assert all(float(t).is_integer() for t in chart["ticks"]), (where, chart["ticks"])
            for bar in chart["bars"]:
                assert abs(bar["centre"] - bar["tick"]) < 1, (where, bar)
                assert chart["left"] <= bar["left"] and bar["right"] <= chart["right"], (where, bar)
        assert any(c["id"] == "chart-auto" and len(c["bars"]) == 1 for c in charts)


def test_a_queued_run_page_follows_the_run_by_itself_under_the_policy(
    page, reviewer, memory, agent
):
    """No reload and no inline script: htmx asks for the status region until the run is
    recorded, then stops."""
    violations = watch_violations(page)
    remember(memory, agent.actor, "The deploy runs nightly via deploy.sh", dedupe=False)
    task_id = "0b9f6a52-3c1e-4c4e-9a57-0e4b8c1d2f30"
    path = f"/memories/acme/maintenance/tasks/near_duplicates/{task_id}/"
    login(page, "rita", "pw-rita-123", next_path=path)
    status = page.locator("#run-status h2")
    expect(status).to_have_text("Status: queued")
    with maintenance.job_lock(memory, "near_duplicates", task_id):  # a worker took it
        expect(status).to_have_text("Status: running", timeout=10_000)
        run = maintenance.jobs()["near_duplicates"].runner(
            memory, actor=Actor.system("t"), dry_run=True
        )
    expect(status).to_have_text("Status: queued", timeout=10_000)  # not this task's run
    run = maintenance.run_job(
        memory, actor=Actor.system("t"), job="near_duplicates", holder=task_id
    )
    expect(page.get_by_role("link", name=f"Run #{run.pk}")).to_be_visible(timeout=10_000)
    expect(status).to_have_text("Status: finished")
    assert page.locator("#run-status[hx-trigger]").count() == 0
    assert violations == []
