"""``ragmeter trec-eval``: a drop-in for trec_eval 10.0's command line (being built)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    print("trec-eval: not implemented yet", file=sys.stderr)
    return 2
