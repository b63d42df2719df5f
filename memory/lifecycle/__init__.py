"""The lifecycle projection: derived, rebuildable metadata per entry head (DESIGN.md §5).

:func:`derive` is the single derivation, a function of authoritative records only (heads,
versions, evidence snapshots, relations, revision changes). The revision writer calls
:func:`refresh` for the entries a revision touched, inside the same transaction; the rebuild
command calls the same code over every entry, so incremental and rebuilt rows agree by
construction — and ``rebuild_projection --check`` proves it on real data.

Reads are batched and plain: a batch is loaded in a fixed number of queries of plain columns
(tuples, no model instances), derived in Python, compared as tuples, and only the rows that
differ become model instances, written with one upsert. The rebuild walks a Memory in keyset
spans of its heads (:class:`Span`) and reads each table by range on its own entry key, which
PostgreSQL plans as short index range scans; the writer's refresh reads its few entries with
``IN`` lists. A write-mode rebuild ends with ``ANALYZE`` (``memory.db_stats``).

One module per step: :mod:`.rules` (the pure formulas and the row's columns), :mod:`.load`
(reading a batch), :mod:`.derive` (deriving and refreshing rows), :mod:`.rebuild` (rebuilding
or checking one batch). Walking a whole Memory under its lock, with its vectors and its audit
event, is ``memory.maintenance.rebuild_projection``: this package locks nothing.
"""

from .derive import VALIDITY_RELATIONS, derive, diff, neighbours, refresh
from .load import Span, Written, written_head
from .rebuild import RowDiff, rebuild_batch, replayed_heads
from .rules import COMPARED_FIELDS, RULE_VERSION, UPDATE_FIELDS, importance_seed, is_direct

__all__ = [
    "COMPARED_FIELDS",
    "RULE_VERSION",
    "UPDATE_FIELDS",
    "VALIDITY_RELATIONS",
    "RowDiff",
    "Span",
    "Written",
    "derive",
    "diff",
    "importance_seed",
    "is_direct",
    "neighbours",
    "rebuild_batch",
    "refresh",
    "replayed_heads",
    "written_head",
]
