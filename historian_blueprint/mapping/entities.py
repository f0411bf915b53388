"""Entities of the map: mentions merged by name (honorifics and possessives dropped, a surname joined to the one
full name that ends with it), typed by the majority of their mentions, every mention an exact span."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from historian_blueprint.mapping.nlp import Mention, name_key
from historian_blueprint.text.words import edit_distance
from historian_blueprint.verify.rules.lexicon import english


@dataclass
class Entity:
    id: str
    name: str
    type: str
    aliases: list[str]
    mentions: list[Mention]
    keys: set[str] = field(default_factory=set)

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(m.source_id for m in self.mentions))


def merge(mentions: list[Mention]) -> list[Entity]:
    """One entity per name key; a one-word key (a surname) joins the single longer key that ends with it."""
    by_key: dict[str, list[Mention]] = defaultdict(list)
    for m in mentions:
        key = name_key(m.text)
        if key:
            by_key[key].append(m)
    parent = {k: k for k in by_key}

    def root(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

    kinds = {k: Counter(m.label for m in ms).most_common(1)[0][0] for k, ms in by_key.items()}
    ranked = sorted(by_key, key=lambda k: (-len(by_key[k]), k))  # the commonest spelling is the one kept
    for n, a in enumerate(ranked):
        for b in ranked[n + 1:]:
            if kinds[a] == kinds[b] != "date" and root(a) != root(b) and variant(b, a):
                parent[root(b)] = root(a)  # "rolanrt n mcneely" is "robert n mcneely" misread
    for key in by_key:
        longer = {root(k) for k in by_key if k != key and k.endswith(" " + key)}
        if len(longer) == 1 and by_key[key][0].label != "date" and root(key) not in longer:
            parent[root(key)] = longer.pop()

    groups: dict[str, list[str]] = defaultdict(list)
    for key in by_key:
        groups[root(key)].append(key)
    out = []
    for n, (main, keys) in enumerate(sorted(groups.items(),
                                            key=lambda kv: (-sum(len(by_key[k]) for k in kv[1]), kv[0]))):
        found = [m for k in keys for m in by_key[k]]
        names = Counter(m.text for m in found)
        name = max(names, key=lambda t: (len(name_key(t)) == len(main), names[t], len(t)))
        kind = Counter(m.label for m in found).most_common(1)[0][0]
        aliases = sorted({m.text for m in found} - {name})
        out.append(Entity(f"e{n + 1}", name, kind, aliases,
                          sorted(found, key=lambda m: (m.source_id, m.start)), set(keys)))
    return out


def variant(a: str, b: str) -> bool:
    """Two name keys that spell one name, one of them misread or misspelled (the same number of words, one a word
    for word near-spelling of the other): the family name within one letter (two, from seven letters), the other
    words the same, an initial of each other, or within half their letters of each other when the family name is the
    same ("rolanrt n mcneely" / "robert n mcneely", "alarie j pcnwardcn" / "alaric j penwarden"); a name of one word
    from six letters within one letter; never when every word that differs is a real word or name on both sides (the
    WordNet lexicon: "prussia" / "russia", "mary smith" / "mark smith", "edward rose" / "edward ross"). "john smith"
    and "jane smith" are two people."""
    x, y = a.split(), b.split()
    if len(x) != len(y) or a == b:
        return False
    known = english()
    if all(p in known for p, q in zip(x, y) if p != q) and all(q in known for p, q in zip(x, y) if p != q):
        return False  # two real words or names apart ("prussia" / "russia", "mary" / "mark"): no misreading
    if len(x) == 1:
        return min(len(a), len(b)) >= 6 and edit_distance(a, b) <= 1
    *first_x, last_x = x
    *first_y, last_y = y
    shorter = min(len(last_x), len(last_y))
    if edit_distance(last_x, last_y) > (2 if shorter >= 7 else 1 if shorter >= 4 else 0):
        return False
    for p, q in zip(first_x, first_y):
        p, q = p.rstrip("."), q.rstrip(".")
        if p == q or (min(len(p), len(q)) == 1 and p[0] == q[0]):
            continue
        if p[0] != q[0] or edit_distance(p, q) > max(1, min(len(p), len(q)) // 2) or (
                last_x != last_y and edit_distance(p, q) > 1):
            return False
    return True


SHARED_PROPER = 2  # proper nouns two sources must share to be about the same events when no entity links them


def shared(entities: list[Entity], proper: dict[str, frozenset[str]] | None = None) -> dict[str, set[str]]:
    """For each source, the sources it shares a named entity with (dates and figures do not count), or at
    least SHARED_PROPER proper nouns (names the entity recognizer missed: "Asch Building")."""
    out: dict[str, set[str]] = defaultdict(set)
    ids = sorted(proper or {})
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            if len(proper[a] & proper[b]) >= SHARED_PROPER:  # type: ignore[index]
                out[a].add(b)
                out[b].add(a)
    for e in entities:
        if e.type == "date":
            continue
        sources = e.sources
        for s in sources:
            out[s] |= set(sources) - {s}
    return out
