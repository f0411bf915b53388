"""The ask graph's roles: one interface per role (``base.py``), the offline engine (``offline.py`` over the
extractive craft: ``extractive.py`` reads sentences, ``choosing.py`` picks, ``sides.py`` per side, ``written.py``
words) and the LLM engine (``llm.py``, ``replies.py``,
``anchoring.py``), and which one a run uses (``engines.py``)."""
