"""The authoritative Memory: entries, immutable versions, revisions, heads, relations, recall."""
