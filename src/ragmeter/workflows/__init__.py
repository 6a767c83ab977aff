"""Workflows: what the commands do between parsing their options and printing, as library
functions over files (layer 7: above ``report``, below ``web`` and ``commands``).

* :mod:`~ragmeter.workflows.evaluate` — evaluate run files (one evaluation or a cutoff sweep);
* :mod:`~ragmeter.workflows.compare` — compare run files with a baseline;
* :mod:`~ragmeter.workflows.report` — the HTML report of run files;
* :mod:`~ragmeter.workflows.history` — compare two saved evaluations;
* :mod:`~ragmeter.workflows.saving` — save an evaluation with the hashes of its files;
* :mod:`~ragmeter.workflows.demo` — the steps of ``ragmeter demo``.

Each takes a request (a frozen dataclass grouping the options) and returns the results;
the modules import their heavy dependencies inside the functions, so the command line starts
fast.
"""
