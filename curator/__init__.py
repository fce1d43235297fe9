"""Skills on disk, usage telemetry and the deterministic lifecycle (never deletes)."""
