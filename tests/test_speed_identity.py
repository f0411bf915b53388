"""Speed changes keep every word the same: the fast paths of text normalization and content words give exactly
what the plain versions gave (kept here as they were before the speed work) on every sentence of the sample
corpus and of the four labeled files' documents and claims, and on texts made to reach each skipped step."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest

from historian_lab.bench.common import SAMPLE_CORPUS
from tests.conftest import EVAL
from historian_blueprint.text import quantities as Q
from historian_blueprint.text import words as W
from historian_blueprint.text.spans import sentence_spans


def plain_normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(W.QUOTES)
    text = W._DECADE.sub(r"\1s", re.sub(r"\s+", " ", text).strip().lower())
    for short, word in W.ABBREVIATIONS.items():
        text = text.replace(short, word)
    return W.PHRASES.sub(W.PHRASE_FORM, re.sub(r"  +", " ", text))


def plain_compound_numbers(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        tens, unit = W.NUMBER_WORDS.get(match.group(1).lower()), W.NUMBER_WORDS.get(match.group(2).lower())
        if tens and unit and tens % 10 == 0 and 20 <= tens <= 90 and 1 <= unit <= 9:
            return str(tens + unit)
        return match.group(0)

    return re.sub(r"\b([A-Za-z]+)-([A-Za-z]+)\b", repl, text)


def plain_content_words(text: str) -> list[str]:
    out = ["birth", "die"] if W._LIFESPAN.search(text) else []
    for w in W._WORD.findall(plain_normalize(W._ORDINAL.sub(r"\1", plain_compound_numbers(text)))):
        if w.endswith("n't"):
            continue
        if "'" in w:
            w = W._CONTRACTION.sub("", w).replace("'", "")
        if w in W.NUMBER_WORDS:
            out.append(str(W.NUMBER_WORDS[w]))
        elif w not in W.STOPWORDS and w not in W.FILLERS and w not in W.LIGHT and w not in W._FREQUENCY_ADVERBS \
                and len(w) > 1:
            out.append(W.vstem(w))
    return out


EDGES = [
    "", " ", "The United States and the U.S. Army met the US Navy; us folks stayed.", "In the 1960's and 1870's.",
    "Eighty-four men — and twenty-one women – came “home”.", "Elvis Aaron Presley (January 8, 1935 – August 16, 1977)",
    "Café déjà vu ﬁne", "tab\there  two  spaces", "AT&T and U.S.A. & co", "June 7th, the 21st",
    "Thus, because of the house",
    "can't won't shan't ain't cannot he's", "東京の歴史資料", "United  States  of  America",
]


def _texts() -> list[str]:
    texts = list(EDGES)
    for path in sorted(SAMPLE_CORPUS.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                content = json.loads(line).get("content") or ""
                texts += [content[s:e] for s, e in sentence_spans(content)]
    data = EVAL
    for name in ("historian_claims_dev.jsonl", "halueval_qa_dev.jsonl", "begin_dev.jsonl", "wice_dev.jsonl"):
        path = data / name
        if path.exists():
            with path.open(encoding="utf-8") as fh:
                lines = fh.readlines()[:150]
            for line in lines:
                item = json.loads(line)
                texts.append(item.get("claim") or "")
                for doc in item.get("documents") or []:
                    texts += [s for s in re.split(r"(?<=[.!?])\s+", doc.get("content") or "")][:40]
    return texts


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


def test_normalize_is_unchanged(texts):
    assert len(texts) > 10_000
    for text in texts:
        assert W.normalize(text) == plain_normalize(text), text


def test_content_words_are_unchanged_and_each_call_gets_its_own_list(texts):
    for text in texts:
        assert W.content_words(text) == plain_content_words(text), text
    first = W.content_words("The railroads were built.")
    first.append("mutated")
    assert W.content_words("The railroads were built.") == plain_content_words("The railroads were built.")


def test_quantities_are_unchanged_and_each_call_gets_its_own_list(texts):
    plain = Q._quantities.__wrapped__
    for text in texts[:4000]:
        assert Q.quantities(text) == list(plain(text)), text
    found = Q.quantities("about 54 million dollars")
    found.append(None)
    assert Q.quantities("about 54 million dollars") == list(plain("about 54 million dollars"))
