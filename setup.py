"""Build configuration for the optional C accelerator; everything else is in pyproject.toml.

``ragmeter._native`` speeds up TREC parsing, per-query ordering, the (query, doc) join and the
coverage measures' greedies and look-ups. It is optional: when it cannot be compiled (no C
compiler), installation goes on and ragmeter uses its pure numpy/pyarrow path, which gives
identical results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ragmeter._native",
            sources=["src/ragmeter/_native.c"],
            optional=True,
        )
    ]
)
