"""Which of a map's sources are about the topic's event, and why each other one is set aside.

A map compares sources about one event; a source about another event on the same ground (the same pit, the same
sound, the same town) must not join its conflicts and consensus. A read source is kept when it is linked to the
topic's best source through shared named entities, was written when the event can have been reported (not before
its year, or its month when the topic names one; later only when it does not report events of its own day). Every
source left out is listed with why, and the asker may include it (``include``: the map runs again with it). (Keeping
to sources that name the topic's most specific name, "Corisande" in "the wreck of the steamer Corisande", was tried
and not kept: it set aside memoirs about the event that call it otherwise, on the development corpus.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

from historian_blueprint.mapping.topic import MONTH_NAMES, YEAR, Topic

_WEEKDAY = re.compile(r"\b(?:on|last)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
                      r"(?P<after>.{0,24})", re.I)
_NOW = re.compile(r"\b(?:this (?:morning|afternoon|evening|forenoon)|at this hour|yesterday|to-?night|"
                  r"last (?:night|evening))\b", re.I)


def keep_to_event(topic: Topic, sources: dict[str, dict[str, Any]], links: dict[str, set[str]],
                  get_document: Callable[[str], Any],
                  include: Collection[str] = ()) -> tuple[list[str], dict[str, str]]:
    """The read sources about the topic's event, best-ranked first, and the others with why they were left out
    (see the module's docstring); a source in ``include`` is kept whatever the reason."""
    linked = _linked(sources, links)
    why: dict[str, str] = {sid: "it shares no named person, place or body with the topic's other sources"
                           for sid in sources if sid not in linked}
    year = event_year(topic, [get_document(sid) for sid in linked])
    month = topic.month if year == topic.year else None
    for sid in linked:
        late = not_about_event(get_document(sid), year, topic.last, month)
        if late:
            why[sid] = late
    for sid in include:
        why.pop(sid, None)
    order = sorted(sources, key=lambda s: sources[s]["rank"])
    return [sid for sid in order if sid not in why], why


def event_year(topic: Topic, documents: list[Any]) -> int | None:
    """The year of the topic's event: the one the topic names, else a year named (or dated) by at least half
    of its sources; None when there is no such year (a topic that is not one event)."""
    if topic.year is not None:
        return topic.year
    docs = [d for d in documents if d is not None]
    counts: dict[int, int] = {}
    for d in docs:
        for y in {int(y) for y in YEAR.findall(d.text)} | ({d.year} if d.year else set()):
            counts[y] = counts.get(y, 0) + 1
    best = max(counts.items(), key=lambda kv: (kv[1], -kv[0]), default=None)
    return best[0] if best and len(docs) >= 2 and best[1] * 2 >= len(docs) else None


def about_event(doc: Any, year: int | None, last: int | None = None, month: int | None = None) -> bool:
    """A source can be about the event of ``year`` (``not_about_event`` says why not)."""
    return not not_about_event(doc, year, last, month)


def not_about_event(doc: Any, year: int | None, last: int | None = None, month: int | None = None) -> str:
    """Why a source cannot be about the event of ``year`` (to ``last``, a span the topic names), or "": written
    before it; or later than the year after without reporting only the past (a report of a later event on the
    same ground is another event, a memoir looking back is not: "this morning", "on Monday" not followed by a
    date are its own day). With the event's ``month`` (the topic names it) and the document's date: written
    before that month, or after it reporting events of its own day (another wreck in the same waters a month later
    is another event)."""
    if doc is None or year is None or not doc.year:
        return ""
    if doc.year < year:
        return f"it was written in {doc.year}, before the event ({year})"
    written = _month_of(getattr(doc, "date", None))
    if month is not None and written is not None and written[0] == doc.year:
        when = f"{MONTH_NAMES[written[1] - 1].capitalize()} {written[0]}"
        event = f"{MONTH_NAMES[month - 1].capitalize()} {year}"
        if written < (year, month):
            return f"it was written in {when}, before the event ({event})"
        if written == (year, month) or not _own_day(doc.text):
            return ""
        return f"it was written in {when} and reports events of its own day, after the event ({event})"
    if doc.year <= (last or year) + 1 or not _own_day(doc.text):
        return ""
    return f"it was written in {doc.year} and reports events of its own day, long after the event ({year})"


def _linked(sources: dict[str, dict[str, Any]], links: dict[str, set[str]]) -> list[str]:
    """The best-ranked source and every source linked to it through shared named entities."""
    if not sources:
        return []
    first = min(sources, key=lambda s: sources[s]["rank"])
    seen, todo = {first}, [first]
    while todo:
        for n in links.get(todo.pop(), set()):
            if n not in seen and n in sources:
                seen.add(n)
                todo.append(n)
    return sorted(seen, key=lambda s: sources[s]["rank"])


def _own_day(text: str) -> bool:
    """The text reports events of its own day: "this morning", "yesterday", "on Monday" without a date after it."""
    return bool(_NOW.search(text)) or any(not re.search(r"\d|\bthe\s+\w+(?:th|st|nd|rd)\b", m.group("after"), re.I)
                                          for m in _WEEKDAY.finditer(text))


def _month_of(date: Any) -> tuple[int, int] | None:
    """(year, month) of a document's date as the host writes it ("1908-11-14", "1908-11"), when it says."""
    found = re.match(r"\s*(\d{4})-(\d{1,2})\b", str(date or ""))
    return (int(found.group(1)), int(found.group(2))) if found and 1 <= int(found.group(2)) <= 12 else None
