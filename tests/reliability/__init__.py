"""Reliability: what a user, a disk, a pipe or a server can do wrong, and that each ends in
one clear error or the correct result (never a traceback, never a silent loss).

* ``test_judge_faults.py``: the judge against a fault-injecting server;
* ``test_malformed.py``: a corpus of malformed inputs for every reader and format;
* ``test_output_failures.py``: missing and read-only directories, full disks and the file
  size limit, a path component that is a file, closed pipes, for the commands;
* ``test_web_limits.py``: request bodies over their limits, JSON nested too deeply;
* killed writers (``kill -9``) are tested where the writers are:
  ``tests/test_store.py::test_a_killed_process_leaves_no_half_written_evaluation`` (the
  evaluation store) and
  ``tests/test_judges_cli.py::test_kill_9_mid_job_then_resume_equals_an_uninterrupted_run``
  (the judge cache).
"""
