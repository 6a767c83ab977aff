"""Running retrieval pipelines: the harness for your own callables (:mod:`.harness`) and the
built-in baseline retrievers (:mod:`.baselines`).

Nothing is imported here, so that ``import ragmeter.pipeline.<module>`` loads only that module.
"""
