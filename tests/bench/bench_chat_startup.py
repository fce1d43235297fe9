"""How soon `arreio chat` is ready: launch → the prompt drawn in a real pseudo-terminal, against the floor
on the same machine (the interpreter alone, and `arreio --help`, which loads the CLI without a chat).

    python tests/bench/bench_chat_startup.py [runs]

Prints the minimum and the median of each, in milliseconds. The minimum is the figure to compare
(the machine is shared: a median measures the neighbours too)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.chat.chatterm import ChatTerminal


def _prompt_ms(work: Path, env: dict[str, str], *args: str) -> float:
    start = time.monotonic()
    term = ChatTerminal(work, env, *args)
    term.prompt(timeout=30)
    took = (time.monotonic() - start) * 1000
    term.type("\x04")
    term.wait()
    return took


def _run_ms(argv: list[str], work: Path, env: dict[str, str]) -> float:
    start = time.monotonic()
    subprocess.run(argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.monotonic() - start) * 1000


def main(runs: int = 10) -> None:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        env = {**os.environ, "HOME": folder}
        figures = {
            "python -c pass": [_run_ms([sys.executable, "-c", "pass"], work, env) for _ in range(runs)],
            "arreio --help": [
                _run_ms([sys.executable, "-m", "arreio.cli.launch", "--help"], work, env) for _ in range(runs)
            ],
            "arreio chat → prompt": [_prompt_ms(work, env) for _ in range(runs)],
        }
        (work / "s.yaml").write_text("- text: hi\n")
        figures["arreio chat --continue → prompt"] = []
        subprocess.run(
            [sys.executable, "-m", "arreio.cli.launch", "run", "hello", "--script", "s.yaml"],
            cwd=work,
            env=env,
            capture_output=True,
            check=False,
        )
        figures["arreio chat --continue → prompt"] = [_prompt_ms(work, env, "--continue") for _ in range(runs)]
    for name, values in figures.items():
        print(f"{name:<34} min {min(values):6.0f} ms · median {statistics.median(values):6.0f} ms  ({runs} runs)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
