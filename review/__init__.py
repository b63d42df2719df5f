"""Review: decisions, maintenance operations, the htmx inbox and the audit views."""
