"""Reliability: what a user, a disk, a pipe or a server can do wrong, and that each ends in
one clear error or the correct result (never a traceback, never a silent loss).

* ``test_judge_faults.py``: the judge against a fault-injecting server;
* ``test_malformed.py``: a corpus of malformed inputs for every reader and format;
* ``test_output_failures.py``: missing and read-only directories, full disks and the file
  size limit, a path component that is a file, closed pipes, for the commands;
* ``test_web_limits.py``: request bodies over their limits, JSON nested too deeply, a label
  or an export the disk refuses;
* ``test_label_writes.py``: concurrent annotators on the label database (group commit);
* ``test_hostile_inputs.py``: what an adversarial run tried through the command line: a
  dangling link and empty partitions in a partition folder, decompression bombs, a RAGAS
  CSV cell over the csv module's limit, a plugin calling ``sys.exit``;
* ``test_huge_integers.py``: integers past 64 bits in cutoffs, options, sweeps and store ids;
* ``test_irds_offline.py``: an ir_datasets dataset neither cached nor downloadable;
* ``test_web_origins.py`` and ``test_web_server.py``: the web app's Origin and Host checks,
  slow clients (read timeout) and HTTPS;
* killed writers (``kill -9``) are tested where the writers are:
  ``tests/test_store.py::test_a_killed_process_leaves_no_half_written_evaluation`` (the
  evaluation store) and
  ``tests/test_judges_cli.py::test_kill_9_mid_job_then_resume_equals_an_uninterrupted_run``
  (the judge cache).
"""
