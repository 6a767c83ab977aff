"""The label database under concurrent writers: labels committed in shared transactions
(group commit) are all stored and acknowledged only once committed; a bad label fails alone;
the cached current labels follow every write and undo."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ragmeter.web.labels import LabelDB


def test_concurrent_labels_are_all_committed(tmp_path: Path) -> None:
    db = LabelDB(tmp_path / "l.db")
    assert db.current("grade", annotator="a0") == {}  # cached before the writes
    errors: list[BaseException] = []

    def annotate(n: int) -> None:
        try:
            for i in range(50):
                db.record(f"a{n}", "grade", "q", f"d{i}", 1 + (i + n) % 5)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=annotate, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected = {f"a{n}": {("q", f"d{i}", 0): 1 + (i + n) % 5 for i in range(50)} for n in range(8)}
    assert db.current("grade") == expected  # read from the file
    assert db.current("grade", annotator="a0") == {"a0": expected["a0"]}  # the cache
    assert sorted(db.annotators()) == sorted(expected)
    db.close()
    again = LabelDB(tmp_path / "l.db")
    assert again.current("grade") == expected
    again.close()


def test_a_bad_label_in_a_batch_fails_alone(tmp_path: Path) -> None:
    db = LabelDB(tmp_path / "l.db")
    good = db.submit_record("a", "grade", "q", "d1", 3)
    with pytest.raises(ValueError, match="outside"):
        db.submit_record("a", "grade", "q", "d2", 9)
    assert good.result(timeout=30).value == 3
    assert db.current("grade", annotator="a") == {"a": {("q", "d1", 0): 3}}
    db.close()


def test_the_cache_follows_undo(tmp_path: Path) -> None:
    db = LabelDB(tmp_path / "l.db")
    db.record("a", "grade", "q", "d", 2)
    db.record("a", "grade", "q", "d", 5)
    assert db.current("grade", annotator="a") == {"a": {("q", "d", 0): 5}}
    undone = db.undo("a", "grade")
    assert undone is not None and undone.value == 5
    assert db.current("grade", annotator="a") == {"a": {("q", "d", 0): 2}}
    assert db.undo("a", "grade") is not None
    assert db.current("grade", annotator="a") == {}
    db.close()
