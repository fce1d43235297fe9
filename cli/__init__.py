"""Command-line interface: Typer commands that parse, wire dependencies, call the library and render."""
