"""Hook points through which the review app reacts to a new proposal, a comment and an
amendment inside their transaction.

``proposals`` does not import ``review``; ``review`` registers here in ``AppConfig.ready()``
(the notifications: reviewers of a new or amended proposal, the people a comment @mentions;
queued and sent after commit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lib.identity import Actor

Submitted = Callable[..., None]
_submitted: list[Submitted] = []


def on_submitted(fn: Submitted) -> Submitted:
    if fn not in _submitted:
        _submitted.append(fn)
    return fn


def submitted(proposal: Any, *, actor: Actor) -> None:
    for fn in _submitted:
        fn(proposal, actor=actor)


Commented = Callable[..., None]
_commented: list[Commented] = []
Amended = Callable[..., None]
_amended: list[Amended] = []


def on_commented(fn: Commented) -> Commented:
    if fn not in _commented:
        _commented.append(fn)
    return fn


def commented(proposal: Any, comment: Any, *, actor: Actor) -> None:
    for fn in _commented:
        fn(proposal, comment, actor=actor)


def on_amended(fn: Amended) -> Amended:
    if fn not in _amended:
        _amended.append(fn)
    return fn


def amended(proposal: Any, *, actor: Actor) -> None:
    for fn in _amended:
        fn(proposal, actor=actor)
