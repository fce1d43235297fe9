"""Benchmark (not a test): what the memory scan costs a write, a full store and a new session.

    python tests/bench/bench_scan.py [--rounds N] [--rules-only]

A store is the honest preferences, facts and commands of fixtures/scan/benign.yaml filled to the
MEMORY.md limit (2,200 chars). Times, as the median of `--rounds` runs:

- one write check cold (nothing folded before: `scan_text` of the new entry and `scan_store`);
- a full-store scan cold (the store as one text), and every entry on its own (as the snapshot
  renders them at session start);
- with the meaning check (`arreio[vectors]` installed): the same with every verdict cached (in this
  process, and on disk for a new process), the first embedding of an entry not seen before, and
  loading the model and the examples (once per process, and only when some text is new).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _median_ms(action, rounds: int, before=None) -> float:
    runs = []
    for _ in range(rounds):
        if before is not None:
            before()
        start = time.perf_counter()
        action()
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--rules-only", action="store_true", help="as without arreio[vectors]")
    args = parser.parse_args(argv)

    import os

    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="arreio-bench-"))
    if args.rules_only:
        os.environ["ARREIO_KB_EMBEDDER"] = "none"
    from ruamel.yaml import YAML

    from arreio.memory import normalise, scan_meaning
    from arreio.memory.entries import JOINER
    from arreio.memory.scan import scan_store, scan_text

    cases = YAML(typ="safe", pure=True).load((REPO / "fixtures/scan/benign.yaml").read_text())["cases"]
    store: list[str] = []
    for case in cases:
        if case["kind"] in ("preference", "project_fact", "command", "multilingual"):
            if len(JOINER.join([*store, case["text"]])) > 2200:
                break
            store.append(case["text"])
    print(f"store: {len(store)} entries, {len(JOINER.join(store))} chars")

    start = time.perf_counter()
    meaning = scan_meaning._reader()
    load_ms = (time.perf_counter() - start) * 1000
    print(f"meaning check: {f'on, model and examples loaded in {load_ms:.0f} ms' if meaning else 'off (rules only)'}")

    def write() -> None:
        scan_text(store[-1])
        scan_store(store[:-1], store)

    def whole() -> None:
        scan_text(JOINER.join(store))

    def snapshot() -> None:
        for entry in store:
            scan_text(entry)

    for entry in store:  # every verdict of the meaning check cached, as for a store already seen
        scan_text(entry)
    print(f"one write check, cold fold       {_median_ms(write, args.rounds, normalise.clear_cache):7.2f} ms")
    print(f"full-store scan, cold fold       {_median_ms(whole, args.rounds, normalise.clear_cache):7.2f} ms")
    print(f"each entry (the snapshot), cold  {_median_ms(snapshot, args.rounds, normalise.clear_cache):7.2f} ms")
    if meaning is not None:
        fresh = iter(range(10**9))

        def new_entry() -> None:
            scan_text(f"Le dépôt numéro {next(fresh)} utilise pnpm ; ne jamais utiliser npm.")

        print(f"a new entry, first embedding     {_median_ms(new_entry, args.rounds):7.2f} ms")
        print(f"verdicts cached on disk: {meaning.disk}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
