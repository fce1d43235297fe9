"""The `arreio` console script. `arreio --version` is answered here, before the command line (Typer,
rich, every command module) is built: that costs ~10x a bare Python start, for one line of output.
Everything else goes to `arreio.cli.app.main`."""

from __future__ import annotations

import os
import sys

_DIST = "arreio-"
_INFO = ".dist-info"


def installed_version() -> str | None:
    """The installed distribution's version, read from its METADATA on `sys.path`
    (`importlib.metadata` costs 35-80 ms to import); None when arreio is not installed."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            # arreio-0.1.0.dist-info, not arreio-plugin-1.0.dist-info
            if name.startswith(_DIST) and name.endswith(_INFO) and "-" not in name[len(_DIST) : -len(_INFO)]:
                try:
                    with open(os.path.join(entry, name, "METADATA"), encoding="utf-8") as handle:
                        for line in handle:
                            if line.startswith("Version:"):
                                return line.split(":", 1)[1].strip()
                            if not line.strip():
                                break  # the headers end at the first blank line
                except OSError:
                    continue
    return None


def version_line() -> str:
    found = installed_version()
    return f"arreio {found}" if found else "arreio (not installed)"


def _cancelled_while_starting(_signum: int, _frame: object) -> None:
    """Ctrl-C before the command has started: nothing to save yet, so one line and exit 130 at once
    (a KeyboardInterrupt raised inside the start-up imports printed a whole traceback)."""
    os.write(2, b"arreio: cancelled\n")
    os._exit(130)


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(version_line())
        return
    try:  # a Ctrl-C before the handler below is in place is as early as one after it
        import signal

        # Only where Python installed its own handler: a shell's background job starts with SIGINT ignored.
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _cancelled_while_starting)
    except KeyboardInterrupt:
        _cancelled_while_starting(2, None)
    from arreio.cli import heap

    heap.hold()  # the imports below and the command's own are not walked by the collector again and again
    from arreio.cli.app import main as app_main

    app_main()  # the command line is read under this handler; the command takes Ctrl-C over (`command_started`)


def command_started() -> None:
    """The command itself begins: Ctrl-C raises KeyboardInterrupt again, for it to handle (a run keeps
    its session and says how to continue)."""
    import signal

    if signal.getsignal(signal.SIGINT) is _cancelled_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


if __name__ == "__main__":  # `python -m arreio.cli.launch`, as the console script (the tests start arreio so)
    # Through the imported module, not this `__main__` copy of it: `command_started` (reached through
    # `arreio.cli.launch`) must see the very handler `main` installed, or Ctrl-C would stay "cancelled
    # while starting" for the whole command.
    from arreio.cli.launch import main as _launch_main

    _launch_main()
