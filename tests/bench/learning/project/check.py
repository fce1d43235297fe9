"""The project's own check: `python3 check.py NAME ARG... EXPECTED` imports ops/NAME.py and calls
op_NAME(ARG...); exit 0 when it returns EXPECTED."""

import importlib
import sys

name, *args, expected = sys.argv[1:]
module = importlib.import_module(f"ops.{name}")
got = getattr(module, f"op_{name}")(*(int(a) for a in args))
if got != int(expected):
    sys.exit(f"op_{name}{tuple(int(a) for a in args)} returned {got!r}, expected {expected}")
print(f"ok: op_{name}")
