"""MCP servers as a tool family: config, the hub of connections, the tool wrapper, the feature, and
where each server's output is logged (`logs`)."""
