"""Transport and content security: CSP on every page, deploy checks clean in production settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.audit.conftest import logged_in

ROOT = Path(__file__).resolve().parents[2]


def csp_directives(header: str) -> dict[str, list[str]]:
    out = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


@pytest.mark.parametrize("path", ["/accounts/login/", "/api/v1/docs/", "/review/", "/audit/"])
def test_every_page_carries_a_strict_content_security_policy(staff, path):
    r = logged_in("root").get(path)
    assert r.status_code == 200, (path, r.status_code)
    csp = csp_directives(r["Content-Security-Policy"])
    assert csp["default-src"] == ["'self'"]
    assert csp["script-src"] == ["'self'"]
    # The Swagger UI styles its widgets inline; scripts stay strict everywhere.
    styles = ["'self'", "'unsafe-inline'"] if path == "/api/v1/docs/" else ["'self'"]
    assert csp["style-src"] == styles
    assert csp["frame-ancestors"] == ["'none'"]
    assert "'unsafe-eval'" not in r["Content-Security-Policy"]


def test_the_api_docs_page_has_no_inline_script(staff):
    html = logged_in("root").get("/api/v1/docs/").content.decode()
    import re

    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag, tag


def test_no_template_uses_inline_script_or_style():
    import re

    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), template
        assert "<style" not in text and " style=" not in text, template
        assert not re.search(r"\son[a-z]+=", text), template
        assert "hx-on" not in text, template


def _deploy_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DEBUG")}
    env.update(
        SECRET_KEY="x" * 20 + "-production-secret-for-the-deploy-check-0123456789-abcdefghij",
        ALLOWED_HOSTS="steward.example.org",
        HTTPS="true",
        STEWARD_PUBLIC_URL="https://steward.example.org",
    )
    env.update(extra)
    return env


def test_check_deploy_is_clean_with_the_production_environment(tmp_path):
    env = _deploy_env(STATIC_ROOT=str(tmp_path / "static"))
    collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"]
    done = subprocess.run(collect, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = out.stdout + out.stderr
    assert out.returncode == 0, report
    assert "System check identified no issues" in report, report


def test_the_schema_generator_gives_no_warning_and_the_document_validates(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            str(tmp_path / "schema.yaml"),
        ],
        cwd=ROOT,
        env=_deploy_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Warning" not in out.stderr and "Error" not in out.stderr, out.stderr


def test_https_switches_on_hsts_secure_cookies_and_the_redirect():
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SESSION_COOKIE_SECURE, "
        "s.CSRF_COOKIE_SECURE)"
    )
    run = lambda env: subprocess.run(  # noqa: E731
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
    assert run(_deploy_env()) == ["True", "31536000", "True", "True"]
    assert run(_deploy_env(HTTPS="false")) == ["False", "0", "False", "False"]
    assert run(_deploy_env(HTTPS="false", SESSION_COOKIE_SECURE="1"))[2] == "True"
