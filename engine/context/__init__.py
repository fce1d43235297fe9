"""Context engineering: token estimates, the window, pruning, compaction and its summary, result sets."""
