"""Verdicts on what the loop answered: the claims an answer makes, promises held against the world,
and a plan's gates."""
