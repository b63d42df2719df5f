"""Questions that count across occasions, and a pooled order spread over sessions for them.

"How many projects have I led or am currently leading?" is answered by every turn that names
one of them, and a conversation names them on different days: in different sessions. The
cross-encoder scores each turn alone, so the turns of one session that say the most about
projects can fill the first places while another session's mention waits further down. When the
query asks *how many*, the reranker orders the pool greedily and a hit loses
``cross_encoder.SESSION_SHARE`` logits for each hit of its session already placed above it; the
pool's members stay the same (DESIGN §6), and a hit without a session is never moved down for
it (and, never losing a share, can rise above the weaker turns of a crowded session). Any other
question keeps the model's order. The period boost (``memory.search.periods``) is added before
the spread, so an in-period hit's boost counts against its session's share. Measured on
LongMemEval's counting questions (docs/recall-evaluation.md, "Counting questions").

Only English "how many" is read, anywhere in the query and in any case. It also fires where
nothing is counted across occasions — "how many days passed between …", "no matter how many
times I ask, …", a quoted question — and misses "the number of", "count the …", "how often",
"in total" and every other language. "How much" and "in total" were measured as cues and
changed no question of either data set.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

_COUNTING = re.compile(r"\bhow\s+many\b", re.IGNORECASE)


def asks_to_count(query: str) -> bool:
    """Whether ``query`` asks how many (of anything), anywhere in it."""
    return bool(_COUNTING.search(query))


def spread_by_session(
    scores: Sequence[float], sessions: Sequence[str | None], share: float
) -> list[int]:
    """The indexes of ``scores`` best first, each next one chosen by its score less ``share``
    for every hit of its session already chosen (a session of None or "" counts for nothing);
    ties keep the lower index (the pool's order)."""
    if len(scores) != len(sessions):
        raise ValueError("one session per score")
    left = list(range(len(scores)))
    placed: Counter[str] = Counter()

    def spread(i: int) -> tuple[float, int]:
        session = sessions[i]
        return (scores[i] - (share * placed[session] if session else 0.0), -i)

    order: list[int] = []
    while left:
        best = max(left, key=spread)
        left.remove(best)
        order.append(best)
        session = sessions[best]
        if session:
            placed[session] += 1
    return order
