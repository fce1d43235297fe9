"""What plugs tools and tracing into a run: which tools a run offers (the resolver), the sandbox's
warnings, MCP servers, web tools, sub-agents, OpenTelemetry, and the engine's default feature set."""
