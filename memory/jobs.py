"""The names of the maintenance jobs (API.md), in one place: the policy's ``jobs`` section is
validated against them (``memory.actions.memories``) and ``memory.maintenance`` runs the ones an
app registered. A leaf module, so both can import it."""

JOB_NAMES = (
    "l1",
    "rebuild",
    "near_duplicates",
    "contradictions",
    "promotion",
    "capacity",
    "injection_scan",
    "revalidation",
)
