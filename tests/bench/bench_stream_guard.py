"""Benchmark (not a test): what the stream guard costs a streamed reply (issue 23).

    python tests/bench/bench_stream_guard.py [--chars N] [--chunk N]

Every text delta of every streamed reply goes through `DeltaGuard.feed`, which looks for secrets
still arriving in the text it holds. It used to scan every position of that text with the `regex`
module's partial matching (~40 alternatives tried at each); it now tries only where a match can
begin (`DeltaGuard._matches`). This streams N characters of ordinary prose (README.md's, repeated)
in deltas of `--chunk` characters through a real guard, and times, on the same texts, the finds the
guard makes now and the full scan it made before; then one long delta (2,000 characters at once, as
a provider that sends large chunks does). Prints microseconds per delta and per 1,000 characters.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _held_texts(text: str, chunk: int, env: dict[str, str]) -> list[str]:
    """The texts the guard looks at, delta by delta (what it held plus the new delta), recorded
    from a real guard as the reply streams through it."""
    from arreio.engine import events as ev
    from arreio.engine.governance.delta_guard import DeltaGuard
    from arreio.engine.governance.redact import Redactor

    guard = DeltaGuard(Redactor(env))
    seen: list[str] = []
    original = guard._matches

    def recording(held: str) -> list:
        seen.append(held)
        return original(held)

    guard._matches = recording  # type: ignore[method-assign]
    for start in range(0, len(text), chunk):
        guard.feed(ev.TextDelta(text=text[start:start + chunk]))
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=32_000)
    parser.add_argument("--chunk", type=int, default=16)
    parser.add_argument("--env-keys", action="store_true",
                        help="an environment holding two API keys (108 and 164 characters), as many users' does")
    args = parser.parse_args(argv)

    from arreio.engine.governance.delta_guard import DeltaGuard
    from arreio.engine.governance.redact import Redactor

    prose = (REPO / "README.md").read_text(encoding="utf-8")
    text = (prose * (args.chars // len(prose) + 1))[: args.chars]
    keys = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "Ab9" * 31 + "xQ", "OPENAI_API_KEY": "sk-proj-" + "Zx7" * 52}
    env = keys if args.env_keys else {}
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
