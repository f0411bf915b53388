"""The map's output contract (``historian map --output json``, ``POST /api/map``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Span(BaseModel):
    source_id: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str


class Entity(BaseModel):
    id: str
    name: str
    type: str  # person, place, organisation, event, date
    aliases: list[str] = []
    mentions: list[Span] = []
    sources: list[str] = []


class Relation(BaseModel):
    subject: str
    relation: str
    object: str
    citation: Span
    credibility: float
    subject_id: str | None = None  # the entity ids, when the subject or object is one
    object_id: str | None = None


class Side(BaseModel):
    claim: str
    citations: list[Span]
    credibility: float


class Conflict(BaseModel):
    id: str
    point: str
    kind: str  # number, date, assertion (an assertion and its denial), attribution
    sides: list[Side] = Field(min_length=2)
    verdict: str  # the side credibility favours, or "unresolved"
    confidence: float
    reason: str  # the likely reason for the disagreement
    found_by: str  # the check that found it


class Consensus(BaseModel):
    claim: str
    citations: list[Span]       # one statement per source
    sources: list[str]
    independent: int = 0        # how many independent voices: one author, or one wire report printed twice, is one
    wire: list[list[str]] = []  # sources that print one wire report (counted once)


class CounterQuery(BaseModel):
    query: str
    round: int
    aimed_at: str
    new_sources: list[str] = []


class Factor(BaseModel):
    value: float
    weight: float
    note: str = ""


class Source(BaseModel):
    source_id: str
    title: str
    author: str | None = None
    year: int | None = None
    doc_type: str | None = None
    credibility: float
    factors: dict[str, Factor]
    found_by: list[str] = []


class MapOutput(BaseModel):
    topic: str
    entities: list[Entity]
    relations: list[Relation]
    conflicts: list[Conflict]
    consensus: list[Consensus]
    counter_queries: list[CounterQuery]
    sources: list[Source]
    report: str
    metadata: dict[str, Any]
