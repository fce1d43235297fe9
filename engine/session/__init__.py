"""Sessions on disk: the crash-safe JSONL file, the folder of sessions, the one-run lock, healing on load."""
