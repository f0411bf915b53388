"""The ask wing: a question through the ask graph (``graph.py``: its nodes in ``nodes.py``, its state in
``state.py``, timed by ``progress.py``) to a cited, verified, stored run (``run.py``). Its roles, one interface and
two engines, are ``ask/roles/`` (a layer below). Nothing here is imported when an app registers Historian: the graph
loads with the first question."""
