"""The rules of the agent's room: which commands are allowed (policy, commands read for meaning), what
the agent never writes (protected paths), the environment it gets, and the one redactor. Pure rules and
small processes; the tools, the sandbox and the governance hooks apply them."""
