"""What a build's encoder costs in recall: measured when the vectors are not the exact model's on a CPU.

The int8 graph, the static first-pass encoder and an encoder on a GPU (other kernels, other rounding) give vectors
near the exact model's but not the same, so a build made with one reports how far its search is from the exact
model's: on a sample of the chunks it encoded (spread evenly over them), each encoded again by the exact model on the
CPU, a phrase from every tenth of them is searched in the sample by both (the chunk it was cut from left out: both
find it), and the share of the exact model's top 10 that the build's top 10 holds is its ``recall_at_10``;
``cosine`` is the mean cosine of a chunk's two vectors (the lowest twentieth too). It is a measure of agreement
with the exact model on this collection, not of answers: how each encoder ranks the passages that answer
historians' questions is `historian bench retrieval --encoder`.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from historian_blueprint.index import embedding

log = logging.getLogger(__name__)
K = 10
PROBE_WORDS = 12  # a probe is this many words from a third of the way into a sampled chunk


def needed(encoder: str, embedder: Any) -> bool:
    """Whether a build by this encoder setting and embedder gives vectors other than the exact model's on a CPU."""
    return encoder in embedding.APPROXIMATE or getattr(embedder, "device", "cpu") != "cpu"


def probe(text: str) -> str:
    words = text.split()
    first = len(words) // 3
    return " ".join(words[first:first + PROBE_WORDS]) or text[:80]


def sample(n: int, size: int) -> np.ndarray:
    """``size`` rows of ``n`` spread evenly over them (all of them when there are fewer)."""
    return np.unique(np.linspace(0, n - 1, num=min(n, size)).round().astype(np.int64)) if n else np.zeros(0, np.int64)


def measure(texts: list[str], vectors: np.ndarray, embedder: Any, reference: Any, batch_size: int = 32
            ) -> dict[str, Any]:
    """Compare the build's ``vectors`` of ``texts`` (by ``embedder``) with ``reference``'s (the exact model on the
    CPU); see the module's note."""
    built = np.asarray(vectors, dtype=np.float32)
    exact = np.asarray(reference.encode(texts, batch_size=batch_size), dtype=np.float32)
    cosine = np.sum(built * exact, axis=1) / np.maximum(
        np.linalg.norm(built, axis=1) * np.linalg.norm(exact, axis=1), 1e-12)
    sources = list(range(0, len(texts), 10))
    phrases = [probe(texts[i]) for i in sources]
    k = min(K, len(texts) - 1)
    by_build = np.asarray(embedder.encode(phrases, batch_size=batch_size), dtype=np.float32) @ built.T
    by_exact = np.asarray(reference.encode(phrases, batch_size=batch_size), dtype=np.float32) @ exact.T
    rows = np.arange(len(sources))
    by_build[rows, sources] = by_exact[rows, sources] = -np.inf  # the chunk a phrase was cut from: found by both
    held = [len(set(np.argsort(-b, kind="stable")[:k]) & set(np.argsort(-e, kind="stable")[:k])) / k
            for b, e in zip(by_build, by_exact)]
    return {
        "encoder": embedder.name, "device": getattr(embedder, "device", "cpu"),
        "against": f"{reference.name} on the CPU", "chunks": len(texts), "probes": len(phrases), "k": k,
        "recall_at_10": round(float(np.mean(held)), 3),
        "cosine": round(float(np.mean(cosine)), 4), "cosine_p05": round(float(np.percentile(cosine, 5)), 4),
    }


def of_build(sample_size: int, encoder: str, embedder: Any, texts_of: dict[str, list[str]],
             vectors_of: dict[str, np.ndarray], earlier: dict[str, Any] | None, reference: Any
             ) -> dict[str, Any] | None:
    """A build's check (None when its vectors are the exact model's, or ``sample_size`` is 0): measured on up to
    ``sample_size`` of the chunks it encoded (``texts_of``/``vectors_of``: what was embedded, per document), or the
    serving generation's (``earlier``) kept when it was made by the same encoder on the same device and this build
    encoded fewer chunks than a sample. ``reference``: makes the exact model on the CPU, called only when measuring."""
    if not sample_size or not needed(encoder, embedder):
        return None
    device = getattr(embedder, "device", "cpu")
    same = (bool(earlier) and earlier.get("encoder") == embedder.name and earlier.get("device") == device
            and "error" not in earlier)  # a check that could not be made is made again
    chunks = [(source_id, i) for source_id, vectors in vectors_of.items() for i in range(len(vectors))]
    if same and len(chunks) < sample_size:
        return dict(earlier)  # type: ignore[arg-type]
    if len(chunks) <= K:
        return None
    picked = [chunks[r] for r in sample(len(chunks), sample_size)]
    texts = [texts_of[source_id][i] for source_id, i in picked]
    vectors = np.stack([vectors_of[source_id][i] for source_id, i in picked])
    try:
        return measure(texts, vectors, embedder, reference())
    except Exception as exc:  # a report that could not be made does not fail the build: it says so
        log.warning("Historian: the encoder's agreement with the exact model was not measured: %s", exc)
        return {"encoder": embedder.name, "device": device, "error": f"not measured: {type(exc).__name__}: {exc}"}


def for_build(settings: Any, embedder: Any, texts_of: dict[str, list[str]], encoded: Any,
              earlier: dict[str, Any] | None) -> dict[str, Any] | None:
    """``of_build`` for a reindex: its settings (``IndexSettings``), what it encoded (``encoding.Encoded``), the
    serving generation's check; the reference is the exact model on the CPU (the one that compares meanings, when
    that one runs there: one model in memory)."""
    def reference() -> Any:
        found = embedding.get_embedder(settings.model_path, "exact", settings.encoder_cache, settings.device)
        if getattr(found, "device", "cpu") == "cpu":
            return found
        return embedding.get_embedder(settings.model_path, "exact", settings.encoder_cache, "cpu")

    vectors_of = {s: v for s, v in encoded.vectors.items() if s not in encoded.broken}
    return of_build(settings.encoder_check, settings.encoder, embedder, texts_of, vectors_of, earlier, reference)
