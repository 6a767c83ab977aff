"""A provenance sidecar proves it describes its label file (issue "Nothing silently wrong,
part three", T1, T15, T15b, item 12 and item 19): the digests of its header, what an
unverified sidecar does in every view and at the calibration gate, one-line errors for
malformed sidecars, calibrations and label queues, and PPI label files in swapped roles.

Expected hashes are computed here from the documented definition (sorted compact JSON
rows after a ``ragmeter-<kind>-v1`` line), not with ragmeter's function.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.analysis.calibration import describe_labels, label_description
from ragmeter.cli import app
from ragmeter.core.provenance import LabelProvenance, LabelSource, human_source
from ragmeter.data import EXAMPLE_DIR
from ragmeter.io.provenance import provenance_path, read_provenance, write_provenance
from test_calibration import UMBRELA, check, label_files, run_file, save

runner = CliRunner()
ALICE = human_source("alice")


def by_hand(kind: str, rows: list[list[object]]) -> str:
    """The documented digest: each row a compact JSON array, sorted, after a kind line."""
    lines = sorted(json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in rows)
    text = f"ragmeter-{kind}-v1\n" + "".join(line + "\n" for line in lines)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def header(path: Path) -> dict[str, object]:
    return json.loads(provenance_path(path).read_text().splitlines()[0])  # type: ignore[no-any-return]


def filled(tmp_path: Path) -> Path:
    """Labels made by people except two pairs by the calibrated judge, sidecar by ragmeter."""
    human, _ = label_files(tmp_path)
    path = tmp_path / "filled.txt"
    path.write_text(human.read_text())
    prov = LabelProvenance(
        sources={"human": ALICE, "judge": UMBRELA},
        pairs={("q0", "d0"): "judge", ("q1", "d1"): "judge"},
        default="human",
    )
    write_provenance(path, prov)
    return path


# --- the header's digests ------------------------------------------------------------


def test_the_header_records_the_labels_and_its_pair_lines(tmp_path: Path) -> None:
    path = filled(tmp_path)
    head = header(path)
    # the eight labels of label_files: q{i%2} d{i} with the human grades 0,1,2,3,3,0,1,2
    grades = [0, 1, 2, 3, 3, 0, 1, 2]
    rows = [[f"q{i % 2}", f"d{i}", g] for i, g in enumerate(grades)]
    assert head["labels"] == {"rows": "qrels", "n": 8, "sha256": by_hand("qrels", rows)}
    pairs = [["q0", "d0", "judge"], ["q1", "d1", "judge"]]
    assert head["pairs"] == {"rows": "pairs", "n": 2, "sha256": by_hand("pairs", pairs)}
    assert read_provenance(path) is not None and read_provenance(path).verified  # type: ignore[union-attr]


def test_order_and_whitespace_do_not_matter_a_grade_does(tmp_path: Path) -> None:
    path = filled(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(f"{line}   " for line in reversed(lines)) + "\n\n")
    assert read_provenance(path).verified  # type: ignore[union-attr]
    path.write_text("\n".join([*lines[:-1], "q1 0 d7 3"]) + "\n")  # d7: grade 2 → 3
    prov = read_provenance(path)
    assert prov is not None and not prov.verified
    assert "the labels changed after their sidecar was written" in (prov.unverified or "")


def test_the_bundled_example_sidecar_is_bound_to_its_qrels() -> None:
    qrels = EXAMPLE_DIR / "qrels.txt"
    rows = [[q, d, int(g)] for q, _, d, g in (line.split() for line in qrels.open())]
    head = header(qrels)
    assert head["labels"] == {"rows": "qrels", "n": len(rows), "sha256": by_hand("qrels", rows)}
    prov = read_provenance(qrels)
    assert prov is not None and prov.verified and not prov.has_llm


# --- T1: what an unverified sidecar does -------------------------------------------------


def test_a_sidecar_cut_after_its_header_is_unverified_and_refused(tmp_path: Path) -> None:
    cal = save(tmp_path)
    path = filled(tmp_path)
    other = LabelSource(kind="judge", model="other")
    write_provenance(
        path,
        LabelProvenance(
            sources={"human": ALICE, "judge": other}, pairs={("q0", "d0"): "judge"}, default="human"
        ),
    )
    assert check(tmp_path, path, "--calibration", str(cal)).exit_code == 5  # another judge
    sidecar = provenance_path(path)
    sidecar.write_text(sidecar.read_text().splitlines()[0] + "\n")  # cut after its header
    result = check(tmp_path, path, "--calibration", str(cal))
    assert result.exit_code == 5, result.output
    assert "unverified provenance" in result.stderr and "cut or edited" in result.stderr
    (line,) = describe_labels(path)
    assert line.startswith("unverified provenance (its header records 1 pair lines")
    described = label_description(path).to_json()
    assert described["verified"] is False and described["llm"] is None


def test_llm_labels_under_an_old_human_sidecar_are_refused(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    # a sidecar as older ragmeters and people write it: no digest of the labels
    head = {
        "ragmeter_label_provenance": 1,
        "default": "human",
        "sources": {"human": {"kind": "human"}},
    }
    provenance_path(llm).write_text(json.dumps(head) + "\n")
    result = check(tmp_path, llm, "--calibration", str(cal))
    assert result.exit_code == 5, result.output
    assert "the sidecar records no hash of its labels" in result.stderr
    (line,) = describe_labels(llm)
    assert line.startswith("unverified provenance (the sidecar records no hash")
    assert line.endswith("the sidecar claims: human labels: 8 of 8 pairs")


def test_labels_rewritten_under_a_human_sidecar_are_unverified(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path, source=None)
    write_provenance(human, LabelProvenance.single(ALICE))
    human.write_text(llm.read_text())  # another tool rewrote the file with a judge's labels
    result = runner.invoke(
        app,
        ["evaluate", str(run_file(tmp_path)), "--qrels", str(human), "-m", "ndcg@10", "-f", "json"],
    )
    assert result.exit_code == 0, result.output
    labels = json.loads(result.stdout)["labels"]
    assert labels["verified"] is False and labels["llm"] is None
    assert labels["provenance"].startswith("unverified provenance (it was written for 8 labels")
    assert "labels: unverified provenance" in result.stderr


def test_human_labels_under_a_stale_judge_sidecar_are_not_called_llm_labels(
    tmp_path: Path,
) -> None:
    human, llm = label_files(tmp_path)
    llm.write_text(human.read_text())  # people's labels now; the judge's sidecar stayed
    (line,) = describe_labels(llm)
    assert line.startswith("unverified provenance (") and not line.startswith("LLM labels")
    assert label_description(llm).llm is None


def test_a_verified_sidecar_passes_the_gate(tmp_path: Path) -> None:
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    result = check(tmp_path, llm, "--calibration", str(cal))
    assert result.exit_code == 0, result.output
    assert "calibration holds" in result.stderr


def test_hole_filling_refuses_an_unverified_human_sidecar(tmp_path: Path) -> None:
    from ragmeter.errors import InputError
    from ragmeter.judges.holes import HoleJob

    human, _ = label_files(tmp_path, source=None)
    write_provenance(human, LabelProvenance.single(ALICE))
    human.write_text(human.read_text().replace("d0 0", "d0 3"))
    with pytest.raises(InputError, match="unverified provenance"):
        HoleJob(human, depth=5).plan({"q0": ["d0"]})


# --- item 19: people's labels get a line; the spans sidecar does not call itself human -----


def test_fully_human_labels_print_their_line(tmp_path: Path) -> None:
    human, _ = label_files(tmp_path, source=None)
    write_provenance(human, LabelProvenance.single(ALICE))
    result = runner.invoke(
        app, ["evaluate", str(run_file(tmp_path)), "--qrels", str(human), "-m", "ndcg@10"]
    )
    assert result.exit_code == 0, result.output
    assert "labels: human (alice) labels: 8 of 8 pairs" in result.stderr


def test_chunk_qrels_of_unknown_span_labels_claim_no_human(tmp_path: Path) -> None:
    from ragmeter.workflows.spans import _rule_provenance

    class Spans:
        annotators = None

    spans = tmp_path / "spans.jsonl"
    spans.write_text("")
    prov = _rule_provenance(Spans(), {("q1", "c1"): 0}, spans, "chunk qrels, rule any")
    assert dict(prov.sources) == {} and prov.default is None
    assert "span labels of unknown origin" in (prov.note or "")
    qrels = tmp_path / "chunk.qrels"
    qrels.write_text("q1 0 c1 1\n")
    write_provenance(qrels, prov)
    assert '"kind"' not in provenance_path(qrels).read_text()
    back = read_provenance(qrels)
    assert back is not None and back.verified and back.note == prov.note
    assert back.describe([("q1", "c1")]) == "labels of unknown origin: 1 of 1 pairs"


# --- T15: malformed sidecars, calibrations and queues: one line, file, line, field ------------


def one_error(result, *where: str) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for part in where:
        assert part in lines[0], lines[0]
    return lines[0]


SOURCES = '"sources": {"j": {"kind": "judge", "model": "m"'


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"ragmeter_label_provenance": 1, "default": ["j"], ' + SOURCES + "}}}", "'default'"),
        (
            '{"ragmeter_label_provenance": 1, "default": "j", '
            + SOURCES
            + ', "temperature": NaN}}}',
            "'sources.j.temperature'",
        ),
        (
            '{"ragmeter_label_provenance": 1, "default": "j", ' + SOURCES + ', "samples": 1e400}}}',
            "'sources.j.samples'",
        ),
        (
            '{"ragmeter_label_provenance": 1, "default": "j", ' + SOURCES + ', "samples": "2"}}}',
            "'samples'",
        ),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_a_malformed_sidecar_is_one_line(tmp_path: Path, text: str, where: str) -> None:
    human, _ = label_files(tmp_path, source=None)
    provenance_path(human).write_text(text + "\n")
    args = ["evaluate", str(run_file(tmp_path)), "--qrels", str(human), "-m", "ndcg@10"]
    one_error(runner.invoke(app, args), "human.txt.provenance.jsonl", "line 1", where)


def test_a_deep_calibration_and_queue_are_one_line(tmp_path: Path) -> None:
    human, _ = label_files(tmp_path, source=None)
    cal = tmp_path / "cal.json"
    cal.write_text("[" * 100_000 + "]" * 100_000)
    one_error(check(tmp_path, human, "--calibration", str(cal)), "cal.json", "nested too deeply")
    queue = tmp_path / "queue.jsonl"
    queue.write_text('{"query_id": "q0", "docs": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    args = ["evaluate", str(run_file(tmp_path)), "--qrels", str(human), "--human-qrels"]
    args += [str(human), "--labelled-queries", str(queue), "--ppi", "-m", "ndcg@10"]
    one_error(runner.invoke(app, args), "queue.jsonl", "line 1", "nested too deeply")


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda c: c.__setitem__("leaderboard", {"a": 1}), "'leaderboard'"),
        (
            lambda c: c.__setitem__("leaderboard", [{"measure": "m"}]),
            "'leaderboard[0].kendall_tau'",
        ),
        (lambda c: c["labels"].__setitem__("n_pairs", float("inf")), "'labels.n_pairs'"),
        (
            lambda c: c.__setitem__(
                "leaderboard", [{"measure": "m", "kendall_tau": "x", "tau_ap": None}]
            ),
            "'leaderboard[0].kendall_tau'",
        ),
        (lambda c: c["kappa"].__setitem__("unweighted", "high"), "'kappa.unweighted'"),
        (lambda c: c.__setitem__("judge", {"kind": "judge", "model": ["m"]}), "'judge'"),
    ],
)
def test_an_edited_and_rehashed_calibration_is_one_line(tmp_path: Path, edit, field: str) -> None:  # type: ignore[no-untyped-def]
    cal = save(tmp_path)
    _, llm = label_files(tmp_path)
    content = json.loads(cal.read_text())
    edit(content)
    body = {k: v for k, v in content.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    content["sha256"] = hashlib.sha256(text.encode()).hexdigest()  # re-hashed to match
    edited = tmp_path / "cal2.json"
    edited.write_text(json.dumps(content))  # inf is written as Infinity
    one_error(
        check(tmp_path, llm, "--calibration", str(edited), "--min-tau", "0.5"), "cal2.json", field
    )


# --- item 12: PPI label files in swapped roles ------------------------------------------------


def ppi(tmp_path: Path, llm: Path, human: Path):  # type: ignore[no-untyped-def]
    args = ["evaluate", str(run_file(tmp_path)), "--qrels", str(llm), "--human-qrels", str(human)]
    return runner.invoke(app, [*args, "--ppi", "-m", "ndcg@10"])


def test_ppi_refuses_swapped_label_files(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    write_provenance(human, LabelProvenance.single(ALICE))
    line = one_error(ppi(tmp_path, human, llm), "the labels look swapped")
    assert "--qrels human.txt" in line and "--human-qrels llm.txt" in line
    assert ppi(tmp_path, llm, human).exit_code == 0


def test_ppi_refuses_llm_labels_as_human_ones_and_people_as_the_judge(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path)
    one_error(ppi(tmp_path, llm, llm), "--human-qrels llm.txt", "made by people only")
    write_provenance(human, LabelProvenance.single(ALICE))
    one_error(ppi(tmp_path, human, human), "--qrels human.txt", "no LLM label for PPI")


def test_span_measures_print_who_marked_the_spans(tmp_path: Path) -> None:
    rows = [
        {"query_id": "q1", "doc_id": "d1", "start": 10, "end": 20, "annotator": "alice"},
        {"query_id": "q1", "doc_id": "d1", "start": 30, "end": 40, "annotator": "alice"},
        {"query_id": "q2", "doc_id": "d2", "start": 0, "end": 5},
    ]
    spans = tmp_path / "spans.jsonl"
    spans.write_text("".join(json.dumps(r) + "\n" for r in rows))
    chunks = tmp_path / "chunks.jsonl"
    chunk_rows = [("c1", "d1", 0, 15), ("c2", "d1", 15, 45), ("e1", "d2", 0, 10)]
    keys = ("chunk_id", "doc_id", "start", "end")
    chunks.write_text(
        "".join(json.dumps(dict(zip(keys, c, strict=True))) + "\n" for c in chunk_rows)
    )
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 c2 1 3 a\nq2 Q0 e1 1 1 a\n")
    args = ["evaluate", str(run), "--spans", str(spans), "--chunks", str(chunks)]
    result = runner.invoke(app, [*args, "-m", "span_recall@1", "-f", "json"])
    assert result.exit_code == 0, result.output
    said = "human (alice) labels: 2 of 3 spans; span labels of unknown origin: 1 of 3 spans"
    assert f"labels: {said}" in result.stderr
    labels = json.loads(result.stdout)["labels"]
    assert labels["provenance"] == said and labels["llm"] is None and labels["n_pairs"] == 3


def test_agreement_says_when_the_judge_is_only_declared(tmp_path: Path) -> None:
    human, llm = label_files(tmp_path, source=None)
    head = {"ragmeter_label_provenance": 1, "default": "j", "sources": {"j": UMBRELA.to_json()}}
    provenance_path(llm).write_text(json.dumps(head) + "\n")  # by hand: no digest
    cal = tmp_path / "cal.json"
    args = ["agreement", str(human), str(llm), "--save-calibration", str(cal)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "llm.txt: unverified provenance (the sidecar records no hash" in result.stderr
    assert "the judge it names is taken as declared" in result.stderr


@pytest.mark.parametrize("view", ["evaluate", "compare", "diagnose", "report"])
def test_every_view_says_unverified(tmp_path: Path, view: str) -> None:
    human, llm = label_files(tmp_path)
    llm.write_text(human.read_text())  # the judge's sidecar stayed beside people's labels
    run = run_file(tmp_path)
    other = tmp_path / "other.txt"
    other.write_text("".join(reversed(run.read_text().splitlines(keepends=True))))
    args = {
        "evaluate": ["evaluate", str(run), "--qrels", str(llm), "-m", "ndcg@10"],
        "compare": ["compare", str(run), str(other), "--qrels", str(llm), "-m", "ndcg@10"],
        "diagnose": ["diagnose", str(run), "--qrels", str(llm), "--grade-map", "0:1,1:3,2:4,3:5"],
        "report": ["report", str(run), "--qrels", str(llm), "-o", str(tmp_path / "r.html")],
    }[view]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    if view == "report":
        page = (tmp_path / "r.html").read_text()
        assert "unverified provenance" in page and "LLM labels (umbrela" in page
    else:
        assert "labels: unverified provenance (it was written for 8 labels" in result.stderr


def test_a_saved_evaluation_keeps_the_verdict(tmp_path: Path) -> None:
    from ragmeter.analysis.calibration import labels_kind, recorded_label_lines

    human, llm = label_files(tmp_path)
    assert labels_kind(label_description(llm).to_json()) == "LLM"
    llm.write_text(human.read_text())
    recorded = json.loads(json.dumps(label_description(llm).to_json()))  # as the store keeps it
    assert labels_kind(recorded) == "unverified"
    assert recorded_label_lines(recorded)[0].startswith("unverified provenance (")
