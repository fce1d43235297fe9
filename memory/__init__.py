"""Memory: the bounded MEMORY.md/USER.md snapshot store, append-only substores, knowledge base."""
