"""Deployment checks (`manage.py check --deploy`) of what a production server needs besides
its settings."""

from __future__ import annotations

from pathlib import Path

from django.core.checks import run_checks
from django.core.management import call_command
from django.test import override_settings


def static_warnings() -> list[str]:
    found = run_checks(include_deployment_checks=True, tags=["staticfiles"])
    return [m.id for m in found if m.id and m.id.startswith("review.")]


def test_the_deploy_check_asks_for_collected_static_files(tmp_path: Path) -> None:
    with override_settings(DEBUG=False, STATIC_ROOT=str(tmp_path)):
        assert static_warnings() == ["review.W002"]  # nothing collected: unstyled pages
        call_command("collectstatic", interactive=False, verbosity=0)
        assert static_warnings() == []
        (tmp_path / "css" / "app.css").write_text("/* an older release */")
        assert static_warnings() == ["review.W002"]  # upgraded without collectstatic
    with override_settings(DEBUG=True, STATIC_ROOT=str(tmp_path / "empty")):
        assert static_warnings() == []  # runserver serves the source folders
