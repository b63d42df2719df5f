"""Hook point through which the review app reacts to a new proposal inside its transaction.

``proposals`` does not import ``review``; ``review`` registers here in ``AppConfig.ready()``
(the reviewer notification, queued and sent after commit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Submitted = Callable[..., None]
_submitted: list[Submitted] = []


def on_submitted(fn: Submitted) -> Submitted:
    if fn not in _submitted:
        _submitted.append(fn)
    return fn


def submitted(proposal: Any, *, actor: Any) -> None:
    for fn in _submitted:
        fn(proposal, actor=actor)
