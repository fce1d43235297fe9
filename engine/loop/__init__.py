"""The turn loop: the runner, a step's model call (retries, overflow, fallback), a reply's tool round,
how a run ends, the hooks and the `Feature` contract that rooms above plug into."""
