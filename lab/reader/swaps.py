"""Swapped details: hard negatives made from the entailed pairs of the training sources by one phenomenon of
language, "a name or a figure of the passage put in another's place".

A claim the passage carries ("Fox 2000 Pictures released the film Soul Food") has a name or a figure that the
passage also holds; the passage holds another name or figure as well ("Kenneth Edmonds"). Put the other in the first's
place ("Kenneth Edmonds released the film Soul Food") and every detail of the new claim is still in the passage, so
the verifier's detail checks (every name and figure held) cannot catch it: only reading can. That is what a
hallucinated answer usually looks like (a person, place or number from the same passage, wrongly placed).

- **names** (label ``neither``): a run of capitalized words of the claim, also in the passage, replaced by another
  run of the passage that shares no word with it, is no part of it, and is not in the claim. "Neither", not
  "contradicts": the passage may not rule the new claim out (two people can both have produced a film).
- **figures** (label ``contradicts``): a number of the claim, also in the passage, replaced by another number of the
  passage that does not round to it (differs by more than a tenth, and a year by two or more), as the period pairs'
  changed figures do: the passage gives the figure, and it is another.

Made from each side's own pairs (train from train, held from held), one swap of each kind at most per pair, chosen
by a hash of the pair's id (deterministic), and capped per kind (``CAPS``). ``build_data.py`` calls ``swapped``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

FROM = ("fever_nli", "scifact_nli", "period_1916", "snli", "mnli_sample", "citation_integrity")
CAPS = {"names": 6000, "figures": 3000}
_RUN = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'’.-]*)*")
_NUMBER = re.compile(r"(?<![\w.,/-])\d[\d,]*(?:\.\d+)?(?![\w/-])")  # "HIV-1", "1/2000": names, not figures
_WORD = re.compile(r"(?:of|de|van|[A-Z][a-z][\w'’.-]*|[A-Z]\.?)")  # a name's word is written "Name", not "RESULTS"
_BEFORE = re.compile(r"\b([A-Z][a-z]*)\s$")
_AFTER = re.compile(r"^\s[A-Z]")
_MONTHS = frozenset("January February March April May June July August September October November December Jan Feb "
                    "Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split())
_DEMONYM = re.compile(r"(?:an|ish|ese|ch|ic)$")
_FUNCTION = frozenset("The A An In On At By For Of To And But Or If It He She They We I His Her Their This That These "
                      "Those There When While After Before As With From Some One Two Mr Mrs Dr St "
                      "LRB RRB LSB RSB".split())


def _key(*parts: str) -> int:
    return int(hashlib.sha256(":".join(parts).encode("utf-8")).hexdigest()[:12], 16)


def names(text: str) -> list[tuple[int, int, str]]:
    """The runs of capitalized words of a text (start, end, run); a run's first word set aside when it is a function
    word ("The Times" -> "Times") and runs of function words alone dropped."""
    out = []
    for m in _RUN.finditer(text):
        run, start = m.group().rstrip("."), m.start()
        first, _, rest = run.partition(" ")
        if first in _FUNCTION:  # "The Times" -> "Times"; "In" alone -> nothing
            start, run = start + len(first) + 1, rest
        if len(run) < 3 or run.split()[0] in _FUNCTION or not all(_WORD.fullmatch(w) for w in run.split()):
            continue
        if " " not in run and _DEMONYM.search(run):  # "American", "French": a word of a people, not a name
            continue
        out.append((start, start + len(run), run))
    return out


def _in_name(text: str, start: int, end: int) -> bool:
    """A number inside a name ("Fox 2000 Pictures", "2 Hearts", "Apollo 11"), a date's month aside ("May 1923")."""
    before = _BEFORE.search(text[max(0, start - 20): start])
    return bool(before and before.group(1) not in _MONTHS or _AFTER.match(text[end: end + 3]))


def _initials(run: str) -> str:
    return "".join(w[0] for w in run.split() if w[0].isupper())


def _value(number: str) -> float | None:
    try:
        return float(number.replace(",", ""))
    except ValueError:
        return None


def _year(v: float) -> bool:
    return 1000 <= v <= 2100 and v == int(v)


def _far(a: float, b: float) -> bool:
    if _year(a) != _year(b):  # a year for a day of the month is no changed figure, it is nonsense
        return False
    if _year(a):
        return abs(a - b) >= 2
    return abs(a - b) > 0.1 * max(abs(a), abs(b))


def swap_name(pair: dict) -> str | None:
    claim, passage = pair["b"], pair["a"]
    mine = names(claim)
    words_of_claim = {w for _, _, run in mine for w in run.split()}
    shared = [(s, e, run) for s, e, run in mine if run in passage]
    others = sorted({run for _, _, run in names(passage)
                     if run not in claim and not words_of_claim & set(run.split())})
    if not shared or not others:
        return None
    s, e, run = shared[_key(pair["id"], "name") % len(shared)]
    other = others[_key(pair["id"], "other") % len(others)]
    if other in run or run in other or _initials(other) == run.replace(".", "") or _initials(run) == other:
        return None  # "NBA" is "National Basketball Association"
    swapped = claim[:s] + other + claim[e:]
    return swapped if swapped != claim and swapped not in passage else None


def swap_figure(pair: dict) -> str | None:
    claim, passage = pair["b"], pair["a"]
    shared = [m for m in _NUMBER.finditer(claim) if m.group() in _NUMBER.findall(passage) and _value(m.group())
              and not _in_name(claim, m.start(), m.end())]
    if not shared:
        return None
    m = shared[_key(pair["id"], "figure") % len(shared)]
    mine = _value(m.group())
    others = sorted({n for n in _NUMBER.findall(passage) if n not in _NUMBER.findall(claim)
                     and (v := _value(n)) is not None and mine is not None and _far(v, mine)})
    if not others:
        return None
    other = others[_key(pair["id"], "other figure") % len(others)]
    return claim[: m.start()] + other + claim[m.end():]


def swapped(pairs: Iterable[dict], side: str) -> list[dict]:
    """The swapped-detail negatives of one side's pairs (entailed nli pairs of ``FROM``), capped per kind."""
    made: dict[str, list[dict]] = {"names": [], "figures": []}
    for pair in pairs:
        if pair["task"] != "nli" or pair["label"] != "entails" or pair.get("source") not in FROM:
            continue
        for kind, make, label in (("names", swap_name, "neither"), ("figures", swap_figure, "contradicts")):
            claim = make(pair)
            if claim:
                made[kind].append({"id": f"swap_{kind}-{pair['id']}", "task": "nli", "a": pair["a"], "b": claim,
                                   "label": label, "orig": f"swapped {kind[:-1]} of {pair['id']}",
                                   "split": side, "group": pair.get("group") or pair["id"],
                                   "source": f"swap_{kind}"})
    out = []
    for kind, records in made.items():
        cap = CAPS[kind] if side == "train" else CAPS[kind] // 19
        out += sorted(records, key=lambda r: _key(r["id"], side))[:cap]
    return out
