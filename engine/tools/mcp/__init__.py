"""MCP servers as a tool family: config, the hub of connections and each `connection`, the tool
wrapper, the `resources` tools, `prompts` (listed, or rendered as a goal), the servers'
`instructions` block, the feature, and where each server's output is logged (`logs`)."""
