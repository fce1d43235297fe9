import typer
app = typer.Typer(help="Inspect and repair saved sessions.")
