"""The web app's routes, one FastAPI router per concern:

* :mod:`~ragmeter.web.routes.labelling` — queries, grading pools, rating sub-questions, undo,
  the event log;
* :mod:`~ragmeter.web.routes.reviewing` — agreement of two label sources, uploads;
* :mod:`~ragmeter.web.routes.evaluations` — evaluate the runs against the labels, the stored
  evaluations and their HTML reports;
* :mod:`~ragmeter.web.routes.exports` — qrels and judgments downloads and exports;
* :mod:`~ragmeter.web.routes.monitoring` — trend pages of monitored streams, ``/metrics``.
"""
