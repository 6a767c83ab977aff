"""The registry imports a family's module on the first lookup of one of its names: the table
that says which module registers which name (``ragmeter.measures.catalogue``) must match what
the modules really register, and a lookup must import no family it does not read."""

from __future__ import annotations

import subprocess
import sys

from ragmeter.measures import REGISTRY, catalogue


def _module_of(fn: object) -> str:
    return str(getattr(fn, "__module__", ""))


def test_the_catalogue_names_the_module_of_every_family_name() -> None:
    built_in = [f for f in REGISTRY.families() if f.origin is None]
    found = {
        key.lower(): _module_of(f.compute).removeprefix("ragmeter.metrics.")
        for f in built_in
        for key in (f.name, *f.aliases)
    }
    assert found == catalogue.FAMILY_MODULES


def test_the_catalogue_names_every_trec_name_and_group() -> None:
    REGISTRY.families()  # every module loaded
    trec, groups = REGISTRY._trec, REGISTRY._groups
    assert set(trec) == catalogue.TREC_NAMES
    assert set(groups) == catalogue.TREC_GROUPS
    assert {_module_of(fn) for fn in (*trec.values(), *groups.values())} == {catalogue.TREC_MODULE}


def test_the_catalogue_lists_every_module_that_registers() -> None:
    modules = {f"ragmeter.metrics.{m}" for m in catalogue.FAMILY_MODULES.values()}
    assert modules | {catalogue.TREC_MODULE} == set(catalogue.MODULES)


#: parses the names in argv, then prints the family modules imported
PROBE = """
import sys
from ragmeter.measures import REGISTRY, parse_measures
parse_measures(sys.argv[1:-1]) if sys.argv[-1] == "own" else REGISTRY.parse_trec(sys.argv[1])
print(" ".join(sorted(m for m in sys.modules if m.startswith("ragmeter.metrics."))))
"""


def _imported(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True
    )
    return {m.removeprefix("ragmeter.metrics.") for m in done.stdout.split()}


def test_a_lookup_imports_only_the_families_it_reads() -> None:
    ranking = {"ranking", "gains", "_segments"}
    assert _imported("ndcg@10", "map", "P@10", "own") == ranking
    assert _imported("span_recall@5", "own") == {"spans", "_segments"}
    assert _imported("P_10", "trec") == ranking | {"trec", "trec_measures"}
    assert _imported("all_trec", "trec") == ranking | {"trec", "trec_measures"}
