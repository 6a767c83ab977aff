"""Hand-written text of the example collection (a fictional city's public transit)."""
