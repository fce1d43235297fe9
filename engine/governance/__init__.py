"""Governance: what keeps autonomy under control is infrastructure, not a sentence in the prompt.

- `settings`   the `governance:` config section, validated here
- `ceilings`   tool calls, repetition, steps, tokens, cost, stall — each lands with a reserve turn
- `watchdog`   the outer time bound on model streams and tools ("no signal for N seconds")
- `policy`     allow / ask / deny per tool and argument pattern (pure)
- `approvals`  pause before sensitive calls, record decisions in the session, resume exactly
- `audit`      `.arreio/audit.jsonl`, an append-only, hash-chained journal
- `redact`     secrets never enter the journal, the session or the events
- `requests`   what each model call received, recoverable from the session
- `feature`    the `GovernanceFeature` that wires all of it into every run
"""
