"""A judge that learns from your labels: grades predicted by a small model fitted on human
labels (``ragmeter judge learn``), used like any judge (``ragmeter judge relevance --learned``).

After Gienapp et al., "Topic-specific classifiers are better relevance judges than prompted
LLMs" (ECIR 2026): a small model per topic, fitted on one assessor's labels, ranks systems
much as the assessor would. ragmeter's version is deliberately plain — no PyTorch:

- **Features** of a (query, passage) pair, from the all-MiniLM-L6-v2 embeddings ``q`` and
  ``p`` of the ``models`` extra (unit length): their cosine ``q·p``, the element-wise product
  ``q ⊙ p`` (384 numbers: which directions of meaning the two share) and the query-term
  overlap (the share of the query's distinct words, lower-cased, found in the passage).
- **Learner**: ordinal ridge regression on the grade — ``ŝ = w·x + b`` fitted by least
  squares with penalty ``alpha·‖w‖²`` (scikit-learn's ``Ridge``, Cholesky solver, of the
  ``learn`` extra) — and the grade is ``ŝ`` cut at cut points fitted so that the training
  pairs' predicted grades have the training grades' distribution (:func:`distribution_cuts`;
  on the training labels' scale).
- **Pooled or per topic**: one pooled model on every label; with ``per_topic``, each topic
  with at least ``min_labels`` labels also gets its own *topic adapter*, a second ridge model
  (penalty ``adapter_alpha``, on the cosine and the overlap only: a few dozen labels of one
  query cannot fit 386 weights) fitted on that topic's residuals ``grade − ŝ_pooled``; its
  grades are ``round(ŝ_pooled + ŝ_adapter)``. Topics with fewer labels, and queries never
  seen in training, are graded by the pooled model alone. An adapter is found by the
  SHA-256 of its query's text, so the judge needs nothing but the (query, passage) texts.

The fitted model is a directory (:func:`save_model`, :func:`load_model`): ``manifest.json``
(format version, scale, features, learner and its parameters, the adapters, the training
labels' count and SHA-256, the arrays' SHA-256) and two ``.npy`` arrays (``coef.npy``: one row
of weights per model, the pooled model first; ``intercept.npy``) — no pickle: loading runs no
code, and every field is checked. Fitting is deterministic: the same labels and texts give a
byte-identical directory, and the same grades.

Fitting needs scikit-learn (the ``learn`` extra); predicting needs only numpy and the
encoder (the ``models`` extra).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragmeter.errors import InputError, RagmeterError
from ragmeter.judges.learned_defaults import (
    DEFAULT_ADAPTER_ALPHA,
    DEFAULT_ALPHA,
    DEFAULT_MIN_LABELS,
)
from ragmeter.judges.offline import EmbeddingJudge

if TYPE_CHECKING:
    from ragmeter.core.provenance import LabelSource
    from ragmeter.pipeline.embeddings import MiniLMEncoder

__all__ = [
    "DEFAULT_ADAPTER_ALPHA",
    "DEFAULT_ALPHA",
    "DEFAULT_MIN_LABELS",
    "FEATURES",
    "FORMAT_VERSION",
    "LearnedJudge",
    "LearnedModel",
    "TrainingSet",
    "distribution_cuts",
    "fit_model",
    "grades_from_cuts",
    "load_model",
    "pair_features",
    "predict_grades",
    "save_model",
    "training_set",
]

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
COEF = "coef.npy"
INTERCEPT = "intercept.npy"
LEARNER = "ridge"
EMBEDDING_DIM = 384
#: the feature names, in column order (the product is 384 columns)
FEATURES: tuple[str, ...] = (
    "minilm-cosine",
    f"minilm-product[{EMBEDDING_DIM}]",
    "query-term-overlap",
)
N_FEATURES = EMBEDDING_DIM + 2
#: the columns a topic adapter uses: the cosine and the query-term overlap
ADAPTER_COLUMNS: tuple[int, ...] = (0, N_FEATURES - 1)

_WORD = re.compile(r"\w+")

FloatArray = npt.NDArray[np.float64]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def term_overlap(query: str, passage: str) -> float:
    """The share of the query's distinct lower-cased words (``\\w+``) found in the passage.

    >>> term_overlap("Cheap tram pass", "the annual pass is cheap")
    0.6666666666666666
    """
    words = set(_WORD.findall(query.lower()))
    if not words:
        return 0.0
    return len(words & set(_WORD.findall(passage.lower()))) / len(words)


def pair_features(
    pairs: Sequence[tuple[str, str]], *, encoder: MiniLMEncoder | None = None
) -> FloatArray:
    """The feature matrix (one row per (query, passage) text pair, columns :data:`FEATURES`);
    each distinct text is embedded once."""
    if not pairs:
        return np.empty((0, N_FEATURES), dtype=np.float64)
    if encoder is None:
        from ragmeter.pipeline.embeddings import MiniLMEncoder

        encoder = MiniLMEncoder()
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    index = {t: i for i, t in enumerate(texts)}
    vectors = np.asarray(encoder.encode(texts), dtype=np.float64)
    q = vectors[[index[a] for a, _ in pairs]]
    p = vectors[[index[b] for _, b in pairs]]
    product = q * p
    cosine = product.sum(axis=1, keepdims=True)
    overlap = np.array([[term_overlap(a, b)] for a, b in pairs], dtype=np.float64)
    return np.hstack([cosine, product, overlap])


# -- the training labels ---------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingSet:
    """Human labels with their texts: ``pairs[i]`` = (query id, doc id), ``texts[i]`` =
    (query text, passage text), ``grades[i]`` its grade. ``sha256`` identifies the labels
    (the sorted ``qid docid grade`` lines), ``scale`` is (lowest, highest) grade."""

    pairs: tuple[tuple[str, str], ...]
    texts: tuple[tuple[str, str], ...]
    grades: tuple[int, ...]

    @property
    def sha256(self) -> str:
        lines = sorted(f"{q} {d} {g}\n" for (q, d), g in zip(self.pairs, self.grades, strict=True))
        return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()

    @property
    def scale(self) -> tuple[int, int]:
        return min(self.grades), max(self.grades)

    @property
    def topics(self) -> list[str]:
        return list(dict.fromkeys(q for q, _ in self.pairs))

    def __len__(self) -> int:
        return len(self.grades)


def training_set(
    labels: Mapping[str, Mapping[str, int]],
    queries: Mapping[str, str],
    corpus: Mapping[str, str],
    *,
    source: str = "qrels",
) -> TrainingSet:
    """The labelled pairs of ``labels`` (``{qid: {docid: grade}}``; a grade < 0, pooled but
    unjudged, is left out) with their texts, sorted by (qid, docid) so that the same labels
    in any order give the same model. Raises :class:`InputError` naming ``source`` when a
    query or passage has no text, or when fewer than two grades are seen."""
    pairs, texts, grades = [], [], []
    for q in sorted(labels):
        for d in sorted(labels[q]):
            grade = int(labels[q][d])
            if grade < 0:
                continue
            if q not in queries:
                raise InputError(f"no text for query '{q}'", source="queries", field="id")
            if d not in corpus:
                raise InputError(f"no text for passage '{d}'", source="corpus", field="id")
            pairs.append((q, d))
            texts.append((queries[q], corpus[d]))
            grades.append(grade)
    if len(set(grades)) < 2:
        raise InputError(
            f"a judge learns from at least two different grades; {source} has "
            f"{len(grades)} label(s) and grades {sorted(set(grades))}",
            source=source,
            field="grade",
        )
    return TrainingSet(tuple(pairs), tuple(texts), tuple(grades))


# -- the model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    """A topic adapter: its row in the arrays, its topic id and query text's SHA-256, and
    the labels it was fitted on."""

    row: int
    topic: str
    query_sha256: str
    labels: int


@dataclass(frozen=True)
class LearnedModel:
    """A fitted learned judge (see the module docstring); ``coef[0]``/``intercept[0]`` are
    the pooled model, each adapter's row its own."""

    scale: tuple[int, int]
    coef: FloatArray
    intercept: FloatArray
    training_labels: int
    training_sha256: str
    topics: int
    per_topic: bool
    min_labels: int
    alpha: float
    adapter_alpha: float
    adapters: tuple[Adapter, ...] = ()
    #: the score cut points between grades lo|lo+1, …, hi−1|hi (see :func:`distribution_cuts`)
    cuts: tuple[float, ...] = ()
    _by_query: dict[str, Adapter] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_query.update({a.query_sha256: a for a in self.adapters})

    @property
    def learner(self) -> str:
        """The learner and its parameters, e.g. ``ridge(alpha=0.1, adapter_alpha=1)``."""
        params = f"alpha={self.alpha:g}"
        if self.per_topic:
            params += f", adapter_alpha={self.adapter_alpha:g}"
        return f"{LEARNER}({params})"

    @property
    def scope(self) -> str:
        """``pooled`` or ``per-topic: adapters for A of T topics (≥ N labels), pooled
        elsewhere``."""
        if not self.per_topic:
            return "pooled"
        return (
            f"per-topic: adapters for {len(self.adapters)} of {self.topics} topics "
            f"(≥ {self.min_labels} labels), pooled elsewhere"
        )

    def manifest(self) -> dict[str, Any]:
        """The JSON manifest (without the arrays' hashes, which :func:`save_model` adds)."""
        return {
            "ragmeter_learned_judge": FORMAT_VERSION,
            "scale": list(self.scale),
            "cuts": list(self.cuts),
            "features": list(FEATURES),
            "learner": LEARNER,
            "params": {"alpha": self.alpha, "adapter_alpha": self.adapter_alpha},
            "per_topic": self.per_topic,
            "min_labels": self.min_labels,
            "training_labels": self.training_labels,
            "training_sha256": self.training_sha256,
            "topics": self.topics,
            "adapters": [
                {"row": a.row, "topic": a.topic, "query_sha256": a.query_sha256, "labels": a.labels}
                for a in self.adapters
            ],
        }

    @property
    def sha256(self) -> str:
        """SHA-256 of the manifest and both arrays: the model's identity in caches."""
        digest = hashlib.sha256(json.dumps(self.manifest(), sort_keys=True).encode())
        digest.update(_npy_bytes(self.coef))
        digest.update(_npy_bytes(self.intercept))
        return digest.hexdigest()

    def adapter_for(self, query: str) -> Adapter | None:
        return self._by_query.get(text_sha256(query))

    def scores(self, features: FloatArray, queries: Sequence[str]) -> FloatArray:
        """The continuous score ŝ of each row (pooled, plus the query's adapter if any)."""
        out: FloatArray = features @ self.coef[0] + self.intercept[0]
        for i, query in enumerate(queries):
            adapter = self.adapter_for(query)
            if adapter is not None:
                out[i] += features[i] @ self.coef[adapter.row] + self.intercept[adapter.row]
        return out

    def grades(self, features: FloatArray, queries: Sequence[str]) -> list[int]:
        """Grades: the scores cut at :attr:`cuts` (:func:`grades_from_cuts`)."""
        return grades_from_cuts(self.scores(features, queries), self.cuts, self.scale[0])


def grades_from_cuts(scores: FloatArray, cuts: Sequence[float], lowest: int) -> list[int]:
    """``lowest + #{c ∈ cuts : c ≤ s}`` of each score ``s`` (cuts ascending).

    >>> grades_from_cuts(np.array([0.2, 1.5, 2.49, 9.0]), (1.0, 1.5, 3.0), 1)
    [1, 3, 3, 4]
    """
    return [lowest + int(k) for k in np.searchsorted(np.asarray(cuts), scores, side="right")]


def distribution_cuts(
    scores: FloatArray, grades: Sequence[int], scale: tuple[int, int]
) -> tuple[float, ...]:
    """The cut points that give the training scores the training grades' distribution: the
    cut between grade g and g+1 is the ``P(grade ≤ g)`` quantile of the scores (numpy's
    linear interpolation), for g = lo … hi−1.

    >>> cuts = distribution_cuts(np.array([0.0, 1.0, 2.0, 3.0, 4.0]), [1, 1, 2, 3, 3], (1, 3))
    >>> [round(c, 9) for c in cuts]     # the 2/5 and 3/5 quantiles: 4·0.4, 4·0.6
    [1.6, 2.4]
    """
    y = np.asarray(grades)
    shares = np.cumsum([np.mean(y == g) for g in range(scale[0], scale[1])])
    return tuple(float(c) for c in np.quantile(scores, np.minimum(shares, 1.0)))


def _ridge(x: FloatArray, y: FloatArray, alpha: float) -> tuple[FloatArray, float]:
    """Ridge weights and intercept (scikit-learn, Cholesky: exact and deterministic)."""
    try:
        from sklearn.linear_model import Ridge
    except ImportError:
        from ragmeter.errors import install_hint

        raise RagmeterError(
            f"fitting a learned judge needs scikit-learn; {install_hint('learn')}"
        ) from None
    model = Ridge(alpha=alpha, solver="cholesky").fit(x, y)
    return np.asarray(model.coef_, dtype=np.float64), float(model.intercept_)


def fit_model(
    features: FloatArray,
    grades: Sequence[int],
    topics: Sequence[str],
    queries: Sequence[str],
    *,
    per_topic: bool = True,
    min_labels: int = DEFAULT_MIN_LABELS,
    alpha: float = DEFAULT_ALPHA,
    adapter_alpha: float = DEFAULT_ADAPTER_ALPHA,
    scale: tuple[int, int] | None = None,
    training_sha256: str = "",
    adapter_topics: Collection[str] | None = None,
) -> LearnedModel:
    """Fit the pooled model on every row of ``features``, then (``per_topic``) an adapter for
    each topic with ≥ ``min_labels`` rows on its residuals (``adapter_topics``: for these
    topics instead, whatever their count — cross-validation keeps the final model's).
    ``topics[i]``/``queries[i]``: the topic id and query text of row i. ``scale`` defaults
    to the grades' range."""
    y = np.asarray(grades, dtype=np.float64)
    scale = scale or (int(y.min()), int(y.max()))
    w, b = _ridge(features, y, alpha)
    rows, intercepts, adapters = [w], [b], []
    if per_topic:
        residual = y - (features @ w + b)
        members: dict[str, list[int]] = {}
        for i, t in enumerate(topics):
            members.setdefault(t, []).append(i)
        for topic in sorted(members):
            idx = members[topic]
            wanted = len(idx) >= min_labels if adapter_topics is None else topic in adapter_topics
            if not wanted:
                continue
            # an adapter sees the cosine and the overlap only: with a few dozen labels of one
            # query, 386 weights would overfit
            wa = np.zeros(features.shape[1], dtype=np.float64)
            wa[list(ADAPTER_COLUMNS)], ba = _ridge(
                features[np.ix_(idx, ADAPTER_COLUMNS)], residual[idx], adapter_alpha
            )
            adapters.append(Adapter(len(rows), topic, text_sha256(queries[idx[0]]), len(idx)))
            rows.append(wa)
            intercepts.append(ba)
    model = LearnedModel(
        scale=scale,
        coef=np.vstack(rows),
        intercept=np.asarray(intercepts, dtype=np.float64),
        training_labels=len(y),
        training_sha256=training_sha256,
        topics=len(set(topics)),
        per_topic=per_topic,
        min_labels=min_labels,
        alpha=alpha,
        adapter_alpha=adapter_alpha,
        adapters=tuple(adapters),
    )
    # regression scores shrink toward the mean grade; cutting them where the training grades'
    # shares fall keeps the rare grades (on the example collection rounding never gave 4 or 5)
    cuts = distribution_cuts(model.scores(features, queries), grades, scale)
    return replace(model, cuts=cuts, _by_query={})


def predict_grades(
    model: LearnedModel,
    pairs: Sequence[tuple[str, str]],
    *,
    encoder: MiniLMEncoder | None = None,
) -> list[int]:
    """The model's grades of (query text, passage text) pairs."""
    features = pair_features(pairs, encoder=encoder)
    return model.grades(features, [q for q, _ in pairs])


# -- the model directory ---------------------------------------------------------------------


def _npy_bytes(array: FloatArray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array, dtype="<f8"), allow_pickle=False)
    return buffer.getvalue()


def _bytes_writer(data: bytes) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    return write


def save_model(model: LearnedModel, directory: str | os.PathLike[str]) -> Path:
    """Write the model directory (created if missing): each file atomically, the manifest
    last and holding the arrays' SHA-256, so a half-written directory fails to load."""
    from ragmeter.io._common import atomic_write, atomic_write_text

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    arrays = {COEF: _npy_bytes(model.coef), INTERCEPT: _npy_bytes(model.intercept)}
    for name, data in arrays.items():
        atomic_write(out / name, _bytes_writer(data))
    manifest = model.manifest()
    manifest["files"] = {name: hashlib.sha256(data).hexdigest() for name, data in arrays.items()}
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return out


def load_model(directory: str | os.PathLike[str]) -> LearnedModel:
    """Read and check a model directory; :class:`InputError` naming the file and field on
    anything missing, malformed or inconsistent."""
    root = Path(directory)
    path = root / MANIFEST
    where = str(path)
    if not path.is_file():
        raise InputError(
            f"no {MANIFEST}: {root} is not a learned judge (made by 'ragmeter judge learn')",
            source=where,
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not readable JSON ({exc})", source=where) from None
    if not isinstance(manifest, dict):
        raise InputError("expected a JSON object", source=where)
    check = _Checker(manifest, where)
    version = check.integer("ragmeter_learned_judge")
    if version != FORMAT_VERSION:
        raise InputError(
            f"format version {version}; this ragmeter reads version {FORMAT_VERSION}",
            source=where,
            field="ragmeter_learned_judge",
        )
    if check.get("features", list) != list(FEATURES):
        raise InputError(
            f"features {manifest['features']}: this ragmeter computes {list(FEATURES)}",
            source=where,
            field="features",
        )
    if check.get("learner", str) != LEARNER:
        raise InputError(f"unknown learner {manifest['learner']!r}", source=where, field="learner")
    scale = check.get("scale", list)
    if len(scale) != 2 or not all(type(v) is int for v in scale) or scale[0] >= scale[1]:
        raise InputError(
            f"expected [lowest, highest] grades, got {scale}", source=where, field="scale"
        )
    params = check.get("params", dict)
    files = check.get("files", dict)
    coef = _read_array(root, COEF, files, 2)
    intercept = _read_array(root, INTERCEPT, files, 1)
    if coef.shape[1] != N_FEATURES or coef.shape[0] != intercept.shape[0] or coef.shape[0] < 1:
        raise InputError(
            f"arrays of shapes {coef.shape} and {intercept.shape}: expected (models, "
            f"{N_FEATURES}) and (models,)",
            source=str(root / COEF),
        )
    adapters = tuple(
        _adapter(a, i, coef.shape[0], where) for i, a in enumerate(check.get("adapters", list))
    )
    cuts = check.get("cuts", list)
    numbers = all(isinstance(c, int | float) and not isinstance(c, bool) for c in cuts)
    if (
        len(cuts) != scale[1] - scale[0]
        or not numbers
        or not all(math.isfinite(c) for c in cuts)
        or any(a > b for a, b in itertools.pairwise(cuts))
    ):
        raise InputError(
            f"expected {scale[1] - scale[0]} ascending finite numbers, got {cuts}",
            source=where,
            field="cuts",
        )
    return LearnedModel(
        scale=(scale[0], scale[1]),
        coef=coef,
        intercept=intercept,
        training_labels=check.integer("training_labels"),
        training_sha256=check.get("training_sha256", str),
        topics=check.integer("topics"),
        per_topic=check.get("per_topic", bool),
        min_labels=check.integer("min_labels"),
        alpha=_Checker(params, where, "params.").number("alpha"),
        adapter_alpha=_Checker(params, where, "params.").number("adapter_alpha"),
        adapters=adapters,
        cuts=tuple(float(c) for c in cuts),
    )


class _Checker:
    """Typed look-ups in a JSON object, raising InputError naming the file and field."""

    def __init__(self, record: Mapping[str, Any], source: str, prefix: str = "") -> None:
        self.record, self.source, self.prefix = record, source, prefix

    def get(self, key: str, kind: type) -> Any:
        if key not in self.record:
            raise InputError("missing", source=self.source, field=self.prefix + key)
        value = self.record[key]
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise InputError(
                f"expected {kind.__name__}, got {value!r}",
                source=self.source,
                field=self.prefix + key,
            )
        return value

    def integer(self, key: str) -> int:
        value: int = self.get(key, int)
        return value

    def number(self, key: str) -> float:
        value = self.record.get(key)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise InputError(
                f"expected a finite number, got {value!r}",
                source=self.source,
                field=self.prefix + key,
            )
        return float(value)


def _adapter(value: Any, i: int, rows: int, where: str) -> Adapter:
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {value!r}", source=where, field=f"adapters[{i}]")
    check = _Checker(value, where, f"adapters[{i}].")
    row = check.integer("row")
    if not 1 <= row < rows:
        raise InputError(
            f"row {row} outside the {rows} rows of {COEF}", source=where, field=f"adapters[{i}].row"
        )
    return Adapter(
        row, check.get("topic", str), check.get("query_sha256", str), check.integer("labels")
    )


def _read_array(root: Path, name: str, files: Mapping[str, Any], ndim: int) -> FloatArray:
    path = root / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror or exc})", source=str(path)) from None
    if hashlib.sha256(data).hexdigest() != files.get(name):
        raise InputError(
            f"its SHA-256 differs from the manifest's (files.{name}): the directory was "
            "changed or half-written; fit it again",
            source=str(path),
        )
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        raise InputError(f"not a numpy array ({exc})", source=str(path)) from None
    if array.ndim != ndim or array.dtype != np.float64 or not np.all(np.isfinite(array)):
        raise InputError(
            f"expected a finite float64 array of {ndim} dimension(s)", source=str(path)
        )
    result: FloatArray = array
    return result


# -- the judge -------------------------------------------------------------------------------


class LearnedJudge(EmbeddingJudge):
    """A learned model as a judge of relevance (the judge protocol of
    :mod:`ragmeter.judges`): cached and reported like any judge; ``model`` carries the model
    directory's SHA-256, so a refitted model never reuses old cached grades."""

    task_name = "relevance"

    def __init__(
        self, model: LearnedModel, *, encoder: MiniLMEncoder | None = None, name: str = ""
    ) -> None:
        self.learned = model
        self._encoder = encoder
        self.name = name
        #: printed under every run's summary by ``ragmeter judge``
        self.note = (
            f"learned judge: grades from a model fitted on {model.training_labels:,} human "
            f"labels ({model.learner}, {model.scope}); check its held-out agreement "
            "(printed by 'ragmeter judge learn') before relying on it"
        )

    @classmethod
    def from_directory(cls, directory: str | os.PathLike[str]) -> LearnedJudge:
        return cls(load_model(directory), name=str(directory))

    @property
    def scale(self) -> tuple[int, int]:
        return self.learned.scale

    @property
    def model(self) -> str:
        return f"learned-{LEARNER} {self.learned.sha256[:16]}"

    @property
    def request_params(self) -> dict[str, Any]:
        return {"learned": self.learned.sha256}

    @property
    def label_source(self) -> LabelSource:
        from ragmeter.core.provenance import LabelSource

        m = self.learned
        return LabelSource(
            kind="learned",
            model=self.model,
            prompt_id="learned-relevance",
            training_labels=m.training_labels,
            training_sha256=m.training_sha256,
            features=FEATURES,
            learner=m.learner,
            scope=m.scope,
        )

    def judge_many(self, task: Any, inputs: Sequence[Mapping[str, str]]) -> list[Any]:
        """Judgments for a batch (status ``ok``, raw ``score=…``), one embedding pass."""
        from ragmeter.judges.types import Judgment

        name = getattr(task, "name", task)
        if name != self.task_name:
            raise ValueError(f"a learned judge grades relevance, not {name!r}")
        pairs = [(i["query"], i["passage"]) for i in inputs]
        features = pair_features(pairs, encoder=self.encoder)
        scores = self.learned.scores(features, [q for q, _ in pairs])
        grades = grades_from_cuts(scores, self.learned.cuts, self.learned.scale[0])
        return [
            Judgment(value=g, status="ok", raw=f"score={s:.4f}", model=self.model)
            for g, s in zip(grades, scores, strict=True)
        ]
