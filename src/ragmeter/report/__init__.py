"""Renderings of an evaluation: tables, JSON, CSV, TREC, trec_eval's own format."""
