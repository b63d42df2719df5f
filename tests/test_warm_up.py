"""The start-up warm-up (config/warmup.py) renders a proposal page and loads the write path's
lazy parts, and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config.warmup import warm_pages
from tests.review_ui.conftest import consolidate

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent


def test_the_page_warm_up_renders_a_proposal_page_and_writes_nothing(memory, agent, caplog):
    consolidate(memory, agent.actor)
    with CaptureQueriesContext(connection) as queries:
        warm_pages()
    sql = [q["sql"].lstrip().upper() for q in queries.captured_queries]
    assert any("PROPOSALS_PROPOSALCOMMENT" in s for s in sql), "the page's thread was read"
    assert not [s for s in sql if s.startswith(("INSERT", "UPDATE", "DELETE"))]
    assert "warm-up rendered" not in caplog.text


def test_the_page_warm_up_does_nothing_without_a_proposal(memory):
    with CaptureQueriesContext(connection) as queries:
        warm_pages()
    assert all(q["sql"].startswith("SELECT") for q in queries.captured_queries)
    assert len(queries.captured_queries) <= 2


def test_the_write_warm_up_loads_the_secret_scanner_and_celerys_sending_parts():
    # In a process of its own: this one may have loaded them already.
    script = (
        "import sys, django; django.setup(); from config.warmup import warm_writes; "
        "before = set(sys.modules); warm_writes(); new = set(sys.modules) - before; "
        "print('celery.app.trace' in new, any(m.startswith('detect_secrets.plugins.') for m in new))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]
