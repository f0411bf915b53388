"""The LLM engine's mapper role: entities and (subject, relation, object) triplets read by a model with
structured output, each re-anchored in the source. A name or a quote that is not in the passage (exactly, or
with other whitespace) is dropped and counted; nothing invented reaches the map. The statements the map
compares still come from the offline reading (their spans are the source's by construction).

A reply that is not JSON, or a model that fails, raises: the mapper node records the failure and uses the
offline reading for that source (fails safe).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, Field

from historian_blueprint.mapping.nlp import ENTITY_TYPES, Mention, Reading, Triplet, merge_spans, read_passages
from historian_blueprint.llm.engine import LLMEngine

TYPES = frozenset(ENTITY_TYPES.values())
ALIASES = {"location": "place", "gpe": "place", "organization": "organisation", "org": "organisation",
           "people": "person"}


class MappedEntity(BaseModel):
    name: str = Field(max_length=200)
    type: str = Field(max_length=40)


class MappedRelation(BaseModel):
    subject: str = Field(max_length=200)
    relation: str = Field(max_length=80)
    object: str = Field(max_length=200)
    quote: str = Field(max_length=1000)


class MapperReply(BaseModel):
    entities: list[MappedEntity] = Field(default_factory=list, max_length=60)
    relations: list[MappedRelation] = Field(default_factory=list, max_length=40)


def exact(text: str, quote: str, start: int, end: int) -> tuple[int, int] | None:
    """Where the quote stands in text[start:end]: exactly, or with other whitespace; None otherwise."""
    quote = quote.strip().strip('"“”')
    if not quote:
        return None
    at = text.find(quote, start, end)
    if at >= 0:
        return at, at + len(quote)
    match = re.compile(r"\s+".join(re.escape(w) for w in quote.split())).search(text, start, end)
    return (match.start(), match.end()) if match else None


def llm_mapper(llm: LLMEngine) -> Callable[[str, str, list[tuple[int, int]]], Reading]:
    """A mapper for the map graph that asks the ``mapper`` role about each passage of a source."""

    def read(source_id: str, content: str, passages: list[tuple[int, int]]) -> Reading:
        offline = read_passages(source_id, content, passages)
        mentions: list[Mention] = []
        triplets: list[Triplet] = []
        dropped = 0
        for start, end in merge_spans(passages):
            reply = llm.ask("mapper", f"Passage from {source_id} (characters {start}-{end}):\n{content[start:end]}",
                            MapperReply)
            for e in reply.entities:
                kind = ALIASES.get(e.type.strip().lower(), e.type.strip().lower())
                span = exact(content, e.name, start, end)
                if span is None or kind not in TYPES:
                    dropped += 1
                    continue
                mentions.append(Mention(source_id, span[0], span[1], content[span[0]:span[1]], kind))
            for r in reply.relations:
                span = exact(content, r.quote, start, end)
                if span is None:
                    dropped += 1
                    continue
                subject = exact(content, r.subject, *span) or span
                obj = exact(content, r.object, *span) or span
                triplets.append(Triplet(r.subject, r.relation, r.object, source_id, span[0], span[1], subject, obj))
        return Reading(mentions, triplets, offline.statements, offline.proper, dropped)

    return read
