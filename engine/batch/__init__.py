"""`arreio batch`: a suite of tasks, each task × attempt one run through the one conveyor.

suite (the YAML file and its validation) → scheduler (local worker processes, or `ray_backend`) →
attempt (one isolated run: a copy of the workdir, its own state folder, setup, the run, its gates,
one result row) → results (`results.jsonl` streamed to disk, `summary.json`, resume).
"""
