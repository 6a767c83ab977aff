"""Small trip-ups of a first session: whole summaries in ``ragmeter measures``, the rule of
the printed measure names stated where it applies, the extra to install for DataFrames, and a
hint when the run and the qrels are given in each other's place."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import MissingExtraError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RUN, QRELS = str(EXAMPLES / "run_bm25.txt"), str(EXAMPLES / "qrels.txt")
FAST = ("--bootstrap", "200", "--permutations", "500")

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str, str]:
    done = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    return done.exit_code, done.stdout, done.stderr


def _plain(text: str) -> str:
    """Table text as one line of words (borders and wrapping removed)."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", text).split())


def test_measures_prints_whole_summaries_and_no_seed_names() -> None:
    code, out, _ = _invoke("measures")
    assert code == 0
    text = _plain(out)
    # first paragraphs that the docstrings wrap over two lines, printed whole
    assert "(ndeval's collection-independent normalisation; ``alpha_ndcg`` divides by" in text
    assert "R_i over the whole ranking, R_i = judged passages answering i" in text
    assert not re.search(r"seed \d{3}", text)


def test_every_summary_is_a_whole_paragraph() -> None:
    import inspect

    from ragmeter.measures import REGISTRY

    for family in REGISTRY.families():
        doc = inspect.cleandoc(family.compute.__doc__ or "")
        first = " ".join(doc.split("\n\n")[0].split())
        if family.summary != first:  # an explicit summary: one line, no seed file names
            assert "\n" not in family.summary and not re.search(r"seed \d", family.summary)


def test_evaluate_states_which_names_print_as_ragmeter_names() -> None:
    code, out, err = _invoke(
        "evaluate", RUN, "--qrels", QRELS, "-m", "nDCG@10", "-m", "P@10", "-m", "R@50"
    )
    assert code == 0, err
    note = next(line for line in out.splitlines() if line.startswith("printed under"))
    assert note == "printed under ragmeter's names: nDCG@10 as ndcg@10; P@10 as precision@10."
    assert "R@50" in out  # another tool's spelling is kept in the header: not in the note


def test_no_note_when_every_name_prints_as_given() -> None:
    code, out, _ = _invoke("evaluate", RUN, "--qrels", QRELS, "-m", "ndcg@10", "-m", "R@50")
    assert code == 0 and "printed under" not in out


def test_compare_states_the_rule_too() -> None:
    dense = str(EXAMPLES / "run_dense.txt")
    code, out, err = _invoke("compare", RUN, dense, "--qrels", QRELS, "-m", "P@10", *FAST)
    assert code == 0, err
    assert "printed under ragmeter's names: P@10 as precision@10." in out


def test_to_pandas_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    run = ragmeter.Run.from_dict({"q1": {"d1": 1.0}})
    ev = ragmeter.evaluate(run, ragmeter.Qrels.from_dict({"q1": {"d1": 1}}), ["mrr"])
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails
    for call in (ev.to_pandas, ev.runs[0].to_pandas):
        with pytest.raises(MissingExtraError) as caught:
            call()
        assert str(caught.value) == (
            "to_pandas() needs the package pandas: "
            'pip install -e ".[frames]" in your ragmeter clone'
        )


def test_polars_frames_without_polars_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.io.frames import run_to_polars

    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(MissingExtraError, match=r"\.\[frames\]"):
        run_to_polars(ragmeter.Run.from_dict({"q1": {"d1": 1.0}}))


def test_qrels_given_as_the_run_gets_a_hint() -> None:
    code, _, err = _invoke("evaluate", QRELS, "--qrels", QRELS)
    assert code == 2
    assert err.startswith("ragmeter: error: ") and len(err.strip().splitlines()) == 1
    assert "this looks like a qrels file" in err and "swapped" in err


def test_a_run_given_as_the_qrels_gets_a_hint() -> None:
    code, _, err = _invoke("evaluate", RUN, "--qrels", RUN)
    assert code == 2
    assert "qrels.txt" not in err and "run_bm25.txt, line 1" in err
    assert "this looks like a run file" in err and "swapped" in err


def test_no_hint_for_a_line_of_neither_kind(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 x\n")  # 5 fields: a broken run, not a qrels file
    code, _, err = _invoke("evaluate", str(bad), "--qrels", QRELS)
    assert code == 2 and "5 field(s)" in err and "swapped" not in err


def test_every_install_hint_is_the_docs_install_command() -> None:
    """The docs install from a clone (``pip install -e ".[extra]"``); a runtime hint that says
    ``pip install "ragmeter[extra]"`` names a package index install the docs never use. Every
    hint is built by :func:`ragmeter.errors.install_hint`."""
    from ragmeter.errors import install_hint

    root = Path(ragmeter.__file__).resolve().parent
    pypi_form = re.compile(r"""pip install ['"]ragmeter\[""")
    stray = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pypi_form.search(line)
    ]
    assert stray == []
    docs = (Path(__file__).resolve().parent.parent / "docs" / "judges.md").read_text()
    assert 'pip install -e ".[judges]"' in docs
    assert install_hint("judges").startswith('pip install -e ".[judges]"')
