"""The ground imports no app, and review and audit do not import each other.

Read from the source (every ``import`` statement, also inside functions and under
``TYPE_CHECKING``), so an import hidden in a function body counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.apps import apps

ROOT = Path(__file__).resolve().parent.parent


def _project_apps() -> set[str]:
    """The project's own apps (those whose code lives in this repository)."""
    return {c.name for c in apps.get_app_configs() if Path(c.path).resolve().parent == ROOT}


def _imports(folder: str) -> list[tuple[str, int, str]]:
    """``(file, line, module)`` for every absolute import under ``folder``."""
    found: list[tuple[str, int, str]] = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found.extend((str(path.relative_to(ROOT)), node.lineno, name) for name in names)
    return found


def _naming(folder: str, packages: set[str]) -> list[str]:
    return [
        f"{file}:{line} imports {module}"
        for file, line, module in _imports(folder)
        if module.split(".")[0] in packages
    ]


def test_the_apps_are_found():
    assert {"memory", "review", "audit"} <= _project_apps()


def test_lib_imports_no_app():
    assert _naming("lib", _project_apps()) == []


@pytest.mark.parametrize(("app", "other"), [("review", "audit"), ("audit", "review")])
def test_review_and_audit_do_not_import_each_other(app, other):
    assert _naming(app, {other}) == []
