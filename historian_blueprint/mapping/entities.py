"""Entities of the map: mentions merged by name (honorifics and possessives dropped, a surname joined to the one
full name that ends with it), typed by the majority of their mentions, every mention an exact span."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from historian_blueprint.mapping.nlp import Mention, name_key


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
    for key in by_key:
        longer = [k for k in by_key if k != key and k.endswith(" " + key)]
        if len(longer) == 1 and by_key[key][0].label != "date":
            parent[key] = longer[0]

    def root(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

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
