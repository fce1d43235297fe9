"""The conveyor every run goes through: prepare (the edge), units on the runner, gates, promises, the report."""
