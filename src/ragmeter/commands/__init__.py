"""Commands of the ``ragmeter`` CLI beyond ``evaluate``: one module per command family.

Each module defines ``register(app)`` adding its typer commands; :mod:`ragmeter.cli` calls it
at start-up, so modules keep heavy imports inside the command functions.
"""
