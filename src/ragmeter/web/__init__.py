"""The web app of ``ragmeter serve`` (FastAPI; the ``web`` extra): label graded relevance and
sub-question ratings, review agreement, evaluate, export. The core never imports this package.

* :mod:`~ragmeter.web.labels` — the label database (append-only SQLite events);
* :mod:`~ragmeter.web.collection` — queries, passages and pools to label;
* :mod:`~ragmeter.web.export` — qrels and judgments exports;
* :mod:`~ragmeter.web.review` — agreement of two label sources;
* :mod:`~ragmeter.web.security` — access token and CSRF;
* :mod:`~ragmeter.web.app` — :func:`~ragmeter.web.app.create_app`.
"""
