"""Benchmark (not a test): what the stream guard costs a streamed reply.

    python tests/bench/bench_stream_guard.py [--chars N] [--chunk N] [--env-keys]
    python tests/bench/bench_stream_guard.py --cli [--other PATH] [--runs N] [--env-keys]

Every text delta of every streamed reply goes through `DeltaGuard.feed`, which looks for secrets
still arriving in the text it holds. It used to scan every position of that text with the `regex`
module's partial matching (~40 alternatives tried at each); it now tries only where a match can
begin (`DeltaGuard._matches`). This streams N characters of ordinary prose (README.md's, repeated)
in deltas of `--chunk` characters through a real guard, and times, on the same texts, the finds the
guard makes now and the full scan it made before; then one long delta (2,000 characters at once, as
a provider that sends large chunks does). Prints microseconds per delta and per 1,000 characters.

`--cli` times it the way a user meets it: `arreio run --script … --json` (every feature wired)
streams the same reply in deltas of `--chunk` characters; the parent stamps the first and the last
`text_delta` line as each arrives, and prints the median of `--runs` runs of that stretch and of the
whole command, for this checkout's `arreio` and, with `--other`, another checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _held_texts(text: str, chunk: int, env: dict[str, str]) -> list[str]:
    """The texts the guard looks at, delta by delta (what it held plus the new delta), recorded
    from a real guard as the reply streams through it."""
    from arreio.engine.core import events as ev
    from arreio.engine.walls.delta_guard import DeltaGuard
    from arreio.engine.walls.redact import Redactor

    guard = DeltaGuard(Redactor(env))
    seen: list[str] = []
    original = guard._matches

    def recording(held: str) -> list:
        seen.append(held)
        return original(held)

    guard._matches = recording  # type: ignore[method-assign]
    for start in range(0, len(text), chunk):
        guard.feed(ev.TextDelta(text=text[start : start + chunk]))
    guard.flush()
    return seen


def _time(label: str, texts: list[str], find, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            find(text)
        best = min(best, time.perf_counter() - start)
    chars = sum(map(len, texts))
    print(f"  {label:<28} {best / len(texts) * 1e6:8.1f} us a delta   {best / chars * 1e9:8.1f} us per 1,000 chars")
    return best


def _cli_once(exe: str, folder: Path, env: dict[str, str]) -> tuple[float, float]:
    """(first → last text_delta, whole command) of one `arreio run` streaming the scripted reply."""
    start = time.perf_counter()
    first = last = None
    with subprocess.Popen(
        [exe, "run", "--goal", "GOAL.md", "--script", "script.json", "--json"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            if line.startswith(b'{"type":"text_delta"'):
                last = time.perf_counter()
                first = first or last
    # README's prose claims commands it never ran: the promise gate fails the run (exit 1) after the stream.
    assert process.returncode in (0, 1) and first is not None and last is not None, (exe, process.returncode)
    return last - first, time.perf_counter() - start


def cli(args: argparse.Namespace, text: str, env_keys: dict[str, str]) -> int:
    exes = {"this checkout": str(Path(sys.executable).with_name("arreio"))}
    if args.other:
        exes["other"] = args.other
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(env_keys)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in exes}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "GOAL.md").write_text("# Explain\n\nExplain at length.\n")
        (root / "script.json").write_text(json.dumps({"replies": [{"text": text, "chunk_chars": args.chunk}]}))
        for exe in exes.values():
            _cli_once(exe, root, env)  # bytecode written, caches warm
        for _ in range(args.runs):
            for name, exe in exes.items():  # interleaved: the machine's swings hit both alike
                times[name].append(_cli_once(exe, root, env))
    print(
        f"arreio run --script --json: a {len(text):,}-character reply in {args.chunk}-character deltas, "
        f"median of {args.runs}{' (two API keys in the environment)' if env_keys else ''}"
    )
    for name, runs in times.items():
        stream = statistics.median(r[0] for r in runs) * 1e3
        whole = statistics.median(r[1] for r in runs) * 1e3
        print(f"  {name:<14} first → last delta {stream:7.0f} ms   whole command {whole:7.0f} ms")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=32_000)
    parser.add_argument("--chunk", type=int, default=16)
    parser.add_argument("--cli", action="store_true", help="time the real `arreio run` streaming the reply")
    parser.add_argument("--other", help="another arreio executable to time alongside (--cli)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--env-keys",
        action="store_true",
        help="an environment holding two API keys (108 and 164 characters), as many users' does",
    )
    args = parser.parse_args(argv)

    from arreio.engine.walls.delta_guard import DeltaGuard
    from arreio.engine.walls.redact import Redactor

    prose = (REPO / "README.md").read_text(encoding="utf-8")
    text = (prose * (args.chars // len(prose) + 1))[: args.chars]
    keys = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "Ab9" * 31 + "xQ", "OPENAI_API_KEY": "sk-proj-" + "Zx7" * 52}
    env = keys if args.env_keys else {}
    if args.cli:
        return cli(args, text, env)
    guard = DeltaGuard(Redactor(env))
    scan = lambda held: list(guard._partial.finditer(held, partial=True))  # noqa: E731 - the scan it made before
    for label, texts in (
        (f"{args.chars:,} chars in {args.chunk}-char deltas", _held_texts(text, args.chunk, env)),
        (f"{args.chars:,} chars in 200-char deltas", _held_texts(text, 200, env)),
        ("one 2,000-char delta", [text[:2000]]),
    ):
        print(f"{label}: {len(texts)} texts looked at, {sum(map(len, texts)):,} chars in all")
        now = _time("tried where one can begin", texts, guard._matches, rounds=5)
        before = _time("every position (before)", texts, scan, rounds=2 if len(texts) > 1 else 5)
        print(f"  ratio before / now: {before / now:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
