"""Deployment settings read from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def database_settings(**env: str) -> dict[str, object]:
    """The default database's settings as a fresh process computes them from ``env``."""
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        "d = settings.DATABASES['default']; "
        "print(json.dumps({k: d[k] for k in ('CONN_MAX_AGE', 'CONN_HEALTH_CHECKS')}))"
    )
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_connections_are_kept_when_asked_and_checked_before_reuse():
    assert database_settings(CONN_MAX_AGE="0") == {"CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": True}
    assert database_settings(CONN_MAX_AGE="60") == {
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def test_tasks_run_in_process_without_a_broker_and_without_looking_for_one():
    code = (
        "import django\n"
        "django.setup()\n"
        "from django.conf import settings\n"
        "from config.celery import app\n"
        "@app.task(name='probe')\n"
        "def probe():\n"
        "    return 7\n"
        "print(settings.CELERY_TASK_ALWAYS_EAGER, app.conf.broker_url, probe.delay().get())\n"
    )
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    environ.pop("CELERY_BROKER_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "memory://localhost/", "7"]
    assert "hostname" not in out.stderr, out.stderr
