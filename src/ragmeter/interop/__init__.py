"""Bridges to other evaluation tools: ragmeter's measures inside ir_measures (and so
PyTerrier's ``pt.Experiment``), see :mod:`ragmeter.interop.irm_provider`."""
