"""The base every room stands on: events, messages, the model's request and stream (`model_io`), errors,
ports, config, ids, paths, files read safely, the summary format and token estimates. Imports nothing above it."""
