"""The learned judge's defaults, apart from its maths so that the command line can show them
without importing numpy (``ragmeter --version`` and ``--help`` stay light)."""

#: the labels a topic needs for its own adapter (``--min-labels``)
DEFAULT_MIN_LABELS = 64
#: ridge penalty of the pooled model and of each topic adapter
DEFAULT_ALPHA = 0.1
DEFAULT_ADAPTER_ALPHA = 1.0
#: folds of the held-out validation and bootstrap resamples of its intervals
DEFAULT_FOLDS = 5
DEFAULT_RESAMPLES = 1000
