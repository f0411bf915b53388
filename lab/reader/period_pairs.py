"""Period pairs for the reader: the same wire story printed in several papers of January 1916, reworded and cut, and
hard negatives made from them by the phenomena the verifier's rules name.

    python lab/reader/period_pairs.py [--scale ../shared/data/scale/chronam_1916_01_all.jsonl.gz]

Writes ``lab/reader/sources/period_1916.jsonl.gz`` and its entry in ``sources/PROVENANCE.json``; ``build_data.py``
then splits, checks and counts it with the other sources. Deterministic for the same input.

- **Pages**: every front page of the scale corpus except those of 1-3 January 1916 (the sample corpus's days, which the
  project's evaluation and sealed sets quote), and except any sentence sharing an 8-word window with any document of
  the sample corpus (a wire story of those days reprinted later).
- **Sentences**: cut by the product's splitter; 80-350 characters, 10 words or more, at least 80% of the words known
  to WordNet or its regular inflections (OCR noise out).
- **Paraphrases** (``entails``): two sentences of papers with different LCCNs that share two 6-word windows and whose
  word sets overlap by a Jaccard of 0.35-0.85 (reworded, not reprinted verbatim), the shorter's figures all in the
  longer, and at most 3 content words of the shorter missing from the longer: the longer carries the shorter.
- **Partial** (``neither``): the same pair the other way round when the longer adds 4 content words or more.
- **Hard negatives** (``contradicts``), made from a paraphrase's claim (the other paper's wording stays the premise):
  a figure that does not round to the source's (years moved 2-9, counts by a third or more), a negation added after
  the first auxiliary or dropped, a word replaced by its WordNet antonym.
- **Elsewhere** (``neither``): a sentence of the same page as the premise that the premise does not carry.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from historian_blueprint.text.spans import sentence_spans  # noqa: E402 - the lab imports the product
from historian_blueprint.verify.rules.lexical import _distance_at_most_two  # noqa: E402 - after the path above

SCALE = ROOT.parent / "shared" / "data" / "scale" / "chronam_1916_01_all.jsonl.gz"
SAMPLE = ROOT / "historian_blueprint" / "demo" / "corpus"
LEXICON = ROOT / "historian_blueprint" / "verify" / "lexicon"
OUT = HERE / "sources" / "period_1916.jsonl.gz"
SAMPLE_DAYS = ("1916-01-01", "1916-01-02", "1916-01-03")
WORD = re.compile(r"[A-Za-z]+")
NUMBER = re.compile(r"\b\d[\d,]*\b")
STOP = set("""a an the of to in on at by for with from and or but as is was were be been are it its this that these
those he she they them his her their we our you your i not no so if then than there here which who whom what when
where why how all any some such said says would will shall should could can may might must has have had do does did
upon into out up down over about after before also only very more most one two""".split())
AUXILIARIES = ("was", "were", "is", "are", "will", "would", "has", "have", "had", "can", "could", "did", "should",
               "does", "do", "shall", "must", "may")
NEGATIONS = re.compile(r"\s+(not|never)\b", re.I)
ADJECTIVE_ENDINGS = ("able", "ible", "ful", "ous", "al", "ive", "ant", "ent", "ic", "ary", "ory", "ly", "ed")
CAPS = {"entails": 4000, "partial": 1500, "number": 1200, "negation": 1200, "antonym": 1000, "elsewhere": 1500}


def norm_words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def windows(ws: list[str], width: int) -> set[str]:
    return {" ".join(ws[i:i + width]) for i in range(len(ws) - width + 1)}


def content(ws: list[str]) -> set[str]:
    return {w for w in ws if w not in STOP and len(w) > 2}


def excluded_windows() -> set[str]:
    """Every 8-word window of the sample corpus (whose documents the evaluation and sealed sets quote)."""
    seen: set[str] = set()
    for path in sorted(SAMPLE.glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                seen |= windows(norm_words(json.loads(line).get("content") or ""), 8)
    return seen


def known_words() -> set[str]:
    """WordNet's words, their irregular forms, and the function words WordNet does not list."""
    known = set(json.loads((LEXICON / "words.json").read_text(encoding="utf-8"))) | STOP
    return known | set(json.loads((LEXICON / "exceptions.json").read_text(encoding="utf-8"))["exceptions"])


def is_word(w: str, known: set[str]) -> bool:
    """A word a reader knows, or one of its regular inflections ("papers", "sailed", "sinking", "quickly")."""
    return w in known or any(w.endswith(x) and w[: -len(x)] in known for x in ("s", "es", "ed", "d", "ing", "ly"))


def sentences(scale: Path, known: set[str], banned: set[str]) -> list[dict]:
    out = []
    with gzip.open(scale, "rt", encoding="utf-8") as fh:
        for line in fh:
            page = json.loads(line)
            if str(page.get("date", ""))[:10] in SAMPLE_DAYS:
                continue
            text = page.get("content") or ""
            for start, end in sentence_spans(text):
                s = " ".join(text[start:end].split())
                ws = norm_words(s)
                if not (80 <= len(s) <= 350 and len(ws) >= 10):
                    continue
                if sum(is_word(w, known) for w in ws) < 0.8 * len(ws) or windows(ws, 8) & banned:
                    continue
                out.append({"text": s, "page": page["_id"], "lccn": page.get("lccn") or page["_id"], "words": ws})
    return out


def paraphrases(sents: list[dict]) -> list[tuple[int, int]]:
    """Pairs (longer, shorter) of the same story in two papers, reworded (see the module's notes)."""
    index: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(sents):
        for w in windows(s["words"], 6):
            index[w].append(i)
    shared: Counter = Counter()
    for ids in index.values():
        if 2 <= len(ids) <= 30:  # more: boilerplate (a masthead, an advertisement)
            for a_pos, a in enumerate(ids):
                for b in ids[a_pos + 1:]:
                    if sents[a]["lccn"] != sents[b]["lccn"]:
                        shared[(a, b)] += 1
    pairs = []
    for (a, b), n in sorted(shared.items()):
        if n < 2:
            continue
        wa, wb = set(sents[a]["words"]), set(sents[b]["words"])
        jaccard = len(wa & wb) / len(wa | wb)
        if not 0.35 <= jaccard <= 0.85:
            continue
        longer, shorter = (a, b) if len(sents[a]["text"]) >= len(sents[b]["text"]) else (b, a)
        if not set(NUMBER.findall(sents[shorter]["text"])) <= set(NUMBER.findall(sents[longer]["text"])):
            continue
        pairs.append((longer, shorter))
    return pairs


def near(word: str, others: set[str]) -> bool:
    """An OCR variant of one of ``others``: at most two letters apart ("fronm" of "from", "lie" of "he")."""
    return any(_distance_at_most_two(word, other) for other in others)


def new_words(longer: list[str], shorter: list[str], known: set[str]) -> set[str]:
    """The longer sentence's content words that the shorter lacks: real words, not OCR variants of the shorter's."""
    theirs = set(shorter)
    return {w for w in content(longer) - theirs if is_word(w, known) and len(w) > 3 and not near(w, theirs)}


def changed_number(claim: str, premise: str, rng: random.Random) -> str | None:
    """The claim with one of its figures (also in the premise) moved so that it does not round to the source's."""
    found = [m for m in NUMBER.finditer(claim) if m.group() in premise]
    if not found:
        return None
    m = rng.choice(found)
    value = int(m.group().replace(",", ""))
    if 1800 <= value <= 1950:
        new = value + rng.choice([-1, 1]) * rng.randint(2, 9)
    elif value < 10:
        new = value + rng.randint(2, 6)
    else:
        new = value + max(3, value // 3) * rng.choice([1, 2])
    return claim[:m.start()] + (f"{new:,}" if "," in m.group() else str(new)) + claim[m.end():]


def changed_negation(claim: str) -> str | None:
    """The claim with its negation dropped, or one added after its first auxiliary."""
    if NEGATIONS.search(claim):
        return NEGATIONS.sub("", claim, count=1)
    for aux in AUXILIARIES:
        m = re.search(rf"\b{aux}\b", claim)
        if m:
            return claim[:m.end()] + " not" + claim[m.end():]
    return None


def changed_antonym(claim: str, premise: str, antonyms: dict[str, list[str]], rng: random.Random) -> str | None:
    """The claim with a word of the premise replaced by one of its WordNet antonyms (words of four letters or more
    that are not mainly nouns nor participles: "fire"/"hire", an OCR-split "con"/"pro", "ordered"/"disordered" are no
    opposites in a sentence)."""
    said = set(norm_words(premise))
    options = [m for m in WORD.finditer(claim) if m.group().lower() in antonyms and m.group().lower() in said
               and m.group().lower() not in STOP and len(m.group()) >= 4
               and not m.group().lower().endswith(("ed", "ing"))]  # "made"/"unmade", "ordered"/"disordered": verbs
    if not options:
        return None
    m = rng.choice(options)
    word = m.group().lower()
    opposites = [a for a in sorted(antonyms[word]) if not a.endswith(word) or word.endswith(ADJECTIVE_ENDINGS)]
    if not opposites:  # "make"/"unmake", "cross"/"uncross": a prefix makes an opposite of an adjective, not a verb
        return None
    opposite = rng.choice(opposites)
    return claim[:m.start()] + (opposite.capitalize() if m.group()[0].isupper() else opposite) + claim[m.end():]


def build(scale: Path, seed: int = 23) -> dict:
    rng = random.Random(seed)
    known = known_words()
    antonyms = {k: [a for a in v if " " not in a and "_" not in a]
                for k, v in json.loads((LEXICON / "antonyms.json").read_text(encoding="utf-8")).items()}
    nouns = set(json.loads((LEXICON / "nouns.json").read_text(encoding="utf-8")))
    antonyms = {k: v for k, v in antonyms.items() if v and k not in nouns}
    sents = sentences(scale, known, excluded_windows())
    pairs = paraphrases(sents)
    rng.shuffle(pairs)
    by_page: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(sents):
        by_page[s["page"]].append(i)
    made: dict[str, list[dict]] = defaultdict(list)

    def add(kind: str, premise: int, claim: str, label: str, story: str) -> None:
        if len(made[kind]) < CAPS[kind]:
            made[kind].append({"a": sents[premise]["text"], "b": claim, "label": label, "kind": kind, "group": story})

    used_claims: set[str] = set()
    for longer, shorter in pairs:
        premise, claim = sents[longer]["text"], sents[shorter]["text"]
        if claim in used_claims:
            continue
        used_claims.add(claim)
        story = hashlib.sha256(" ".join(sorted(set(sents[shorter]["words"]))).encode()).hexdigest()[:12]
        missing = content(sents[shorter]["words"]) - content(sents[longer]["words"])
        added = new_words(sents[longer]["words"], sents[shorter]["words"], known)
        if len(missing) <= 3:
            add("entails", longer, claim, "entails", story)
            makers = {"number": lambda c=claim, p=premise: changed_number(c, p, rng),
                      "negation": lambda c=claim: changed_negation(c),
                      "antonym": lambda c=claim, p=premise: changed_antonym(c, p, antonyms, rng)}
            turn = len(made["entails"]) % 3
            for kind in ("number", "antonym", "negation")[turn:] + ("number", "antonym", "negation")[:turn]:
                changed = makers[kind]() if len(made[kind]) < CAPS[kind] else None
                if changed and changed != claim:
                    add(kind, longer, changed, "contradicts", story)
                    break
        if len(added) >= 4 and len(missing) <= 3:
            add("partial", shorter, premise, "neither", story)
        others = [i for i in by_page[sents[longer]["page"]] if i != longer
                  and len(content(sents[i]["words"]) - content(sents[longer]["words"])) >= 6]
        if others:
            add("elsewhere", longer, sents[rng.choice(others)]["text"], "neither", story)
    records = []
    for kind in sorted(made):
        for n, r in enumerate(made[kind]):
            records.append({"id": f"period_1916-{kind}-{n}", "task": "nli", "a": r["a"], "b": r["b"],
                            "label": r["label"], "orig": kind, "split": "mined", "group": r["group"]})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as gz:
        for r in records:
            gz.write((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8"))
    provenance_path = HERE / "sources" / "PROVENANCE.json"
    provenance = json.loads(provenance_path.read_text(encoding="utf-8"))
    provenance["period_1916"] = {
        "repository": "the project's shared data: scale/chronam_1916_01_all.jsonl.gz (Chronicling America front pages, "
                      "January 1916, via dchud/chronam-text)",
        "paths": [str(scale.name)], "licence": "public domain (Library of Congress, Chronicling America OCR)",
        "licence_found_in": "../shared/data/README.md", "role": "train",
        "pairs_read": len(records), "duplicates_dropped": 0, "conflicting_labels_dropped": 0,
        "pairs_written": len(records), "made_by": "lab/reader/period_pairs.py",
        "kinds": {k: len(v) for k, v in sorted(made.items())}, "sentences": len(sents), "paraphrase_pairs": len(pairs),
    }
    provenance_path.write_text(json.dumps(provenance, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return provenance["period_1916"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=Path, default=SCALE)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()
    print(json.dumps(build(args.scale, args.seed), indent=1))


if __name__ == "__main__":
    main()
