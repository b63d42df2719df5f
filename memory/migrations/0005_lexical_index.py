"""The lexical index over ``EntryVersion.searchable_text`` (DESIGN.md §6).

``searchable_text`` is already tokenized by the one analyzer (``memory.text``): space-separated
tokens of letters, digits and underscores (CJK unigrams and bigrams included). Both backends
index exactly those tokens and nothing else, which is what makes their results identical:

- SQLite: an FTS5 *external-content* table (no second copy of the text) with the ``ascii``
  tokenizer and ``_`` as a token character, so every space-separated analyzer token is one FTS
  token and non-ASCII letters are never split or folded. Triggers keep it in step with inserts
  (versions are append-only; the delete trigger only serves test-database flushes).
- PostgreSQL: a GIN index over ``steward_tsvector(searchable_text)``, an IMMUTABLE function that
  turns the analyzer tokens into lexemes verbatim (``array_to_tsvector``). This is the ``simple``
  configuration minus its re-parsing: the analyzer has already casefolded, and the ``simple``
  parser would split ``foo_bar`` into two lexemes that FTS5 keeps as one. Tokens longer than a
  tsvector lexeme may be (2046 bytes) are left out; queries drop such terms on both backends.

The writer (``memory.actions``) needs no change: the index follows the inserts by itself.
"""

from django.db import migrations

SQLITE_FORWARD = [
    """
    CREATE VIRTUAL TABLE memory_entryversion_fts USING fts5(
        searchable_text,
        content='memory_entryversion',
        content_rowid='id',
        tokenize="ascii tokenchars '_'"
    )
    """,
    """
    CREATE TRIGGER memory_entryversion_fts_ai AFTER INSERT ON memory_entryversion BEGIN
        INSERT INTO memory_entryversion_fts(rowid, searchable_text)
        VALUES (new.id, new.searchable_text);
    END
    """,
    """
    CREATE TRIGGER memory_entryversion_fts_ad AFTER DELETE ON memory_entryversion BEGIN
        INSERT INTO memory_entryversion_fts(memory_entryversion_fts, rowid, searchable_text)
        VALUES ('delete', old.id, old.searchable_text);
    END
    """,
    "INSERT INTO memory_entryversion_fts(memory_entryversion_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS memory_entryversion_fts_ad",
    "DROP TRIGGER IF EXISTS memory_entryversion_fts_ai",
    "DROP TABLE IF EXISTS memory_entryversion_fts",
]

PG_FORWARD = [
    """
    CREATE OR REPLACE FUNCTION steward_tsvector(text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
        SELECT array_to_tsvector(ARRAY(
            SELECT DISTINCT t FROM unnest(string_to_array($1, ' ')) AS t
            WHERE t <> '' AND octet_length(t) <= 2046
        ))
    $$
    """,
    """
    CREATE INDEX memory_entryversion_lexical ON memory_entryversion
    USING gin (steward_tsvector(searchable_text))
    """,
]
PG_BACKWARD = [
    "DROP INDEX IF EXISTS memory_entryversion_lexical",
    "DROP FUNCTION IF EXISTS steward_tsvector(text)",
]


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"sqlite": SQLITE_FORWARD, "postgresql": PG_FORWARD}.get(vendor, [])
    for sql in statements:
        schema_editor.execute(sql)


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"sqlite": SQLITE_BACKWARD, "postgresql": PG_BACKWARD}.get(vendor, [])
    for sql in statements:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("memory", "0004_audit_append_only")]
    operations = [migrations.RunPython(forward, backward)]
