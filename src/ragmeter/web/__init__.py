"""The web app of ``ragmeter serve`` (FastAPI; the ``web`` extra): label graded relevance and
sub-question ratings, review agreement, evaluate, export. The core never imports this package.

* :mod:`~ragmeter.web.labels` — the label database (append-only SQLite events);
* :mod:`~ragmeter.web.collection` — queries, passages and pools to label;
* :mod:`~ragmeter.web.export` — qrels and judgments exports;
* :mod:`~ragmeter.web.review` — agreement of two label sources;
* :mod:`~ragmeter.web.security` — access token and CSRF;
* :mod:`~ragmeter.web.config` — the app's configuration from the options of ``ragmeter serve``;
* :mod:`~ragmeter.web.state` — what every route shares (database, templates, request checks);
* :mod:`~ragmeter.web.routes` — the routes, one router per concern (labelling, review,
  evaluations, exports);
* :mod:`~ragmeter.web.app` — :func:`~ragmeter.web.app.create_app`, which assembles them.
"""
