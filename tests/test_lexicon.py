"""The word lexicons derived from WordNet 3.0 ship with the package, hold the pairs the verifier relies on,
and are reproduced byte for byte by tools/build_lexicons.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

LEXICON = REPO / "historian_blueprint" / "verify" / "lexicon"
BUILD = REPO / "tools" / "build_lexicons.py"
WORDNET = Path("/usr/share/wordnet")
GENERATED = ("antonyms.json", "derivations.json", "words.json", "exceptions.json", "nouns.json", "verb_nouns.json",
             "LICENSE-WordNet.txt", "README.md")

# Opposites WordNet 3.0 links with a direct antonym pointer ("!").
ANTONYM_PAIRS = [
    ("increase", "decrease"), ("rise", "fall"), ("approve", "disapprove"), ("accept", "reject"),
    ("victory", "defeat"), ("import", "export"), ("north", "south"), ("minor", "major"),
    ("careful", "careless"), ("able", "unable"), ("legal", "illegal"), ("praise", "criticize"),
    ("strengthen", "weaken"), ("win", "lose"), ("buy", "sell"), ("friend", "foe"),
]
# Carried over derivation ("+") and adverb ("\\") pointers from a direct pair.
CARRIED_PAIRS = [("approval", "disapproval"), ("carefully", "carelessly"), ("buyer", "seller"), ("winner", "loser")]
# Everyday opposites WordNet 3.0 has no antonym pointer for.
ABSENT_PAIRS = [("friend", "enemy"), ("ally", "enemy")]


def load(name: str):
    with open(LEXICON / name, encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def antonyms() -> dict[str, list[str]]:
    return load("antonyms.json")


@pytest.fixture(scope="module")
def derivations() -> dict[str, list[str]]:
    return load("derivations.json")


@pytest.fixture(scope="module")
def words() -> list[str]:
    return load("words.json")


def test_every_file_is_there_and_the_json_parses():
    for name in GENERATED:
        assert (LEXICON / name).is_file(), name
    assert isinstance(load("antonyms.json"), dict)
    assert isinstance(load("derivations.json"), dict)
    assert isinstance(load("words.json"), list)
    assert isinstance(load("exceptions.json")["exceptions"], dict)


def test_the_files_stay_small():
    assert (LEXICON / "antonyms.json").stat().st_size < 400_000
    assert (LEXICON / "derivations.json").stat().st_size < 1_000_000
    assert (LEXICON / "words.json").stat().st_size < 2_000_000


@pytest.mark.parametrize("name", ["antonyms.json", "derivations.json"])
def test_the_relations_are_symmetric_sorted_single_words(name):
    table = load(name)
    assert list(table) == sorted(table)
    for word, others in table.items():
        assert re.fullmatch(r"[a-z]{3,}", word), word
        assert others == sorted(set(others)) and others, word
        assert word not in others, word
        for other in others:
            assert re.fullmatch(r"[a-z]{3,}", other), other
            assert word in table.get(other, []), f"{word} -> {other} but not back"


@pytest.mark.parametrize("a, b", ANTONYM_PAIRS + CARRIED_PAIRS)
def test_the_common_antonym_pairs_are_present_both_ways(antonyms, a, b):
    assert b in antonyms.get(a, []), (a, b)
    assert a in antonyms.get(b, []), (b, a)


@pytest.mark.parametrize("a, b", ABSENT_PAIRS)
def test_pairs_wordnet_lacks_are_not_invented(antonyms, a, b):
    assert b not in antonyms.get(a, [])


def test_a_derived_form_is_not_an_antonym_of_the_wrong_form(antonyms):
    # approve/disapprove carries to approval/disapproval, not approval/disapprover
    assert "disapprover" not in antonyms.get("approval", [])


def test_near_spellings_are_english_words(words):
    assert words == sorted(set(words))
    vocabulary = set(words)
    for word in ("infantry", "infant", "policy", "police", "university", "universe"):
        assert word in vocabulary, word
    assert all(re.fullmatch(r"[a-z]{3,}", w) for w in words)


def test_related_forms_are_linked(derivations):
    assert "approval" in derivations["approve"]
    assert "approve" in derivations["approval"]
    assert "infancy" in derivations["infant"]
    assert "policy" not in derivations.get("police", [])
    assert "infantry" not in derivations.get("infant", [])


def test_irregular_forms_map_to_their_lemmas():
    exceptions = load("exceptions.json")["exceptions"]
    assert "fall" in exceptions["fell"]
    assert exceptions["children"] == ["child"]
    assert sorted(exceptions["axes"]) == ["ax", "axis"]


def test_the_licence_ships_with_the_provenance():
    text = (LEXICON / "LICENSE-WordNet.txt").read_text(encoding="utf-8")
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in text
    assert "wordnet-base package version" in text
    assert "tools/build_lexicons.py" in text


@pytest.mark.skipif(not (WORDNET / "data.noun").exists(), reason="WordNet (Debian's wordnet-base) is not installed")
@pytest.mark.skipif(not BUILD.exists(), reason="tools/build_lexicons.py is not in this checkout")
def test_the_build_script_reproduces_the_shipped_files(tmp_path):
    subprocess.run(
        [sys.executable, str(BUILD), "--wordnet", str(WORDNET), "--out", str(tmp_path)],
        check=True, capture_output=True, text=True, cwd=REPO,
    )
    for name in GENERATED:
        assert (tmp_path / name).read_bytes() == (LEXICON / name).read_bytes(), name
