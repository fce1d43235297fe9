"""Ctrl-C at any moment of `arreio run`'s start: one line, exit 130 — never a traceback of the start-up
imports, never a silent 130 (Typer turns a Ctrl-C during its parsing into one). The real console
script, a real SIGINT. A signal that lands while the Python interpreter itself starts, or while its
import system is still finding `arreio.cli.launch` (an editable install's finder is slow), before any
of arreio's code, is the interpreter's and is not counted."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SCRIPT = Path(sys.executable).parent / "arreio"
_INTERPRETER_STARTING = ("init_import_site", "init_sys_streams", "Fatal Python error")
_ROOMS = ("cli", "engine", "memory", "learning", "curator")
_OURS = tuple(str(Path(__file__).resolve().parents[2] / room) for room in _ROOMS)
_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+', re.MULTILINE)


def _before_arreio_s_code(returncode: int, said: str) -> bool:
    """Whether how the process ended is the interpreter's own: killed by the signal in silence (it
    came before Python had set its own handler), its start-up failing, or a traceback none of whose
    frames is in arreio's code (the console script's import still being found)."""
    if returncode == -signal.SIGINT and not said:
        return True
    if any(mark in said for mark in _INTERPRETER_STARTING):
        return True
    frames = _FRAME.findall(said)
    return bool(frames) and not any(frame.startswith(_OURS) for frame in frames)


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _startup_s() -> float:
    times = []
    for _ in range(3):
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.monotonic() - started)
    return sorted(times)[1]


@pytest.mark.skipif(not SCRIPT.exists(), reason="the arreio console script is not installed next to this Python")
def test_ctrl_c_while_starting_is_one_line_and_130(tmp_path: Path, arreio_env: dict) -> None:
    base = _startup_s()
    ours = 0
    for factor in (1.5, 2, 3, 4, 6, 8, 11, 15):
        proc = subprocess.Popen(
            [str(SCRIPT), "run", "x", "--offline"],
            cwd=tmp_path,
            env=arreio_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_interruptible,
        )
        time.sleep(base * factor)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        said = err.decode(errors="replace")
        if _before_arreio_s_code(proc.returncode, said):
            continue  # before arreio's first line of code
        if proc.returncode == 0:
            break  # the run was over before the signal
        ours += 1
        lines = said.splitlines()
        assert proc.returncode == 130, said
        assert len(lines) == 1 and lines[0].startswith("arreio: cancelled"), said
        assert "Traceback" not in said
    assert ours >= 3


# What pydantic-core raised when Ctrl-C landed in a model's lazy build, as a fresh clone's run met it.
_INTERRUPTED_BUILD = (
    "Error building `model` serializer:\n  SchemaError: Error building `model-fields` serializer:\n"
    "  SchemaError: Field `unsandboxed_gates`:\n  SchemaError: Error building `default` serializer:\n"
    "  SchemaError: Error building `nullable` serializer:\n  SchemaError: Error building `literal` serializer:\n"
    "  KeyboardInterrupt: "
)


def test_a_ctrl_c_a_library_wrapped_is_still_a_cancel() -> None:
    from pydantic_core import SchemaError

    from arreio.cli.app import _cancelled_underneath

    assert _cancelled_underneath(SchemaError(_INTERRUPTED_BUILD))
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("wrapped") from interrupt
    except RuntimeError as wrapped:
        assert _cancelled_underneath(wrapped)
    # A bug stays a bug: another schema error, or the word in some other error's text.
    assert not _cancelled_underneath(SchemaError("Error building `model` serializer:\n  TypeError: bad"))
    assert not _cancelled_underneath(ValueError("KeyboardInterrupt: in a message"))


def test_only_a_traceback_outside_arreio_s_code_is_the_interpreter_s() -> None:
    finder = (
        'Traceback (most recent call last):\n  File "/venv/bin/arreio", line 5, in <module>\n'
        '  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load\n'
        '  File "/venv/lib/python3.11/site-packages/__editable___arreio_0_1_0_finder.py", line 20\n'
        "KeyboardInterrupt\n"
    )
    assert _before_arreio_s_code(-signal.SIGINT, finder)
    ours = finder.replace("/venv/bin/arreio", f"{_OURS[0]}/launch.py")
    assert not _before_arreio_s_code(-signal.SIGINT, ours)
    assert not _before_arreio_s_code(130, "arreio: cancelled\n")
    assert _before_arreio_s_code(1, "Fatal Python error: init_import_site: Failed to import the site module\n")
    assert _before_arreio_s_code(-signal.SIGINT, "")
    assert not _before_arreio_s_code(1, "") and not _before_arreio_s_code(130, "")


# Ctrl-C landing while `main` imports the signal module, before its handler is in place: an import
# that raises KeyboardInterrupt stands in for the signal, at exactly that moment.
_INTERRUPTED_IMPORT = """
import sys

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == "signal":
            raise KeyboardInterrupt
        return None

from arreio.cli.launch import main
sys.modules.pop("signal", None)
sys.meta_path.insert(0, Interrupting())
sys.argv = ["arreio", "run", "x", "--offline"]
main()
"""


def test_a_ctrl_c_before_the_start_handler_is_in_place_is_one_line_and_130(tmp_path: Path, arreio_env: dict) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IMPORT], cwd=tmp_path, env=arreio_env, capture_output=True, timeout=60
    )
    said = proc.stderr.decode(errors="replace")
    assert proc.returncode == 130, said
    assert said == "arreio: cancelled\n"
