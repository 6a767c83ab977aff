"""Running retrieval pipelines: the harness for your own callables (:mod:`.harness`), baseline
retrievers (:mod:`.baselines`) and the all-MiniLM-L6-v2 sentence encoder (:mod:`.embeddings`).

Nothing is imported here, so that ``import ragmeter.pipeline.<module>`` loads only that module;
each module imports its optional packages (onnxruntime, tokenizers, bm25s…) on first use and
names the extra to install when one is missing.
"""
