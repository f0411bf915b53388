"""Build the reader's training data from lab/reader/sources/: train / held split, overlap check, manifest.

    python lab/reader/build_data.py

Reads only `lab/reader/sources/*.jsonl.gz` and `sources/PROVENANCE.json` (fetches nothing) and writes
`lab/reader/data/{train,held}.jsonl.gz` and `lab/reader/data/MANIFEST.json`. Deterministic: the same
sources and the same evaluation files give byte-identical outputs.

Held-out: 5% per source, chosen by SHA-256 of "<set>:<group>" where group is the record's `group`
(a question, an article, a premise or claim: every pair sharing it lands on the same side) or, when a
record has none, its id.

Overlap check: a pair is dropped when its `a` or `b`, normalised (lowercased, whitespace collapsed),
equals a text from the project's evaluation files, or contains one of their 12-word shingles, or (a text
of 8-11 words, too short to hold a shingle) lies whole inside one of them. Shingles
are taken over alphanumeric words, so punctuation and tokenisation ("ca n't", "Edmonds ,") do not hide
a match. Every string value in every record of those files counts as a text. The evaluation files are
read as they are when this runs, sealed ones included; nothing of their content is printed or written,
only their names, hashes and counts.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

import swaps

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SOURCES = HERE / "sources"
OUT = HERE / "data"
HELD_PER_10000 = 500
SHINGLE = 12
CONTAINED_MIN = 8  # a training text of 8-11 words found whole inside an evaluation text is dropped too
EVAL_GLOBS = [
    ROOT / "tests/data/eval",
    ROOT / "tests/data/sealed",
    ROOT / "tests/data",
    ROOT.parent / "shared/data/eval",
]
EVAL_SUFFIXES = (".jsonl", ".json")

_WS = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier for the rolling shingle hash


def normalise(text: str) -> str:
    return _WS.sub(" ", text.lower()).strip()


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


# ---- reading ------------------------------------------------------------------------------------

def read_jsonl_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl_gz(path: Path, records: Iterable[dict]) -> None:
    """Deterministic gzip: no file name, no mtime."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        for r in records:
            gz.write((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8"))
    path.write_bytes(buf.getvalue())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def strings_in(value) -> Iterator[str]:
    """Every string anywhere inside a parsed JSON value (keys excluded)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def eval_files() -> list[Path]:
    seen, files = set(), []
    for folder in EVAL_GLOBS:
        if not folder.is_dir():
            continue
        for p in sorted(folder.iterdir()):
            if p.is_file() and p.suffix in EVAL_SUFFIXES and p.resolve() not in seen:
                seen.add(p.resolve())
                files.append(p)
    return files


def eval_texts(path: Path) -> list[str]:
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            return list(strings_in(json.loads(raw)))
        except json.JSONDecodeError:
            pass
    texts = []
    for line in raw.split("\n"):
        if not line.strip():
            continue
        try:
            texts += list(strings_in(json.loads(line)))
        except json.JSONDecodeError:
            texts.append(line)
    return texts


# ---- shingles -----------------------------------------------------------------------------------

class Shingler:
    """Hash every 12-word window of many texts at once (64-bit polynomial hash over word hashes)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}

    def _word_hash(self, w: str) -> int:
        h = self.vocab.get(w)
        if h is None:
            h = int.from_bytes(hashlib.blake2b(w.encode("utf-8"), digest_size=8).digest(), "little")
            self.vocab[w] = h
        return h

    def windows(self, texts: list[str], width: int = SHINGLE) -> tuple[np.ndarray, np.ndarray]:
        """Return (hashes, owner): one hash per `width`-word window, owner = index of its text."""
        ids, owner = [], []
        for i, t in enumerate(texts):
            ws = words(t)
            if len(ws) >= width:
                ids.extend(self._word_hash(w) for w in ws)
                owner.extend([i] * len(ws))
        if not ids:
            return np.zeros(0, np.uint64), np.zeros(0, np.int64)
        tok = np.array(ids, dtype=np.uint64)
        own = np.array(owner, dtype=np.int64)
        n = len(tok) - width + 1
        if n <= 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.int64)
        h = np.zeros(n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for k in range(width):
                h = h * _BASE + tok[k:k + n]
        inside = own[:n] == own[width - 1:]  # the window does not cross into the next text
        return h[inside] & _MASK, own[:n][inside]


class OverlapIndex:
    """The evaluation side: normalised texts and 12-word shingles, each remembering its first file."""

    def __init__(self, files: list[Path], shingler: Shingler) -> None:
        self.files = files
        self.exact: dict[str, int] = {}
        self.report = []
        hashes, file_ids = [], []
        short: dict[int, list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
        for fi, path in enumerate(files):
            texts = [t for t in eval_texts(path) if t.strip()]
            for width in range(CONTAINED_MIN, SHINGLE):
                hw, _ = shingler.windows(texts, width)
                short[width].append((hw, np.full(len(hw), fi, dtype=np.int64)))
            for t in texts:
                self.exact.setdefault(normalise(t), fi)
                ws = words(t)
                if ws:
                    self.exact.setdefault(" ".join(ws), fi)
            h, _ = shingler.windows(texts)
            hashes.append(h)
            file_ids.append(np.full(len(h), fi, dtype=np.int64))
            self.report.append({"path": os.path.relpath(path, ROOT), "sha256": sha256(path),
                                "texts": len(texts), "shingles": int(len(np.unique(h)))})
        allh = np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)
        allf = np.concatenate(file_ids) if file_ids else np.zeros(0, np.int64)
        self.hashes, first = np.unique(allh, return_index=True)
        self.hash_file = allf[first]
        self.short = {}
        for width, parts in short.items():
            hw = np.concatenate([p[0] for p in parts])
            fw = np.concatenate([p[1] for p in parts])
            uniq, first = np.unique(hw, return_index=True)
            self.short[width] = (uniq, fw[first])

    @staticmethod
    def _lookup(table: np.ndarray, files: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of h are in the sorted table, and the first evaluation file of each found one."""
        if not len(table) or not len(h):
            return np.zeros(len(h), bool), np.zeros(0, np.int64)
        pos = np.searchsorted(table, h).clip(0, len(table) - 1)
        found = table[pos] == h
        return found, files[pos[found]]

    def match(self, texts: list[str], shingler: Shingler) -> dict[int, tuple[str, int]]:
        """Map text index -> (reason, eval file index) for every text that overlaps."""
        hits: dict[int, tuple[str, int]] = {}
        for i, t in enumerate(texts):
            fi = self.exact.get(normalise(t))
            if fi is None:
                fi = self.exact.get(" ".join(words(t)))
            if fi is not None:
                hits[i] = ("equal", fi)
        h, own = shingler.windows(texts)
        found, fis = self._lookup(self.hashes, self.hash_file, h)
        for o, fi in zip(own[found].tolist(), fis.tolist()):
            hits.setdefault(o, ("shingle", fi))
        for width, (table, files) in self.short.items():
            sized = [t if len(words(t)) == width else "" for t in texts]
            h, own = shingler.windows(sized, width)
            found, fis = self._lookup(table, files, h)
            for o, fi in zip(own[found].tolist(), fis.tolist()):
                hits.setdefault(o, ("contained", fi))
        return hits


# ---- the build ----------------------------------------------------------------------------------

def held_out(source: str, rec: dict) -> bool:
    key = f"{source}:{rec.get('group') or rec['id']}"
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 10000 < HELD_PER_10000


def build() -> dict:
    provenance = json.loads((SOURCES / "PROVENANCE.json").read_text())
    paths = sorted(SOURCES.glob("*.jsonl.gz"))
    sources = {p.name[: -len(".jsonl.gz")]: p for p in paths}
    unknown = set(sources) - set(provenance)
    if unknown:
        raise SystemExit(f"sources without provenance (run convert_sources.py): {sorted(unknown)}")

    shingler = Shingler()
    index = OverlapIndex(eval_files(), shingler)
    records = {name: read_jsonl_gz(p) for name, p in sources.items()}

    # One pass over every distinct text of every source.
    texts = sorted({t for recs in records.values() for r in recs for t in (r["a"], r["b"])})
    text_pos = {t: i for i, t in enumerate(texts)}
    hits = index.match(texts, shingler)

    check_pairs = {(r["task"], r["a"], r["b"]) for name, recs in records.items()
                   if provenance[name]["role"] == "check" for r in recs}

    out = {"train": [], "held": []}
    per_source, file_drops = {}, Counter()
    seen_pairs: set[tuple] = set()
    for name in sorted(records):
        prov, recs = provenance[name], records[name]
        entry = {k: prov[k] for k in ("repository", "commit", "commit_date", "paths", "licence",
                                      "licence_found_in", "role") if k in prov}
        if "extra_commits" in prov:
            entry["extra_commits"] = prov["extra_commits"]
        entry.update({"file": str(sources[name].relative_to(ROOT)), "sha256": sha256(sources[name]),
                      "bytes": sources[name].stat().st_size, "pairs_in_file": len(recs),
                      "converter": {k: prov[k] for k in ("pairs_read", "duplicates_dropped",
                                                         "conflicting_labels_dropped")}})
        dropped, labels = Counter(), defaultdict(Counter)
        splits = defaultdict(Counter)
        for r in recs:
            hit = hits.get(text_pos[r["a"]]) or hits.get(text_pos[r["b"]])
            if hit:
                dropped[f"overlap_{hit[0]}"] += 1
                file_drops[hit[1]] += 1
                continue
            if prov["role"] == "check":
                labels["check"][r["label"]] += 1
                splits[r.get("split", "")]["check"] += 1
                continue
            key = (r["task"], r["a"], r["b"])
            if key in check_pairs:
                dropped["equals_check_pair"] += 1
                continue
            if key in seen_pairs:
                dropped["duplicate_of_earlier_source"] += 1
                continue
            seen_pairs.add(key)
            side = "held" if held_out(name, r) else "train"
            out[side].append({**r, "source": name})
            labels[side][r["label"]] += 1
            splits[r.get("split", "")][side] += 1
        tasks = sorted({r["task"] for r in recs})
        entry.update({"tasks": tasks, "dropped": dict(sorted(dropped.items())),
                      "pairs": {side: sum(c.values()) for side, c in sorted(labels.items())},
                      "labels": {side: dict(sorted(c.items())) for side, c in sorted(labels.items())},
                      "by_original_split": {s: dict(sorted(c.items())) for s, c in sorted(splits.items())}})
        per_source[name] = entry

    # Swapped details (swaps.py): made from each side's own entailed pairs, so a held pair's swap stays held.
    for side in ("train", "held"):
        made = swaps.swapped(out[side], side)
        out[side] += made
        for kind in sorted({r["source"] for r in made}):
            mine = [r for r in made if r["source"] == kind]
            entry = per_source.setdefault(kind, {
                "derived_from": list(swaps.FROM), "command": "lab/reader/swaps.py (called by build_data.py)",
                "licence": "that of the pair each is made from (see its source)", "role": "train",
                "bytes": 0, "pairs_in_file": 0, "dropped": {}, "pairs": {}, "labels": {}})
            entry["pairs_in_file"] += len(mine)
            entry["pairs"][side] = len(mine)
            entry["labels"][side] = dict(Counter(r["label"] for r in mine))

    OUT.mkdir(parents=True, exist_ok=True)
    outputs = {}
    for side in ("train", "held"):
        path = OUT / f"{side}.jsonl.gz"
        write_jsonl_gz(path, out[side])
        by = Counter((r["task"], r["label"]) for r in out[side])
        outputs[side] = {"file": str(path.relative_to(ROOT)), "sha256": sha256(path), "bytes": path.stat().st_size,
                         "pairs": len(out[side]),
                         "by_task": {t: {lab: n for (tt, lab), n in sorted(by.items()) if tt == t}
                                     for t in sorted({t for t, _ in by})}}

    overlap_files = []
    for fi, rep in enumerate(index.report):
        overlap_files.append({**rep, "pairs_dropped": file_drops.get(fi, 0)})
    manifest = {
        "command": "python lab/reader/build_data.py",
        "held_rule": f"{HELD_PER_10000 / 100:g}% per source: sha256('<set>:<group or id>') mod 10000 < "
                     f"{HELD_PER_10000}",
        "overlap_rule": (f"drop a pair if a or b, lowercased with whitespace collapsed (or as its alphanumeric "
                         f"words), equals an evaluation text, contains one of its {SHINGLE}-word shingles, or "
                         f"({CONTAINED_MIN}-{SHINGLE - 1} words long) lies whole inside an evaluation text"),
        "licence_note": "see lab/reader/SOURCES.md; share-alike sets (snli, mnli_sample, fever_nli, boolq) make "
                        "train/held.jsonl.gz CC BY-SA 4.0 as a whole; anli_dev_check is CC BY-NC 4.0: check only",
        "sources": per_source,
        "outputs": outputs,
        "overlap_check": {
            "eval_files": overlap_files,
            "eval_texts": sum(r["texts"] for r in index.report),
            "eval_shingles": int(len(index.hashes)),
            "pairs_dropped": sum(sum(v for k, v in s["dropped"].items() if k.startswith("overlap_"))
                                 for s in per_source.values()),
            "pairs_dropped_by_source": {n: sum(v for k, v in s["dropped"].items() if k.startswith("overlap_"))
                                        for n, s in per_source.items()},
        },
        "totals": {"train": outputs["train"]["pairs"], "held": outputs["held"]["pairs"],
                   "sources_bytes": sum(s["bytes"] for s in per_source.values())},
    }
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return manifest


def summary(m: dict) -> str:
    rows = [f"{'set':20s} {'role':5s} {'in':>6s} {'train':>6s} {'held':>5s} {'overlap':>7s} {'dup':>4s}"]
    for name, s in m["sources"].items():
        d = s["dropped"]
        ov = sum(v for k, v in d.items() if k.startswith("overlap_"))
        dup = d.get("duplicate_of_earlier_source", 0) + d.get("equals_check_pair", 0)
        tr = s["pairs"].get("train", s["pairs"].get("check", 0))
        rows.append(f"{name:20s} {s['role']:5s} {s['pairs_in_file']:6d} {tr:6d} {s['pairs'].get('held', 0):5d} "
                    f"{ov:7d} {dup:4d}")
    rows.append(f"train {m['totals']['train']}  held {m['totals']['held']}  "
                f"sources {m['totals']['sources_bytes'] / 1e6:.1f} MB; overlap dropped "
                f"{m['overlap_check']['pairs_dropped']} against {len(m['overlap_check']['eval_files'])} files")
    return "\n".join(rows)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    print(summary(build()))


if __name__ == "__main__":
    main()
