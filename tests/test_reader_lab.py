"""The reader's training command (lab/reader/train.py) on a tiny made-up set: a run stopped and resumed ends with the
weights of a run never stopped, and the export is an int8 ONNX model with both heads that ONNX Runtime reads."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO

LAB = REPO / "lab" / "reader"
pytestmark = pytest.mark.skipif(not (LAB / "train.py").exists(), reason="lab/reader is not in this checkout")

PAIRS = [
    ("nli", "The mill closed in 1893 after the panic.", "The mill shut down in 1893.", "entails"),
    ("nli", "The mill closed in 1893 after the panic.", "The mill stayed open through 1893.", "contradicts"),
    ("nli", "The mill closed in 1893 after the panic.", "The mill employed three hundred men.", "neither"),
    ("nli", "Congress met in December.", "Congress did not meet in December.", "contradicts"),
    ("nli", "The steamer sank off Crete.", "The steamer sank.", "entails"),
    ("nli", "The steamer sank off Crete.", "Forty passengers were saved.", "not_entails"),
    ("answer", "When did the mill close?", "The mill closed in 1893 after the panic.", "answers"),
    ("answer", "When did the mill close?", "Its owners lived in Boston.", "not"),
    ("answer", "Who sank the steamer?", "A submarine sank the steamer without warning.", "answers"),
    ("answer", "Who sank the steamer?", "The steamer carried mail to India.", "not"),
]


def _data(folder: Path) -> Path:
    folder.mkdir(parents=True)
    rows = [{"id": f"toy-{n}", "task": t, "a": a, "b": b, "label": label,
             **({"unit": "sentence"} if t == "answer" else {})}
            for n, (t, a, b, label) in enumerate(PAIRS * 4)]
    with gzip.open(folder / "train.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return folder


def _train(argv: list[str]) -> dict:
    sys.path.insert(0, str(LAB))
    try:
        import train
    finally:
        sys.path.remove(str(LAB))
    parser_args = ["--batch", "4", "--max-tokens", "48", "--threads", "1", "--device", "cpu", "--save-every", "2",
                   "--log-every", "100", *argv]
    train.main(parser_args)
    return train


def test_a_stopped_and_resumed_run_ends_as_an_uninterrupted_one_and_exports(tmp_path, capsys):
    import torch

    data = _data(tmp_path / "data")
    train = _train(["--out", str(tmp_path / "whole"), "--data", str(data)])
    _train(["--out", str(tmp_path / "pieces"), "--data", str(data), "--stop-after-steps", "3"])
    stopped = torch.load(tmp_path / "pieces" / "checkpoint.pt", weights_only=False)
    assert stopped["step"] == 3
    _train(["--out", str(tmp_path / "pieces"), "--data", str(data)])  # the same command resumes
    whole = torch.load(tmp_path / "whole" / "checkpoint.pt", weights_only=False)
    pieces = torch.load(tmp_path / "pieces" / "checkpoint.pt", weights_only=False)
    assert whole["step"] == pieces["step"] == 10
    for name, tensor in whole["model"].items():
        assert torch.allclose(tensor, pieces["model"][name], atol=1e-5), name
    with pytest.raises(SystemExit, match="other settings"):
        _train(["--out", str(tmp_path / "pieces"), "--data", str(data), "--lr", "1e-3"])

    import onnxruntime as ort

    from historian_blueprint.verify import reader as S

    meta = train.export(tmp_path / "whole", tmp_path / "model", 48)
    assert (tmp_path / "model" / "model.onnx").stat().st_size < 30_000_000 and meta["heads"]["nli"][0] == "entails"
    session = ort.InferenceSession(str(tmp_path / "model" / "model.onnx"), providers=["CPUExecutionProvider"])
    tokenizer = S.load_tokenizer(tmp_path / "model" / "tokenizer.json", 48)
    ids, mask, types = S.encode(tokenizer, ["The steamer sank off Crete."] * 2, ["The steamer sank.", "It floated."])
    nli, answer = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    assert nli.shape == (2, 3) and answer.shape == (2,) and np.isfinite(nli).all()


def _swaps():
    sys.path.insert(0, str(LAB))
    try:
        import swaps
    finally:
        sys.path.remove(str(LAB))
    return swaps


def test_swapped_details_put_another_name_or_figure_of_the_passage_in_place_and_keep_the_side():
    swaps = _swaps()
    passage = ("Soul Food is a 1997 American film produced by Kenneth Edmonds and released by Fox 2000 Pictures. "
               "The National Basketball Association fined the club in 1997; 75 were hurt and 200 watched.")
    pair = {"id": "fever_nli-9", "task": "nli", "a": passage, "label": "entails", "source": "fever_nli", "group": "g9",
            "b": "Kenneth Edmonds produced Soul Food; 75 were hurt."}
    made = swaps.swapped([pair, {**pair, "id": "x", "source": "selqa"}, {**pair, "id": "y", "label": "neither"}],
                         "held")
    assert {m["source"] for m in made} == {"swap_names", "swap_figures"} and all(m["split"] == "held" for m in made)
    name = next(m for m in made if m["source"] == "swap_names")
    assert name["label"] == "neither" and name["b"] != pair["b"] and name["group"] == "g9"
    assert all(run in passage for _, _, run in swaps.names(name["b"]))  # every detail still held: only reading tells
    assert "American" not in name["b"] and "Fox 2000 Pictures" not in name["b"]  # no people's word; numbered name whole
    figure = next(m for m in made if m["source"] == "swap_figures")
    assert figure["label"] == "contradicts" and figure["b"].endswith("; 200 were hurt.")  # no year for a count
    assert swaps.swap_figure({**pair, "b": "Fox 2000 Pictures released it."}) is None  # a number inside a name
    nba = {**pair, "a": "The National Basketball Association fined the club.", "b": "The NBA fined the club."}
    assert swaps.swap_name(nba) is None  # its initials: the same name
