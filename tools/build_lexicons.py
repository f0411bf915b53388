#!/usr/bin/env python3
"""Derive the claim verifier's small word lexicons from WordNet 3.0.

Reads the WordNet 3.0 database files (data.*, index.*, *.exc, cntlist.rev) as
installed by Debian's ``wordnet-base`` package and writes, into --out:

    antonyms.json       {"word": ["antonym", ...]}       symmetric
    derivations.json    {"word": ["related form", ...]}  symmetric
    words.json          ["word", ...]                    sorted
    exceptions.json     {"exceptions": {"form": ["base", ...]}}
    synonyms.json       {"word": ["synonym", ...]}       symmetric
    indirect_antonyms.json {"word": ["antonym", ...]}    symmetric
    nouns.json          ["word", ...]                    sorted: mainly nouns
    verb_nouns.json     ["word", ...]                    sorted: nouns and verbs, not mainly nouns
    LICENSE-WordNet.txt the WordNet 3.0 licence and a provenance note
    README.md           what the files are, their counts, how to rebuild them

Only the standard library is used and the output is deterministic: rerunning
the script on the same WordNet files gives byte-identical files.

Usage:
    python tools/build_lexicons.py [--wordnet /usr/share/wordnet]
                                   [--out historian_blueprint/verify/lexicon]

The WordNet database format is described in wndb(5WN) and cntlist(5WN).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

# Fixed so that a rebuild is byte-identical; pass --date to record another day.
BUILD_DATE = "2026-11-24"
DEFAULT_WORDNET = "/usr/share/wordnet"
DEFAULT_OUT = "historian_blueprint/verify/lexicon"
DEFAULT_DOC = "/usr/share/doc/wordnet-base"
REPRODUCE = "python3 tools/build_lexicons.py --wordnet /usr/share/wordnet --out historian_blueprint/verify/lexicon"

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
SS_TYPES = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # a sense key's synset type (5: satellite)
POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "r": "adverb"}
WORD_RE = re.compile(r"^[a-z]{3,}$")
# Exception bases may be short ("was" -> "be", "men" -> "man" is fine anyway).
BASE_RE = re.compile(r"^[a-z]+$")
ADJ_MARKER_RE = re.compile(r"\((?:a|p|ip)\)$")

# Size budgets from the brief (bytes).
ANTONYMS_BUDGET = 400_000
DERIVATIONS_BUDGET = 1_000_000
WORDS_BUDGET = 2_000_000
WORDS_SHORT_LIMIT = 12  # the fallback restriction of words.json


def is_word(lemma: str) -> bool:
    """A lowercase single-word lemma: letters only, at least three of them."""
    return bool(WORD_RE.match(lemma))


# --------------------------------------------------------------------------
# Reading WordNet


class WordNet:
    """The parts of WordNet 3.0 the lexicons need, parsed from the raw files.

    A sense is (pos, synset_offset, word_number) with pos in n/v/a/r
    (adjective satellites "s" are folded into "a": both live in data.adj).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sense_lemma: dict[tuple[str, int, int], str] = {}
        # lexical pointers between senses, keyed by pointer symbol
        self.pointers: dict[str, set[tuple[tuple, tuple]]] = defaultdict(set)
        self.lemmas: dict[str, set[str]] = defaultdict(set)  # lemma -> POS set
        self.tag_count: dict[str, int] = defaultdict(int)  # lemma -> summed tag count
        self.pos_tags: dict[tuple[str, str], int] = defaultdict(int)  # (lemma, pos) -> summed tag count
        self.exceptions: dict[str, set[str]] = defaultdict(set)
        self.synsets: dict[tuple[str, int], list[str]] = {}  # (pos, offset) -> member lemmas
        self.semantic: dict[str, set[tuple[tuple, tuple]]] = defaultdict(set)  # pointers between synsets
        for pos, name in POS_FILES.items():
            self._read_data(pos, root / f"data.{name}")
            self._read_index(pos, root / f"index.{name}")
            self._read_exc(root / f"{name}.exc")
        cntlist = root / "cntlist.rev"
        if cntlist.exists():
            self._read_cntlist(cntlist)

    @staticmethod
    def _lines(path: Path):
        with open(path, encoding="latin-1") as handle:
            for line in handle:
                if line.startswith("  "):  # the licence header of data/index files
                    continue
                line = line.rstrip("\n")
                if line.strip():
                    yield line

    def _read_data(self, pos: str, path: Path) -> None:
        for line in self._lines(path):
            fields = line.split(" | ", 1)[0].split()
            offset = int(fields[0])
            w_cnt = int(fields[3], 16)
            i = 4
            members = []
            for number in range(1, w_cnt + 1):
                word = ADJ_MARKER_RE.sub("", fields[i]).lower()
                self.sense_lemma[(pos, offset, number)] = word
                members.append(word)
                i += 2  # word, lex_id
            self.synsets[(pos, offset)] = members
            p_cnt = int(fields[i])
            i += 1
            for _ in range(p_cnt):
                symbol, target, tpos, st = fields[i : i + 4]
                i += 4
                source_number, target_number = int(st[:2], 16), int(st[2:], 16)
                tpos = "a" if tpos == "s" else tpos
                if source_number == 0 or target_number == 0:
                    self.semantic[symbol].add(((pos, offset), (tpos, int(target))))
                    continue
                self.pointers[symbol].add(
                    ((pos, offset, source_number), (tpos, int(target), target_number))
                )

    def _read_index(self, pos: str, path: Path) -> None:
        for line in self._lines(path):
            fields = line.split()
            lemma = fields[0].lower()
            self.lemmas[lemma].add(pos)
            p_cnt = int(fields[3])
            tagsense_cnt = int(fields[5 + p_cnt])
            if tagsense_cnt > 0:
                # at least one sense of this lemma has a tag count >= 1
                self.tag_count[lemma] = max(self.tag_count[lemma], 1)

    def _read_exc(self, path: Path) -> None:
        if not path.exists():
            return
        for line in self._lines(path):
            form, *bases = line.lower().split()
            for base in bases:
                self.exceptions[form].add(base)

    def _read_cntlist(self, path: Path) -> None:
        # cntlist.rev: "sense_key sense_number tag_cnt"
        for line in self._lines(path):
            key, _number, count = line.split()
            lemma, rest = key.lower().split("%", 1)
            self.tag_count[lemma] += int(count)
            pos = SS_TYPES.get(rest.split(":", 1)[0])
            if pos:
                self.pos_tags[(lemma, pos)] += int(count)

    def lexical(self, symbol: str):
        for source, target in sorted(self.pointers[symbol]):
            yield source, target, self.sense_lemma[source], self.sense_lemma[target]


# --------------------------------------------------------------------------
# Deriving the lexicons


def _split_common_prefix(a: str, b: str) -> tuple[str, str]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[n:], b[n:]


def _split_common_suffix(a: str, b: str) -> tuple[str, str, str]:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return a[: len(a) - n], b[: len(b) - n], a[len(a) - n :]


def consistent_carry(x: str, y: str, dx: str, dy: str) -> bool:
    """Whether dx/dy (derived from the antonyms x/y) are antonyms in the same way.

    A derivation link carries an antonymy only when the two derived forms are
    formed alike, so that approve/disapprove gives approval/disapproval but not
    approval/disapprover:
      * the prefix that tells x from y tells dx from dy
        (legal/illegal -> legality/illegality), or
      * dx is made from x as dy is made from y, with the same suffix change
        (shout/whisper -> shouter/whisperer), or
      * dx and dy end alike (same last three letters, or last two when one of
        the words is short), which covers winner/loser, rising/falling.
    """
    if dx == dy or (dx == x) != (dy == y):
        return False  # cheer/complain must not give cheer/complainer
    px, py, stem = _split_common_suffix(x, y)
    if stem and dx.startswith(px) and dy.startswith(py) and dx[len(px):] == dy[len(py):]:
        return True
    if _split_common_prefix(x, dx) == _split_common_prefix(y, dy):
        return True
    k = 3 if min(len(dx), len(dy)) >= 6 else 2
    return dx[-k:] == dy[-k:]


def _add_pair(table: dict[str, set[str]], a: str, b: str) -> None:
    if a != b:
        table[a].add(b)
        table[b].add(a)


def build_antonyms(wn: WordNet) -> tuple[dict[str, set[str]], dict[str, int]]:
    direct: dict[str, set[str]] = defaultdict(set)
    ant_senses = []
    for source, target, a, b in wn.lexical("!"):
        ant_senses.append((source, target))
        if is_word(a) and is_word(b):
            _add_pair(direct, a, b)
    direct_words = set(direct)

    # A carried pair is kept when one of its words is attested: it has a tag count
    # >= 1 or a direct antonym. Asking it of both words would drop buyer/seller,
    # importer/exporter and legally/illegally (seller, importer and illegally have
    # no tagged sense in the concordance), for a gain of only a few kilobytes.
    def keep(word: str) -> bool:
        return wn.tag_count.get(word, 0) >= 1 or word in direct_words

    derived_of: dict[tuple, set[tuple]] = defaultdict(set)
    for source, target in wn.pointers["+"]:
        derived_of[source].add(target)

    carried: dict[str, set[str]] = defaultdict(set)
    # "+" carry: the derivationally related forms of two antonymous senses
    for sx, sy in ant_senses:
        x, y = wn.sense_lemma[sx], wn.sense_lemma[sy]
        for dxs in derived_of.get(sx, ()):
            for dys in derived_of.get(sy, ()):
                if dxs[0] != dys[0]:
                    continue  # only forms of the same part of speech
                dx, dy = wn.sense_lemma[dxs], wn.sense_lemma[dys]
                if is_word(dx) and is_word(dy) and (keep(dx) or keep(dy)) and consistent_carry(x, y, dx, dy):
                    _add_pair(carried, dx, dy)

    # "\" carry: adverbs derived from two antonymous adjectives
    adverbs_of: dict[tuple, set[tuple]] = defaultdict(set)
    for source, target in wn.pointers["\\"]:
        if source[0] == "r" and target[0] == "a":
            adverbs_of[target].add(source)
    for sx, sy in ant_senses:
        if sx[0] != "a":
            continue
        for rx in adverbs_of.get(sx, ()):
            for ry in adverbs_of.get(sy, ()):
                dx, dy = wn.sense_lemma[rx], wn.sense_lemma[ry]
                if is_word(dx) and is_word(dy) and (keep(dx) or keep(dy)):
                    _add_pair(carried, dx, dy)

    table: dict[str, set[str]] = defaultdict(set)
    for source in (direct, carried):
        for word, others in source.items():
            table[word] |= others
    direct_pairs = sum(len(v) for v in direct.values()) // 2
    total_pairs = sum(len(v) for v in table.values()) // 2
    stats = {
        "direct_pairs": direct_pairs,
        "carried_pairs": total_pairs - direct_pairs,
        "pairs": total_pairs,
        "words": len(table),
    }
    return table, stats


def build_derivations(wn: WordNet, restrict: bool) -> dict[str, set[str]]:
    table: dict[str, set[str]] = defaultdict(set)
    for _source, _target, a, b in wn.lexical("+"):
        if not (is_word(a) and is_word(b)):
            continue
        if restrict and not (wn.tag_count.get(a, 0) >= 1 and wn.tag_count.get(b, 0) >= 1):
            continue
        _add_pair(table, a, b)
    return table


def build_synonyms(wn: WordNet) -> dict[str, set[str]]:
    """Words that share a synset, both with a tag count >= 1 (words in common use), symmetric."""
    table: dict[str, set[str]] = defaultdict(set)
    for members in wn.synsets.values():
        common = sorted({m for m in members if is_word(m) and wn.tag_count.get(m, 0) >= 1})
        for i, a in enumerate(common):
            for b in common[i + 1:]:
                _add_pair(table, a, b)
    return table


def build_indirect_antonyms(wn: WordNet) -> dict[str, set[str]]:
    """WordNet's indirect antonyms of adjectives: a satellite (``&`` similar to a head) is opposed to the
    direct antonyms of its head (main ~ major, major ! minor: main / minor). Both words with a tag count >= 1."""
    heads_of: dict[tuple[str, int], set[tuple[str, int]]] = defaultdict(set)
    for satellite, head in wn.semantic["&"]:
        heads_of[satellite].add(head)
    opposite: dict[tuple[str, int], set[str]] = defaultdict(set)  # head synset -> antonym words
    for source, _target, _a, b in wn.lexical("!"):
        if source[0] == "a":
            opposite[(source[0], source[1])].add(b)
    table: dict[str, set[str]] = defaultdict(set)
    for satellite, heads in heads_of.items():
        for head in heads:
            for word in wn.synsets.get(satellite, []):
                for other in opposite.get(head, ()):
                    if is_word(word) and is_word(other) and wn.tag_count.get(word, 0) >= 1 \
                            and wn.tag_count.get(other, 0) >= 1:
                        _add_pair(table, word, other)
    return table


def build_words(wn: WordNet, restrict: bool) -> list[str]:
    words = [w for w in wn.lemmas if is_word(w)]
    if restrict:
        words = [w for w in words if wn.tag_count.get(w, 0) >= 1 or len(w) <= WORDS_SHORT_LIMIT]
    return sorted(words)


def build_nouns(wn: WordNet) -> list[str]:
    """Words that are mainly nouns: only noun senses, or noun senses tagged more often than the senses of
    every other part of speech ("password", "acre", "plantation"; not "judge" or "estimate", used as verbs as
    often in the tagged corpus)."""
    out = []
    for w, parts in wn.lemmas.items():
        if not is_word(w) or "n" not in parts:
            continue
        noun = wn.pos_tags.get((w, "n"), 0)
        if parts == {"n"} or all(noun > wn.pos_tags.get((w, p), 0) for p in parts - {"n"}):
            out.append(w)
    return sorted(out)


def build_verb_nouns(wn: WordNet, nouns: list[str]) -> list[str]:
    """Words with noun and verb senses that are not mainly nouns ("strike", "return", "purchase"): nouns where
    a noun stands ("the railroad strike"), verbs elsewhere ("did the men strike")."""
    mainly = set(nouns)
    return sorted(w for w, parts in wn.lemmas.items() if is_word(w) and {"n", "v"} <= parts and w not in mainly)


def build_exceptions(wn: WordNet) -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for form, bases in wn.exceptions.items():
        if not is_word(form):
            continue
        kept = {b for b in bases if BASE_RE.match(b) and b != form}
        if kept:
            table[form] = kept
    return table


# --------------------------------------------------------------------------
# Writing


def dump_mapping(table: dict[str, set[str]] | dict[str, list[str]]) -> str:
    """One key a line, keys and values sorted: valid JSON that diffs well."""
    lines = [
        json.dumps(key) + ":" + json.dumps(sorted(table[key]), separators=(",", ":"))
        for key in sorted(table)
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def dump_list(items: list[str]) -> str:
    return "[\n" + ",\n".join(json.dumps(item) for item in items) + "\n]\n"


def dump_exceptions(table: dict[str, set[str]]) -> str:
    lines = [
        json.dumps(key) + ":" + json.dumps(sorted(table[key]), separators=(",", ":"))
        for key in sorted(table)
    ]
    return '{"exceptions":{\n' + ",\n".join(lines) + "\n}}\n"


def debian_version(doc: Path) -> str:
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "wordnet-base"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        if out:
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    changelog = doc / "changelog.Debian.gz"
    if changelog.exists():
        with gzip.open(changelog, "rt", encoding="utf-8") as handle:
            match = re.match(r"\S+ \(([^)]+)\)", handle.readline())
            if match:
                return match.group(1)
    return "unknown"


def licence_text(doc: Path, wordnet: Path) -> str:
    """The WordNet 3.0 licence: the dictionary's LICENSE if present, else the
    "License: WordNet3.0" paragraph of the Debian copyright file."""
    for candidate in (wordnet / "LICENSE", wordnet.parent / "LICENSE"):
        if candidate.exists():
            return candidate.read_text(encoding="utf-8").strip() + "\n"
    copyright_file = doc / "copyright"
    text = copyright_file.read_text(encoding="utf-8")
    match = re.search(r"^License: WordNet3\.0\n((?: .*\n?)+)", text, re.M)
    if not match:
        raise SystemExit(f"no WordNet3.0 licence paragraph in {copyright_file}")
    body = []
    for line in match.group(1).splitlines():
        line = line[1:]  # the one-space indent of a Debian copyright field
        body.append("" if line == "." else line)
    return "\n".join(body).strip() + "\n"


def input_digests(wordnet: Path) -> list[tuple[str, str]]:
    names = [f"{kind}.{POS_FILES[p]}" for kind in ("data", "index") for p in POS_FILES]
    names += [f"{POS_FILES[p]}.exc" for p in POS_FILES] + ["cntlist.rev"]
    digests = []
    for name in names:
        path = wordnet / name
        if path.exists():
            digests.append((name, hashlib.sha256(path.read_bytes()).hexdigest()))
    return digests


def within_budget(build, dump, budget: int):
    """(table, its text, whether it was restricted): the whole table, or the restricted one when its text is
    over ``budget`` bytes."""
    table = build(False)
    text = dump(table)
    if len(text.encode()) <= budget:
        return table, text, False
    table = build(True)
    return table, dump(table), True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", default=DEFAULT_WORDNET, help="WordNet dict folder (default: %(default)s)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    parser.add_argument("--doc", default=DEFAULT_DOC,
                        help="wordnet-base doc folder with copyright (default: %(default)s)")
    parser.add_argument("--date", default=BUILD_DATE, help="date recorded in the licence note (default: %(default)s)")
    parser.add_argument("--package-version", default=None, help="wordnet-base version to record (default: ask dpkg)")
    args = parser.parse_args(argv)

    wordnet, out, doc = Path(args.wordnet), Path(args.out), Path(args.doc)
    if not (wordnet / "data.noun").exists():
        print(f"no WordNet database at {wordnet} (apt-get install wordnet-base)", file=sys.stderr)
        return 2
    version = args.package_version or debian_version(doc)
    wn = WordNet(wordnet)

    antonyms, ant_stats = build_antonyms(wn)
    antonyms_text = dump_mapping(antonyms)

    derivations, derivations_text, derivations_restricted = within_budget(
        lambda restrict: build_derivations(wn, restrict), dump_mapping, DERIVATIONS_BUDGET)
    words, words_text, words_restricted = within_budget(
        lambda restrict: build_words(wn, restrict), dump_list, WORDS_BUDGET)

    exceptions = build_exceptions(wn)
    exceptions_text = dump_exceptions(exceptions)
    synonyms = build_synonyms(wn)
    synonyms_text = dump_mapping(synonyms)
    indirect = build_indirect_antonyms(wn)
    indirect_text = dump_mapping(indirect)
    nouns = build_nouns(wn)
    nouns_text = dump_list(nouns)
    verb_nouns = build_verb_nouns(wn, nouns)
    verb_nouns_text = dump_list(verb_nouns)

    licence = licence_text(doc, wordnet)
    provenance = (
        "The files antonyms.json, indirect_antonyms.json, synonyms.json, derivations.json, words.json,\n"
        "nouns.json and exceptions.json in this\n"
        "folder are derived from WordNet 3.0 (Princeton University), as shipped by Debian's\n"
        f"wordnet-base package version {version}, by tools/build_lexicons.py on {args.date}.\n"
        "They are a modification of the WordNet database and are distributed under the\n"
        "WordNet 3.0 licence above, whose copyright notice, statements and disclaimer apply\n"
        "to them.\n"
    )
    licence_file = (
        "WordNet 3.0 licence\n"
        "===================\n\n"
        + licence
        + "\n"
        + "Derived files\n"
        + "=============\n\n"
        + provenance
    )

    def pair_count(t: dict) -> int:
        return sum(len(v) for v in t.values()) // 2
    digests = "\n".join(f"    {digest}  {name}" for name, digest in input_digests(wordnet))
    notes_words = (
        f"restricted to lemmas with a tag count >= 1 or of length <= {WORDS_SHORT_LIMIT} to stay under 2 MB"
        if words_restricted
        else "every word of WordNet (no restriction was needed to stay under 2 MB)"
    )
    notes_derivations = (
        "restricted to pairs whose two lemmas have a tag count >= 1 to stay under 1 MB"
        if derivations_restricted
        else "every such pair (no restriction was needed to stay under 1 MB)"
    )
    readme = f"""# Word lexicons derived from WordNet 3.0

Small word lists used by the claim verifier. They are generated, not edited by
hand: `tools/build_lexicons.py` parses the WordNet 3.0 database files directly
(standard library only) and writes every file in this folder. The plugin reads
the JSON files at run time; it does not need WordNet, nltk or apt.

A *word* below is a lowercase single-word WordNet lemma made of the letters
a-z only, at least three letters long (no multiword `_` lemmas, hyphens,
apostrophes or digits). The *tag count* of a lemma is its count in WordNet's
semantic-concordance sense tags (`cntlist.rev`, and `tagsense_cnt` of the
`index.*` files).

| file | content | entries |
|---|---|---|
| `antonyms.json` | `{{"word": ["antonym", ...]}}`, symmetric | {ant_stats['words']} words, {ant_stats['pairs']} pairs |
| `derivations.json` | `{{"word": ["related form", ...]}}`, symmetric | {len(derivations)} words, {pair_count(derivations)} pairs |
| `words.json` | sorted list of words, all parts of speech | {len(words)} words |
| `exceptions.json` | `{{"exceptions": {{"form": ["base", ...]}}}}` | {len(exceptions)} forms |
| `synonyms.json` | `{{"word": ["synonym", ...]}}`: words sharing a synset, both with a tag count >= 1 | {len(synonyms)} words |
| `indirect_antonyms.json` | `{{"word": ["antonym", ...]}}`: an adjective satellite against its head's direct antonyms (main/minor) | {len(indirect)} words |
| `nouns.json` | sorted list of words that are mainly nouns | {len(nouns)} words |
| `verb_nouns.json` | sorted list of words with noun and verb senses, not mainly nouns | {len(verb_nouns)} words |
| `LICENSE-WordNet.txt` | the WordNet 3.0 licence and the provenance of these files | |

* `antonyms.json`: WordNet's direct antonym pointers (`!`, between specific word
  senses) for nouns, verbs, adjectives and adverbs ({ant_stats['direct_pairs']} pairs), plus
  {ant_stats['carried_pairs']} pairs carried over (a) derivationally related forms (`+`) of two
  antonymous senses, when both forms have the same part of speech and are formed
  alike (approve/disapprove gives approval/disapproval, not approval/disapprover),
  and (b) the adverbs WordNet derives (`\\`) from two antonymous adjectives
  (careful/careless gives carefully/carelessly). A carried pair is kept only
  when at least one of its two words has a tag count >= 1 or a direct antonym.
  WordNet has no antonym pointer for some everyday opposites: it pairs friend
  with foe, and gives enemy and ally no antonym at all.
* `derivations.json`: the derivationally related form pointers (`+`) between two
  words: {notes_derivations}.
  It tells a related form of a word (approve/approval) from a different word.
* `words.json`: {notes_words}.
  It tells whether a near-spelling of a source word (infant/infantry,
  police/policy) is itself another English word.
* `nouns.json`: words whose WordNet senses are only nouns, or whose noun senses
  are tagged more often than the senses of every other part of speech (password,
  acre, plantation; not judge or estimate). It tells the things a question
  names, which the cited passages must mention, from its verbs, which they may
  paraphrase.
* `verb_nouns.json`: words with both noun and verb senses that are not mainly
  nouns (strike, return, purchase). Where a question uses one as a noun (after
  an article or possessive, or as the head of "the railroad strike"), it is a
  thing the cited passages must mention too.
* `exceptions.json`: the irregular inflections of `noun.exc`, `verb.exc`,
  `adj.exc` and `adv.exc`, all parts of speech merged, each form with every base
  it can come from (`"axes": ["ax", "axis"]`, `"fell": ["fall"]`; a form that is
  also a lemma, like fell, is in `words.json` too). Forms are words as above;
  bases are letters only, of any length (`"was": ["be"]`).

## Reproduce

Install Debian's `wordnet-base` (version {version} was used), then, from the
repository root:

    {REPRODUCE}

The output is deterministic (sorted keys and values, fixed date): a rebuild from
the same WordNet files is byte-identical, which `tests/test_lexicon.py` checks.
The input files had these SHA-256 digests:

{digests}

## Licence

Derived from WordNet 3.0, Copyright 2006 by Princeton University, under the
WordNet 3.0 licence reproduced in `LICENSE-WordNet.txt`, built on {args.date}.
"""  # noqa: E501 - the README this writes has Markdown table rows, one line each

    out.mkdir(parents=True, exist_ok=True)
    files = {
        "antonyms.json": antonyms_text,
        "derivations.json": derivations_text,
        "words.json": words_text,
        "exceptions.json": exceptions_text,
        "synonyms.json": synonyms_text,
        "indirect_antonyms.json": indirect_text,
        "nouns.json": nouns_text,
        "verb_nouns.json": verb_nouns_text,
        "LICENSE-WordNet.txt": licence_file,
        "README.md": readme,
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8", newline="\n")
        print(f"{out / name}: {len(text.encode())} bytes")
    if len(antonyms_text.encode()) > ANTONYMS_BUDGET:
        print(f"warning: antonyms.json is over {ANTONYMS_BUDGET} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
