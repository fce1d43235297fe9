"""The web as a tool family: config, fetch, search, HTML to text, the feature."""
