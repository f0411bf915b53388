"""A static first-pass encoder distilled from the bundled MiniLM (``HISTORIAN_INDEX_ENCODER=static``).

Each WordPiece token of all-MiniLM-L6-v2 has one vector: the model's own sentence vector of that token alone
(``[CLS] token [SEP]``, mean-pooled), weighted down by how common the token is in period newspaper text (the smooth
inverse frequency a / (a + p), p counted on the January 1916 front pages); a text's vector is the normalized mean of
its tokens' vectors. Encoding is a table lookup: hundreds of times faster than the transformer, and worse at ranking
(the figures are in docs/search-index.md). Made by ``python tools/build_static_encoder.py``; shipped in
``index/encoder/static/`` (int8 per row, with its scale).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

STATIC_DIR = Path(__file__).with_name("encoder") / "static"
NAME = "all-MiniLM-L6-v2-static"
MAX_TOKENS = 512  # a text's first tokens averaged (chunks are shorter)


class StaticEncoder:
    """Texts to L2-normalized float32 vectors by averaging distilled token vectors."""

    def __init__(self, directory: Path = STATIC_DIR) -> None:
        from tokenizers import Tokenizer

        table = directory / "tokens.npz"
        if not table.is_file():
            raise FileNotFoundError(f"no static encoder at {directory}: run `python tools/build_static_encoder.py`")
        with np.load(table) as saved:
            self.vectors = saved["codes"].astype(np.float32) * saved["scales"][:, None]
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.name, self.dimension, self.device = NAME, int(self.vectors.shape[1]), "cpu"
        self._special = np.zeros(len(self.vectors), dtype=bool)
        for token in ("[CLS]", "[SEP]", "[PAD]", "[UNK]"):
            found = self.tokenizer.token_to_id(token)
            if found is not None and found < len(self._special):
                self._special[found] = True

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """An (n, dimension) float32 array of normalized vectors (``batch_size`` is ignored: there are no batches)."""
        out = np.zeros((len(texts), self.dimension), np.float32)
        for row, encoding in enumerate(self.tokenizer.encode_batch([str(t) for t in texts])):
            ids = np.asarray(encoding.ids[:MAX_TOKENS], dtype=np.int64)
            ids = ids[(ids < len(self.vectors))]
            ids = ids[~self._special[ids]]
            if len(ids):
                vector = self.vectors[ids].sum(axis=0)
                norm = np.linalg.norm(vector)
                out[row] = vector / norm if norm > 0 else vector
        return out
