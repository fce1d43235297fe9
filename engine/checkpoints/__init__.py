"""Checkpoints and undo: every change an agent makes to the working tree can be taken back (docs/architecture.md
invariant 8), those made through `shell` included — the tree is snapshotted, not the tools' calls.

- `settings`  the `checkpoints:` config section, validated here
- `store`     the shadow git repository under `<state>/checkpoints/` (never the user's own `.git`)
- `secret_files` the files it never copies (`.env`, private keys, credentials), named instead
- `trees`     what its trees hold and how two of them differ
- `ignore_rules` the `.gitignore` rules a run's snapshots keep to once the run changes one
- `index`     `checkpoints/index.jsonl`: which checkpoint belongs to which run, step and calls
- `recorder`  takes a checkpoint and records it (durable before the call it protects runs)
- `plan`      pure decisions: what a round may change, the undo plan with its conflicts, pruning
- `restore`   `arreio undo`: plan, apply, checkpoint the undo itself, journal it
- `feature`   the `CheckpointFeature` that wires it into every run's tool rounds
"""
