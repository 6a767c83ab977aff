"""``ragmeter fuse``: CombSUM, CombMNZ, weighted sum and RRF with min-max, z-score and sum
normalisations, against ranx's fusion (dev extra) on the example runs, and by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import Run
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.io.readers import read_run
from ragmeter.pipeline.fusion import fuse, normalise

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RUNS = [EXAMPLES / "run_bm25.txt", EXAMPLES / "run_dense.txt"]

#: (ragmeter method, norm, weights) → ranx's (method, norm, params)
CASES = [
    (("combsum", "min-max", None), ("sum", "min-max", {})),
    (("combsum", "z-score", None), ("sum", "zmuv", {})),
    (("combsum", "sum", None), ("sum", "sum", {})),
    (("combmnz", "min-max", None), ("mnz", "min-max", {})),
    (("combmnz", "z-score", None), ("mnz", "zmuv", {})),
    (("combmnz", "sum", None), ("mnz", "sum", {})),
    (("wsum", "min-max", (0.3, 0.7)), ("wsum", "min-max", {"weights": [0.3, 0.7]})),
    (("wsum", "z-score", (0.5, 0.5)), ("wsum", "zmuv", {"weights": [0.5, 0.5]})),
    (("wsum", "sum", (1.0, 2.0)), ("wsum", "sum", {"weights": [1.0, 2.0]})),
    (("rrf", "min-max", None), ("rrf", "min-max", {"k": 60})),
    (("rrf", "none", None), ("rrf", None, {"k": 10})),
]


@pytest.mark.parametrize(("ours", "theirs"), CASES, ids=[f"{c[0][0]}-{c[0][1]}" for c in CASES])
def test_against_ranx(ours: tuple, theirs: tuple) -> None:
    ranx = pytest.importorskip("ranx", reason="ranx (dev extra) is needed")
    method, norm, weights = ours
    k = theirs[2].get("k", 60)
    fused = fuse([read_run(p) for p in RUNS], method=method, norm=norm, weights=weights, k=k)
    ranx_runs = [ranx.Run.from_file(str(p), kind="trec") for p in RUNS]
    if method == "rrf":  # ranks: ranx orders tied scores otherwise; give it trec_eval's order
        ranx_runs = [
            ranx.Run({q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in r.items()})
            for r in (read_run(p).ranked() for p in RUNS)
        ]
    expected = ranx.fuse(ranx_runs, norm=theirs[1], method=theirs[0], params=theirs[2]).to_dict()
    got = fused.to_dict()
    assert set(got) == set(expected)
    for q, docs in expected.items():
        assert set(got[q]) == set(docs), q
        for d, score in docs.items():
            assert got[q][d] == pytest.approx(score, rel=1e-12, abs=1e-12), (q, d)


def test_by_hand() -> None:
    a = Run.from_dict({"q": {"d1": 3.0, "d2": 1.0}})
    b = Run.from_dict({"q": {"d2": 5.0, "d3": 4.0, "d4": 3.0}})
    # min-max: a → d1 1, d2 0; b → d2 1, d3 0.5, d4 0
    assert fuse([a, b]).to_dict() == {"q": {"d1": 1.0, "d2": 1.0, "d3": 0.5, "d4": 0.0}}
    assert fuse([a, b], method="combmnz").to_dict()["q"]["d2"] == 2.0
    assert fuse([a, b], method="wsum", weights=[2.0, 1.0]).to_dict()["q"]["d1"] == 2.0
    rrf = fuse([a, b], method="rrf", k=1).to_dict()["q"]
    assert rrf["d2"] == pytest.approx(1 / 3 + 1 / 2) and rrf["d4"] == pytest.approx(1 / 4)
    # ties: d1 and d2 both 1.0 → doc id descending
    assert fuse([a, b]).ranked() == {"q": ["d2", "d1", "d3", "d4"]}
    assert fuse([a, b], depth=2).ranked() == {"q": ["d2", "d1"]}
    assert normalise(pytest.importorskip("numpy").array([2.0, 2.0]), "z-score").tolist() == [0, 0]


def test_bad_arguments() -> None:
    a = Run.from_dict({"q": {"d1": 1.0}})
    with pytest.raises(InputError, match="two runs"):
        fuse([a])
    with pytest.raises(InputError, match="one weight per run"):
        fuse([a, a], method="wsum", weights=[1.0])
    with pytest.raises(InputError, match="weights are for wsum"):
        fuse([a, a], weights=[1.0, 1.0])
    with pytest.raises(InputError, match="unknown fusion method"):
        fuse([a, a], method="borda")  # type: ignore[arg-type]


def test_cli(tmp_path: Path) -> None:
    out = tmp_path / "fused.txt"
    result = CliRunner().invoke(
        app,
        ["fuse", *map(str, RUNS), "--method", "wsum", "--weights", "0.3,0.7", "-o", str(out)],
    )
    assert result.exit_code == 0, result.stdout
    written = read_run(out).to_dict()
    expected = fuse([read_run(p) for p in RUNS], method="wsum", weights=[0.3, 0.7]).to_dict()
    assert written.keys() == expected.keys()
    q = next(iter(expected))
    assert written[q] == pytest.approx(expected[q], abs=1e-12)  # scores written exactly


def test_fuse_and_tune_fusion_at_top_level_imported_on_first_use() -> None:
    import subprocess
    import sys

    import ragmeter
    from ragmeter.pipeline.fusion import fuse
    from ragmeter.pipeline.fusion_tuning import tune_fusion

    assert ragmeter.fuse is fuse and ragmeter.tune_fusion is tune_fusion
    assert {"fuse", "tune_fusion"} <= set(ragmeter.__all__)
    code = "import sys, ragmeter; print(any('fusion' in m for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
