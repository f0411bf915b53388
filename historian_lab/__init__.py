"""Historian's lab: what measures and fits the product, kept out of its import path.

- ``bench``: benchmarks that print figures (retrieval, indexing, latency, load, faults, the graph's answers, maps),
  and the OpenAI-compatible test server the LLM tests talk to;
- ``evaluation``: the harness that verifies labeled claims by fit and check halves;
- ``fitting``: the verifier's support combination and the reader's cuts, fitted on the fit halves;
- ``cli`` (``bench ...``) and ``cli_eval`` (``eval``, ``train-checker``): their commands, module-level click
  commands added to ``historian`` as a plugin by ``cli.register``.

The lab imports the product (``historian_blueprint``); the product never imports the lab (tests/test_architecture.py).
The reader model's training lives in ``lab/reader/`` (scripts, not a package).
"""
