"""One run from start to `done`: prepare (the edge: options, deps, session, context), the pipeline, plan
units on the runner, the plan file, the goal, and the `--learn` stage."""
