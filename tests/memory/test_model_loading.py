"""Loading the packaged embedding model in a fresh process, as a server worker does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_model_loads_without_writing_progress_bars_to_stderr():
    code = (
        "import django\n"
        "django.setup()\n"
        "from memory.embeddings import _load_minilm\n"
        "print(len(_load_minilm().encode(['The release train leaves on Tuesdays.'])[0]))\n"
    )
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["384"]
    assert "Loading weights" not in out.stderr, out.stderr


def test_embedding_writes_no_progress_bar_in_a_worker_logging_at_info():
    """``celery worker -l info`` sets the root logger to INFO; sentence-transformers shows a
    "Batches" progress bar for every encode at that level unless asked not to, one per write
    in the worker's log."""
    code = (
        "import logging, django\n"
        "django.setup()\n"
        "logging.getLogger().setLevel(logging.INFO)\n"
        "from memory.embeddings import MiniLMProvider\n"
        "print(len(MiniLMProvider().embed(['The release train leaves on Tuesdays.'])[0]))\n"
    )
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["384"]
    assert "Batches" not in out.stderr, out.stderr
