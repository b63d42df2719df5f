"""The SQLite backend: Django's own, on an SQLite that can load the sqlite-vec extension."""
