"""Evaluation: seeded synthetic workloads that measure recall quality and lifecycle safety.

``manage.py evaluate [SECTION ...]`` runs the registered sections (:mod:`.registry`), each a
module of :mod:`evaluation.sections`, against throwaway Memories on the configured database and
prints one table; ``--json`` writes the report (the keys are a contract: see docs/evaluation.md),
``--plot`` draws the sections' curves. ``manage.py replay`` re-runs queries under a candidate
policy. This app sits above every other one (evaluation → review → proposals → memory): it
writes only through the public actions.
"""
