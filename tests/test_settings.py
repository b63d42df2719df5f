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


def run_fresh(code: str, *, unset: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env}
    for name in unset:
        environ.pop(name, None)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True
    )


def test_the_deploy_check_says_so_when_no_secret_key_was_set():
    """Without SECRET_KEY the key is one anyone can read in this repository; `check --deploy`
    must not pass it as a real one."""
    code = (
        "import django\n"
        "django.setup()\n"
        "from django.core import checks\n"
        "found = checks.run_checks(include_deployment_checks=True, tags=['security'])\n"
        "print(' '.join(sorted(m.id for m in found)))\n"
    )
    out = run_fresh(code, unset=("SECRET_KEY",), HTTPS="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["security.W009"]
    out = run_fresh(code, SECRET_KEY="k" * 20 + "-Zq8vR2mN7xL4pT9wB3sF6hJ1cD5gK0aE", HTTPS="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []


def test_mail_reaches_the_smtp_server_the_environment_names():
    code = (
        "import json, django\n"
        "django.setup()\n"
        "from django.core.mail import get_connection\n"
        "c = get_connection()\n"
        "print(json.dumps([type(c).__name__, c.host, c.port, c.username, c.password,\n"
        "                  c.use_tls, c.use_ssl, c.timeout]))\n"
    )
    out = run_fresh(
        code,
        unset=("STEWARD_OUTBOX", "DEBUG"),
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        EMAIL_HOST="smtp.example.com",
        EMAIL_PORT="587",
        EMAIL_HOST_USER="steward",
        EMAIL_HOST_PASSWORD="pw",
        EMAIL_USE_TLS="true",
        EMAIL_TIMEOUT="12",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [
        "EmailBackend",
        "smtp.example.com",
        587,
        "steward",
        "pw",
        True,
        False,
        12,
    ]
