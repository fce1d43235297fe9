"""Benchmark (not a test): what finding a known secret in its other spellings costs the redactor.

    python tests/bench/bench_spellings.py [--chars N] [--chunk N] [--rounds N]

The redactor hides the environment's secrets reversed, in base64, hex, percent-encoded and broken in
pieces (`engine/walls/spellings.py`): a `str.find` for each spelling's anchor on every text,
and a squeeze of the text after an anchor where one is found. This times, for three environments
(none; two API keys; two API keys and a private key, whose lines are spellings of their own):

- building the run's redactor (once per run);
- `Redactor.text` on N characters of prose (README.md's) and on a session line holding a tool
  result of that prose, JSON-encoded (each text new, so nothing is remembered);
- a streamed reply of N characters in `--chunk`-character deltas through a `DeltaGuard`;

each with the spellings pass and without it (the same redactor with an empty `Spellings`), so the
difference is what the pass costs. Best of `--rounds`; microseconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

KEYS = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "Ab9" * 31 + "xQ", "OPENAI_API_KEY": "sk-proj-" + "Zx7" * 52}


def _pem() -> str:
    """A 2048-bit RSA key's PEM, made here (the `cryptography` package) or a fixed stand-in of its shape."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError:
        import base64
        import random

        body = base64.b64encode(random.Random(7).randbytes(1190)).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return (
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
            + "\n".join(lines)
            + "\n-----END PRIVATE KEY-----\n"
        )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _best(rounds: int, work) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=32_000)
    parser.add_argument("--chunk", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)

    from arreio.engine.core import events as ev
    from arreio.engine.walls.delta_guard import DeltaGuard
    from arreio.engine.walls.redact import Redactor
    from arreio.engine.walls.spellings import Spellings

    prose = (REPO / "README.md").read_text(encoding="utf-8")
    text = (prose * (args.chars // len(prose) + 1))[: args.chars]
    line = json.dumps({"type": "message", "role": "tool", "content": [{"type": "tool_result", "content": text}]})
    envs = {"no secrets": {}, "two API keys": KEYS, "two keys + a private key": {**KEYS, "DEPLOY_KEY": _pem()}}
    print(f"{args.chars:,} characters; best of {args.rounds}; times in microseconds")
    print(f"{'environment':<26} {'pass':<5} {'build':>8} {'prose':>9} {'JSON line':>10} {'stream':>9} {'a delta':>8}")
    for label, env in envs.items():
        build = _best(args.rounds, lambda env=env: Redactor(env))
        for spelled in (False, True):
            redactor = Redactor(env)
            if not spelled:
                redactor._spellings = Spellings({})
            anchors = len(redactor._spellings.anchors)
            # A new string each time: `CleanTexts` remembers a text object found clean.
            fresh = iter(range(10**9))
            on_prose = _best(args.rounds, lambda r=redactor, n=fresh: r.text(text + str(next(n))))
            on_line = _best(args.rounds, lambda r=redactor, n=fresh: r.text(line + str(next(n))))

            def stream(r=redactor) -> None:
                guard = DeltaGuard(r)
                for start in range(0, len(text), args.chunk):
                    guard.feed(ev.TextDelta(text=text[start : start + args.chunk]))
                guard.flush()

            streamed = _best(max(1, args.rounds // 2), stream)
            deltas = (len(text) + args.chunk - 1) // args.chunk
            name = f"on ({anchors})" if spelled else "off"
            print(
                f"{label:<26} {name:<5} {build * 1e6 if spelled else 0:8.0f} {on_prose * 1e6:9.0f} "
                f"{on_line * 1e6:10.0f} {streamed * 1e6:9.0f} {streamed / deltas * 1e6:8.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
