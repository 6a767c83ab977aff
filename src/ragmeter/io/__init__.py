"""Readers and writers, one module per format."""
