"""RAGAS and DeepEval datasets evaluate as they are written (JSONL, CSV, Parquet): ids used
directly, texts matched exactly after normalisation, answers fed to the answer metrics.
Expected values are worked out by hand from the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.errors import InputError
from ragmeter.evaluation.samples import evaluate_samples
from ragmeter.io.answers import read_answer_samples
from ragmeter.io.ragas import normalise_text, text_id
from ragmeter.io.readers import read_qrels, read_run
from ragmeter.io.samples import read_samples

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ragas_sample.jsonl"

#: the example's rows by hand: first relevant rank 1, 2, 3, 1; recall@3 1, 1, 1, 1/2
EXPECTED = {"mrr": (1 + 1 / 2 + 1 / 3 + 1) / 4, "recall@3": (1 + 1 + 1 + 0.5) / 4}


def _means(run_path: Path, qrels_path: Path | None = None) -> dict[str, float | None]:
    samples = read_samples(run_path) if qrels_path is None else None
    run = samples.run if samples else read_run(run_path)
    qrels = samples.qrels if samples else read_qrels(qrels_path)  # type: ignore[arg-type]
    return evaluate(run, qrels, ["mrr", "recall@3"]).run.means()


def test_ragas_jsonl_with_ids() -> None:
    means = _means(EXAMPLE)
    assert means == pytest.approx(EXPECTED)
    samples = read_samples(EXAMPLE)
    assert samples.ids == ("1", "2", "3", "4")
    assert samples.queries["1"] == "How long is the refund window?"
    assert samples.answers["4"] == "Yes, until the order is packed."
    assert samples.run.texts is not None


def test_ragas_jsonl_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app, ["evaluate", str(EXAMPLE), "-m", "mrr", "-m", "recall@3", "-f", "json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.stdout
    metrics = json.loads(out.read_text())["runs"][0]["metrics"]
    assert metrics["mrr"]["mean"] == pytest.approx(EXPECTED["mrr"])
    assert metrics["recall@3"]["mean"] == pytest.approx(EXPECTED["recall@3"])


def _rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in EXAMPLE.read_text().splitlines()]


def test_ragas_csv_and_parquet_as_pandas_writes_them(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(_rows())
    csv_path, parquet_path = tmp_path / "ragas.csv", tmp_path / "ragas.parquet"
    frame.to_csv(csv_path, index=False)  # list columns as Python list literals
    frame.to_parquet(parquet_path)
    assert _means(csv_path, csv_path) == pytest.approx(EXPECTED)
    assert _means(parquet_path, parquet_path) == pytest.approx(EXPECTED)


def test_text_only_rows_match_normalised_texts(tmp_path: Path) -> None:
    rows = [
        {
            "user_input": "q one",
            "retrieved_contexts": ["Alpha  beta.", "Gamma", "ALPHA beta."],
            "reference_contexts": ["alpha beta.", "delta"],
        },
        {
            "user_input": "q two",
            "retrieved_contexts": ["x", "Ｚｅｔａ"],
            "reference_contexts": ["zeta"],
        },
    ]
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples = read_samples(path)
    # "ALPHA beta." repeats "Alpha  beta." (same normal form): dropped, first rank kept
    assert samples.run.lengths().tolist() == [2, 2]
    means = evaluate(samples.run, samples.qrels, ["mrr", "recall@10"]).run.means()
    # q one: alpha beta at rank 1, delta never retrieved; q two: ｚｅｔａ (NFKC) at rank 2
    assert means == pytest.approx({"mrr": (1 + 1 / 2) / 2, "recall@10": (1 / 2 + 1) / 2})
    assert any(
        "1 of 3 reference context(s) equal no retrieved context" in w for w in samples.warnings
    )
    assert normalise_text(" A\u00a0b ") == "a b"
    assert text_id("Alpha  beta.") == text_id("alpha beta.")


def test_deepeval_rows(tmp_path: Path) -> None:
    rows = [
        {
            "input": "Where is the Louvre?",
            "actual_output": "Paris",
            "expected_output": "Paris",
            "retrieval_context": ["The Louvre is in Berlin.", "The Louvre is in Paris."],
            "context": ["The Louvre is in Paris."],
        }
    ]
    path = tmp_path / "deepeval.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n")
    samples = read_samples(path)
    assert evaluate(samples.run, samples.qrels, ["mrr"]).run.means() == {"mrr": 0.5}
    assert samples.answers == {"1": "Paris"} and samples.references == {"1": "Paris"}
    answers = read_answer_samples(path)
    assert answers[0].generated_answer == "Paris" and answers[0].context == (
        "The Louvre is in Berlin.",
        "The Louvre is in Paris.",
    )
    scored = evaluate_samples(answers, ["exact_match"]).run.means()
    assert scored == {"exact_match": 1.0}


def test_ragas_answers_feed_the_answer_metrics() -> None:
    answers = read_answer_samples(EXAMPLE)
    assert [a.id for a in answers] == ["1", "2", "3", "4"]
    assert answers[2].query == "How do I reset my password?"
    assert answers[2].reference_answer.startswith("Use the 'Forgot password' link")
    means = evaluate_samples(answers, ["exact_match", "token_f1"]).run.means()
    assert means["exact_match"] == 0.0
    assert 0.0 < (means["token_f1"] or 0.0) < 1.0


def test_bad_rows_name_row_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"user_input": "q", "retrieved_contexts": "not a list"}) + "\n")
    with pytest.raises(InputError, match="row 1") as info:
        read_run(path)
    assert "retrieved_contexts" in str(info.value)
    path.write_text(json.dumps({"user_input": "q", "reference_contexts": ["a"]}) + "\n")
    with pytest.raises(InputError, match="no retrieved passages"):
        read_run(path)


def test_a_csv_cell_over_the_csv_module_limit_is_read(tmp_path: Path) -> None:
    """33 retrieved passages of 4,500 characters make a cell of ~150,000 characters, more
    than Python's csv default field limit (131,072): valid input, read whole."""
    import csv

    passages = [f"passage {i} " + "x" * 4_500 for i in range(33)]
    path = tmp_path / "long.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["user_input", "retrieved_contexts", "reference_contexts"])
        writer.writerow(["q one", repr(passages), repr([passages[2]])])
        writer.writerow(["q two", repr(passages[:3]), repr([passages[0]])])
    assert len(repr(passages)) > 131_072
    # by hand: q one's relevant passage at rank 3, q two's at rank 1 → mrr (1/3 + 1) / 2
    means = _means(path, path)
    assert means["mrr"] == pytest.approx((1 / 3 + 1) / 2)
    assert csv.field_size_limit() == 131_072  # the process's limit is left as it was
    tsv = tmp_path / "long.tsv"
    tsv.write_text(
        "user_input\tretrieved_contexts\treference_contexts\n"
        f"q one\t{json.dumps(passages)}\t{json.dumps([passages[2]])}\n"
    )
    assert _means(tsv, tsv)["mrr"] == pytest.approx(1 / 3)


def test_a_malformed_csv_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    # an unterminated quote: the csv module reaches the end of the file inside the cell
    path.write_bytes(b'user_input,retrieved_contexts\nq one,"[""a""]"\nq two,"[""b""]"x"\n')
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert caught.value.source == str(path) and caught.value.line == 3, str(caught.value)


def test_a_cell_over_the_line_limit_is_an_error_naming_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETER_MAX_LINE_BYTES", "1000")
    cell = "\n".join(["x" * 500] * 4)  # lines of 500 characters, one cell of 2,003
    path = tmp_path / "long.csv"
    path.write_text(f"user_input,retrieved_contexts\nq one,\"['a']\"\nq two,\"['{cell}']\"\n")
    with pytest.raises(InputError, match="a cell longer than 1000 bytes") as caught:
        read_run(path)
    assert caught.value.source == str(path) and caught.value.line is not None
