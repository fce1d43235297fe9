"""The engine: pipeline, runner, session, tools, providers and the base types every layer shares."""
