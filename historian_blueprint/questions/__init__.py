"""What a question asks, read once where a run starts (``reading.Question``): its words, the count and type asked
for, its constraints, its shape (a comparison's sides: ``shapes``; a list's items: ``lists``) and a follow-up's
carried subject. Every role of the ask graph reads that value; nothing below re-derives it from the text.

Layer: above ``verify`` (whose question checks it reads: ``verify/asked.py``, ``verify/question.py``), below
``roles``.
"""
