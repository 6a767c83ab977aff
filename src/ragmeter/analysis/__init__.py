"""What a report and a diagnosis show, computed from an evaluation: the report model,
the PROC × %PROC diagnosis, per-query views and the regression gate."""
