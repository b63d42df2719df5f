"""The second analyzer: ICU word segmentation, Snowball stemming, and a stored token count.

``memory.text`` now segments words with ICU (combining marks stay inside words; Thai, Lao, Khmer
and Myanmar are split by dictionary) and stems English words, so every stored ``searchable_text``
is recomputed, and ``term_count`` (its number of tokens, the lexical tie-break that used to be
computed from the text of every match) is added and filled:

1. ``term_count`` is added without rewriting the table. On SQLite a NOT NULL column would make
   Django rebuild the table, which drops its triggers and breaks the FTS5 source view; SQLite's
   own ``ADD COLUMN`` with a constant default does neither. PostgreSQL adds it as Django does.
2. Columns derived from the body may be rewritten under ``lib.append_only.rewriting_derived_columns``:
   on PostgreSQL ``steward_append_only()`` lets an UPDATE of ``memory_entryversion`` through only
   while the transaction-local setting ``steward.rewrite_derived`` names the table and nothing but
   ``searchable_text``, ``term_count`` and the generated ``search_vector`` differs; everything
   else is refused as before. SQLite gets an update trigger that keeps the FTS5 index in step.
3. Every version is re-analyzed in batches of 2000 rows, keyset by primary key
   (``memory.search.reindex``). Reversing keeps the new analysis (the old analyzer is gone);
   ``rebuild_projection --reindex`` recomputes it for whatever analyzer is installed.
"""

from django.db import migrations, models

from memory.search.reindex import reanalyze_versions

SQLITE_ADD = (
    'ALTER TABLE memory_entryversion ADD COLUMN "term_count" integer unsigned NOT NULL '
    'DEFAULT 0 CHECK ("term_count" >= 0)'
)
SQLITE_DROP = 'ALTER TABLE memory_entryversion DROP COLUMN "term_count"'

SQLITE_FTS_UPDATE = """
CREATE TRIGGER IF NOT EXISTS memory_entryversion_fts_au
AFTER UPDATE OF searchable_text ON memory_entryversion BEGIN
    INSERT INTO memory_entryversion_fts(memory_entryversion_fts, rowid, searchable_text, scope)
    VALUES ('delete', old.id, old.searchable_text, 'm' || old.memory_id);
    INSERT INTO memory_entryversion_fts(rowid, searchable_text, scope)
    VALUES (new.id, new.searchable_text, 'm' || new.memory_id);
END
"""
SQLITE_FTS_UPDATE_DROP = "DROP TRIGGER IF EXISTS memory_entryversion_fts_au"

DERIVED = "ARRAY['searchable_text', 'term_count', 'search_vector']"
PG_GUARD = f"""
CREATE OR REPLACE FUNCTION steward_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'memory_entryversion'
       AND current_setting('steward.rewrite_derived', true) = TG_TABLE_NAME
       AND (to_jsonb(NEW) - {DERIVED}) = (to_jsonb(OLD) - {DERIVED}) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""
PG_GUARD_BEFORE = """
CREATE OR REPLACE FUNCTION steward_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""


def _term_count() -> models.Field:
    field = models.PositiveIntegerField(default=0)
    field.set_attributes_from_name("term_count")
    return field


def add_term_count(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE_ADD)
    else:
        schema_editor.add_field(apps.get_model("memory", "EntryVersion"), _term_count())


def remove_term_count(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE_DROP)
    else:
        schema_editor.remove_field(apps.get_model("memory", "EntryVersion"), _term_count())


def allow_derived_rewrites(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_GUARD, params=None)
    elif vendor == "sqlite":
        schema_editor.execute(SQLITE_FTS_UPDATE)


def refuse_derived_rewrites(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_GUARD_BEFORE, params=None)
    elif vendor == "sqlite":
        schema_editor.execute(SQLITE_FTS_UPDATE_DROP)


def reindex(apps, schema_editor):
    reanalyze_versions(using=schema_editor.connection.alias, recount=False)


class Migration(migrations.Migration):
    dependencies = [("memory", "0013_gin_without_pending_list")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="entryversion",
                    name="term_count",
                    field=models.PositiveIntegerField(default=0),
                )
            ],
            database_operations=[migrations.RunPython(add_term_count, remove_term_count)],
        ),
        migrations.RunPython(allow_derived_rewrites, refuse_derived_rewrites),
        migrations.RunPython(reindex, migrations.RunPython.noop),
    ]
