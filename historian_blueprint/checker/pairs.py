"""Training pairs for the support scorer: (evidence, claim, label 1 = the evidence carries the claim).

Sources (docs/verification.md, "The support scorer": licences and counts):
- SNLI dev + test from the e-SNLI repository (CC BY-SA 4.0): entailment -> 1, neutral / contradiction -> 0;
- the SummaC benchmark's factual-consistency sets (FactCC, XSumFaith, SummEval, Polytope; Apache-2.0): the
  document cut to the scorer's windows (``verify/windows.py``), the summary sentence as the claim;
- WiCE's ``non_supported_tokens`` train split (ODC-BY): claims that their evidence only partly supports -> 0;
- synthetic pairs from the sample corpus's own sentences (public domain): the sentence in its window -> 1,
  a clause of it -> 1, a rounded figure -> 1; a changed figure or year, a swapped name, an added or dropped
  negation, a reversed opinion word, a sentence from elsewhere that shares words -> 0.

Never used: anything under ../shared/data/eval, HaluEval, BEGIN, WiCE's test split, QAGS.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from historian_blueprint.bench.common import read_jsonl
from historian_blueprint.text.spans import sentence_spans
from historian_blueprint.text.words import content_words
from historian_blueprint.verify.windows import windows


@dataclass(frozen=True)
class Pair:
    evidence: str
    claim: str
    label: int
    source: str


# Where each public source lives (repository, commit, path); ``historian train-checker --data DIR`` reads
# the files from DIR/<name> (docs/verification.md: how to bring them here with git).
SOURCES = {
    "e-SNLI": ("https://github.com/OanaMariaCamburu/e-SNLI", "7b585a3f077fdea899780eb0473940522ae44a2e", "CC BY-SA 4.0 (SNLI)"),
    "summac": ("https://github.com/tingofurro/summac", "46056e54e3f30a47655d2d2e76150ad428f58224", "Apache-2.0"),
    "wice": ("https://github.com/ryokamoi/wice", "ddeb6c183665e2a20c5f03c5aa07f03888b9870f", "ODC-BY (text CC-BY-SA)"),
}


def git_file(repo: Path, commit: str, path: str) -> str:
    """A file of a bare or normal git repository at a commit (the data directories are git clones)."""
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def snli(repo: Path, commit: str) -> Iterator[Pair]:
    for split in ("dev", "test"):
        s1 = git_file(repo, commit, f"dataset/eSNLI/s1.{split}").splitlines()
        s2 = git_file(repo, commit, f"dataset/eSNLI/s2.{split}").splitlines()
        labels = git_file(repo, commit, f"dataset/eSNLI/labels.{split}").splitlines()
        for premise, hypothesis, label in zip(s1, s2, labels):
            if premise.strip() and hypothesis.strip():
                yield Pair(premise.strip(), hypothesis.strip(), int(label.strip() == "entailment"), "snli")


def summac(repo: Path, commit: str) -> Iterator[Pair]:
    for name in ("factcc", "xsumfaith", "summeval", "polytope"):
        data = json.loads(git_file(repo, commit, f"data/{name}.json"))
        for item in data.values():
            claim, document = item["claim"].strip(), item["document"]
            found = windows(claim, document, limit=1)
            if claim and found:
                yield Pair(found[0].text, claim, int(item["label"]), f"summac-{name}")


def wice_train(repo: Path, commit: str) -> Iterator[Pair]:
    for line in git_file(repo, commit, "data/non_supported_tokens/train.jsonl").splitlines():
        item = json.loads(line)
        if item.get("label") == "supported":
            continue
        ids = sorted({i for group in item.get("supporting_sentences") or [] for i in group})
        evidence = " ".join(item["evidence"][i] for i in ids if i < len(item["evidence"]))
        if evidence:
            yield Pair(evidence, item["claim"], 0, "wice-train")


# ---------------------------------------------------------------- synthetic pairs from the corpus

_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?(?![\w,])")
_AUXILIARY = re.compile(r"\b(is|was|are|were|has|have|had|will|would|can|could|should|must|shall|may)\b(?! not)")
_NEGATION = re.compile(r"\s+(?:not|never)\b|n't\b")
OPPOSITES = {
    "increase": "decrease", "increased": "decreased", "increasing": "decreasing", "large": "small",
    "larger": "smaller", "more": "less", "greater": "smaller", "good": "bad", "best": "worst", "success": "failure",
    "successful": "unsuccessful", "approve": "condemn", "approved": "condemned", "favorable": "unfavorable",
    "wise": "unwise", "necessary": "unnecessary", "strong": "weak", "rich": "poor", "peace": "war", "friendly":
    "hostile", "satisfactory": "unsatisfactory", "prosperous": "depressed", "prosperity": "depression", "rise":
    "fall", "gain": "loss", "benefit": "harm", "beneficial": "harmful", "salutary": "harmful", "support": "oppose",
    "encourage": "discourage", "high": "low", "higher": "lower", "early": "late", "kind": "cruel", "happy":
    "unhappy", "free": "enslaved", "welcome": "unwelcome", "agree": "disagree", "adequate": "inadequate",
    "sufficient": "insufficient", "important": "unimportant", "possible": "impossible", "always": "never",
    "all": "none of", "many": "few", "often": "rarely", "surplus": "deficit", "abundant": "scarce",
}
OPPOSITES.update({v: k for k, v in list(OPPOSITES.items()) if " " not in v})


def _changed_number(rng: random.Random, token: str) -> str:
    plain = token.replace(",", "")
    value = float(plain)
    if "." not in plain and 1700 <= value <= 1960:  # a year
        return str(int(value) + rng.choice([-1, 1]) * rng.randint(2, 12))
    new = value * rng.choice([0.5, 0.6, 1.5, 2, 3]) + rng.randint(1, 9)
    if "." in plain:
        return f"{new:,.2f}" if "," in token else f"{new:.2f}"
    return f"{int(new):,}" if "," in token else str(int(new))


def _rounded(token: str) -> str | None:
    value = float(token.replace(",", ""))
    if value >= 1_000_000_000:
        return f"about {value / 1e9:.1f} billion".replace(".0 ", " ")
    if value >= 1_000_000:
        return f"about {round(value / 1e6)} million" if value >= 10e6 else f"about {value / 1e6:.1f} million"
    if value >= 10_000:
        return f"about {round(value / 1e3)} thousand" if value < 100_000 else f"about {round(value / 1e3):,},000"
    return None


def perturb(rng: random.Random, sentence: str, names: list[str]) -> list[tuple[str, int, str]]:
    """(claim, label, how) pairs made from one source sentence."""
    out: list[tuple[str, int, str]] = [(sentence, 1, "verbatim")]
    clauses = [c.strip() for c in re.split(r"[;:]|,\s+(?:and|but|which|while|as)\s+", sentence) if len(c.split()) >= 6]
    if len(clauses) > 1:
        clause = rng.choice(clauses)
        out.append((clause[0].upper() + clause[1:].rstrip(",") + ".", 1, "clause"))
    nums = [m for m in _NUMBER.finditer(sentence)]
    if nums:
        m = rng.choice(nums)
        out.append((sentence[:m.start()] + _changed_number(rng, m.group()) + sentence[m.end():], 0, "number"))
        rounded = _rounded(m.group())
        if rounded:
            out.append((sentence[:m.start()] + rounded + sentence[m.end():], 1, "rounded"))
    present = [n for n in set(re.findall(r"(?<=[a-z,;] )[A-Z][a-z]{3,}", sentence))]
    if present and names:
        old = rng.choice(present)
        new = rng.choice([n for n in names if n != old] or names)
        out.append((re.sub(rf"\b{old}\b", new, sentence), 0, "name"))
    if _NEGATION.search(sentence):
        out.append((_NEGATION.sub("", sentence, count=1), 0, "negation"))
    elif (aux := _AUXILIARY.search(sentence)) is not None:
        out.append((sentence[:aux.end()] + " not" + sentence[aux.end():], 0, "negation"))
    flips = [w for w in re.findall(r"[a-z]+", sentence) if w in OPPOSITES]
    if flips:
        word = rng.choice(flips)
        out.append((re.sub(rf"\b{word}\b", OPPOSITES[word], sentence, count=1), 0, "opposite"))
    return out


def synthetic(
    corpus: dict[str, str], n_sentences: int, seed: int = 13, exclude: dict[str, list[tuple[int, int]]] | None = None,
) -> Iterator[Pair]:
    """Pairs from ``n_sentences`` sampled sentences of the corpus (id -> text), each in its own window.
    ``exclude``: regions (document id -> spans) no training window may come near: the evidence of the labeled
    claims and questions that measure the product (``held_out_regions``)."""
    rng = random.Random(seed)
    exclude = exclude or {}
    counts = Counter(n for text in corpus.values() for n in re.findall(r"(?<=[a-z,;] )[A-Z][a-z]{3,}", text))
    names = sorted(n for n, k in counts.items() if k >= 5)  # OCR misreadings are rare
    pool: list[tuple[str, int, int]] = []
    for doc_id, text in corpus.items():
        for start, end in sentence_spans(text):
            n_words = len(text[start:end].split())
            near_held_out = any(start < e + MARGIN and end > s - MARGIN for s, e in exclude.get(doc_id, ()))
            if 8 <= n_words <= 45 and not near_held_out and not re.search(r"[^\x00-\x7f]{3}|\w{25}", text[start:end]):
                pool.append((doc_id, start, end))
    picks = rng.sample(pool, min(n_sentences, len(pool)))
    for doc_id, start, end in picks:
        text = corpus[doc_id]
        sentence = " ".join(text[start:end].split())
        found = windows(sentence, text, cited=[(start, end)], limit=1)
        if not found:
            continue
        window = found[0].text
        for claim, label, how in perturb(rng, sentence, names):
            yield Pair(window, claim, label, f"corpus-{how}")
        # a lexically close sentence from elsewhere in the corpus is not carried by this window
        window_words = set(content_words(window))
        candidates = [rng.choice(pool) for _ in range(12)]
        other_doc, o_start, o_end = max(candidates, key=lambda c: len(window_words & set(content_words(corpus[c[0]][c[1]:c[2]]))))
        other = " ".join(corpus[other_doc][o_start:o_end].split())
        if other_doc != doc_id or not (found[0].start <= o_start < found[0].end):
            yield Pair(window, other, 0, "corpus-elsewhere")
        # a window of the same document without the sentence does not carry it
        rest = [w for w in windows(sentence, text, limit=3) if not (w.start <= start < w.end)]
        if rest and len(set(content_words(sentence)) - set(content_words(rest[0].text))) >= 3:
            yield Pair(rest[0].text, sentence, 0, "corpus-nearby")


MARGIN = 1500  # characters around a held-out span that no training sentence (or its window) comes from


def held_out_regions(corpus: dict[str, str], files: list[Path]) -> dict[str, list[tuple[int, int]]]:
    """Where the labeled sets touch the corpus (their spans only; labels are not read): cited and evidence
    spans of claim files, gold quotes of question files."""
    out: dict[str, list[tuple[int, int]]] = {}
    for path in files:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            spans = list(item.get("cited") or [])
            if isinstance(item.get("evidence"), dict):
                spans.append(item["evidence"])
            for g in item.get("gold") or []:
                at = corpus.get(g["source_id"], "").find(g["quote"])
                if at >= 0:
                    spans.append({"source_id": g["source_id"], "start": at, "end": at + len(g["quote"])})
            for span in spans:
                if span.get("source_id") in corpus:
                    out.setdefault(span["source_id"], []).append((int(span["start"]), int(span["end"])))
    return out


def read_corpus(directory: Path) -> dict[str, str]:
    return {doc["_id"]: doc["content"] for path in sorted(directory.glob("*.jsonl")) for doc in read_jsonl(path)}
