"""The opt-in post-run learning pass: proposer -> validate -> gate -> apply."""
