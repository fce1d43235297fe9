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


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(version_line())
        return
    from arreio.cli import heap

    heap.hold()  # the imports below and the command's own are not walked by the collector again and again
    from arreio.cli.app import main as app_main

    app_main()
