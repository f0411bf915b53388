"""The knowledge map of a topic (docs/design.md, "The knowledge map"): a second LangGraph graph beside ask.

scout (facet queries, diversified) → mapper (entities, cited relations, statements compared across sources)
→ adversary (counter-queries against weak claims, back to the scout while they find new sources, at most
``HISTORIAN_MAP_MAX_ROUNDS``) → judge (credibility for archives) → synthesis (consensus and battleground).
Every span in the output is ``{source_id, start, end, text}`` with ``text == content[start:end]``.
"""
