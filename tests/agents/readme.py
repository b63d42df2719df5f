"""The README's Python blocks, run as written against the demo that ``make demo`` loads."""

from __future__ import annotations

import contextlib
import io
import re
from io import StringIO
from pathlib import Path

from django.core.management import call_command

README = Path(__file__).resolve().parents[2] / "README.md"


def python_block(marker: str) -> str:
    """The one Python block of the README that contains ``marker``."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (block,) = [b for b in blocks if marker in b]
    return block


def demo_agent_key() -> str:
    """Load the demo (idempotent) and return the agent key it prints."""
    out = StringIO()
    call_command("load_demo", "--quiet", stdout=out)
    return out.getvalue().strip()


def run_block(code: str, replacements: dict[str, str]) -> list[str]:
    """Run ``code`` with each placeholder replaced; the lines it printed."""
    for placeholder, value in replacements.items():
        code = code.replace(placeholder, value)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    return printed.getvalue().splitlines()
