HELP = "Run an agent on a goal."
def run() -> None:
    """placeholder while wiring"""
