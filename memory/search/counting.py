"""Questions that count across occasions, and a pooled order spread over sessions for them.

"How many projects have I led or am currently leading?" is answered by every turn that names
one of them, and a conversation names them on different days: in different sessions. The
cross-encoder scores each turn alone, so the turns of one session that say the most about
projects can fill the first places while another session's mention waits further down. When the
query asks *how many*, the reranker orders the pool greedily and a hit loses
``cross_encoder.SESSION_SHARE`` logits for each hit of its session already placed above it; the
pool's members stay the same (DESIGN §6), and a hit without a session is never moved down for
it. Any other question keeps the model's order. Measured on LongMemEval's counting questions
(docs/recall-evaluation.md, "Counting questions").

Only English "how many" is read. "How much" and "in total" were measured too: no question of
either data set changed.
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
    left = list(range(len(scores)))
    placed: Counter[str] = Counter()
    order: list[int] = []
    while left:
        best = max(left, key=lambda i: (scores[i] - share * placed[sessions[i] or ""], -i))
        left.remove(best)
        order.append(best)
        if sessions[best]:
            placed[sessions[best] or ""] += 1
    return order
