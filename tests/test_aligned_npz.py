"""Arrays the workers map (readings, BM25 postings) are written so that each starts on a 64-byte boundary, whatever
its size: an unaligned one would be copied whole by every search of it."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from historian_blueprint.resources import mapped_npz, save_aligned_npz


def arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"ids": rng.integers(0, 9, 1001, dtype=np.int32), "spans": rng.integers(0, 99, (37, 2), dtype=np.int32),
            "none": np.zeros(0, np.int64), "keys": np.frombuffer(b"k" * 160, np.uint8).reshape(-1, 16),
            "offsets": np.cumsum(rng.integers(0, 5, 3_000_003)).astype(np.int64)}


@pytest.mark.parametrize("zip64_from", [zipfile.ZIP64_LIMIT, 1000])
def test_every_member_is_mapped_aligned_and_reads_back(tmp_path, monkeypatch, zip64_from):
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", zip64_from)  # 1000: every member but the smallest in ZIP64 form
    given = arrays()
    save_aligned_npz(tmp_path / "a.npz", **given)
    mapped = mapped_npz(tmp_path / "a.npz")
    loaded = np.load(tmp_path / "a.npz")
    for name, array in given.items():
        assert np.array_equal(mapped[name], array) and np.array_equal(loaded[name], array), name
        if array.size:
            assert isinstance(mapped[name], np.memmap) and mapped[name].offset % 64 == 0, name


def test_an_array_of_objects_is_refused(tmp_path):
    with pytest.raises(ValueError, match="objects"):
        save_aligned_npz(tmp_path / "a.npz", words=np.array(["a", None], dtype=object))


def test_a_single_value_keeps_its_shape(tmp_path):
    save_aligned_npz(tmp_path / "a.npz", count=np.int64(7), fingerprint=np.frombuffer(b"v1", np.uint8))
    loaded = np.load(tmp_path / "a.npz")
    assert loaded["count"].shape == () and int(loaded["count"]) == 7 and bytes(loaded["fingerprint"]) == b"v1"
