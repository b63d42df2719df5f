"""No foreign key carries an index of its own when a composite index or unique constraint of
its table already leads with its column: the composite serves every lookup by that column, and
each extra index is one more to update on every insert (seven tables take a row on each add).

Checked twice: in the models (so a new foreign key beside such a composite declares
``db_index=False``) and in the migrated database (so the migrations really dropped them, on
SQLite and on PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.db import connection, models

OUR_APPS = {"memory", "proposals", "review", "audit", "agents", "evaluation"}


def _leading_columns(model: type[models.Model]) -> set[str]:
    """The first column of each multi-column index or unique constraint that has no condition
    (a partial index serves only its own rows)."""
    opts = model._meta

    def column(name: str) -> str:
        field = opts.get_field(name.lstrip("-"))
        assert isinstance(field, models.Field) and field.column is not None
        return field.column

    groups: list[list[str]] = [
        [column(name) for name in index.fields]
        for index in opts.indexes
        if index.condition is None and index.fields
    ]
    groups += [
        [column(name) for name in constraint.fields]
        for constraint in opts.constraints
        if isinstance(constraint, models.UniqueConstraint)
        and constraint.condition is None
        and constraint.fields
    ]
    return {columns[0] for columns in groups if len(columns) > 1}


def _our_models() -> list[type[models.Model]]:
    return [m for m in apps.get_models() if m._meta.app_label in OUR_APPS]


def _covered_foreign_keys() -> list[tuple[type[models.Model], models.ForeignKey[Any, Any]]]:
    return [
        (model, field)
        for model in _our_models()
        for field in model._meta.local_fields
        if isinstance(field, models.ForeignKey)
        and not field.unique
        and field.column in _leading_columns(model)
    ]


def test_no_foreign_key_declares_an_index_a_composite_already_provides():
    redundant = [
        f"{model._meta.label}.{field.name}"
        for model, field in _covered_foreign_keys()
        # As its migration declares it (a foreign key is indexed unless it says otherwise).
        if field.deconstruct()[3].get("db_index", True)
    ]
    assert redundant == []


def test_the_covered_foreign_keys_are_the_known_ones():
    # The write path's tables: a change here is a schema decision to look at, not noise.
    covered = {f"{model._meta.label}.{field.name}" for model, field in _covered_foreign_keys()}
    assert {
        "memory.Entry.memory",
        "memory.EntryVersion.memory",
        "memory.EntryVersion.entry",
        "memory.Evidence.version",
        "memory.Revision.memory",
        "memory.Head.memory",
        "memory.LifecycleProjection.memory",
        "proposals.ProposalTarget.proposal",
    } <= covered


@pytest.mark.django_db
def test_the_database_holds_no_single_column_index_a_composite_leads_with():
    redundant = []
    with connection.cursor() as cursor:
        for model in _our_models():
            leading = _leading_columns(model)
            table = model._meta.db_table
            for name, info in connection.introspection.get_constraints(cursor, table).items():
                if (
                    info["index"]
                    and not info["unique"]
                    and not info["primary_key"]
                    and len(info["columns"]) == 1
                    and info["columns"][0] in leading
                    # PostgreSQL's pattern-operator twin of a text column serves LIKE, not '='.
                    and not name.endswith("_like")
                ):
                    redundant.append(f"{table}.{name}")
    assert redundant == []
