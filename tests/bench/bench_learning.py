"""Does --learn make the next run better? (a script, not a test:
`python tests/bench/bench_learning.py [--model 0.5b|1.5b] [--url http://127.0.0.1:PORT/v1]`)

The suite (tests/bench/learning/suite.yaml): eight small tasks in one scratch project whose convention
— an operation NAME lives in ops/NAME.py as op_NAME, and the project's `python3 check.py` checks it —
is in its files, never in the goal; each task's gate is that check. The real model (a local
llama-server from tests/realmodel/prepare.py's cache, greedy sampling) runs the suite twice through
`arreio batch`, in one copy of the project with its own HOME:

1. with empty memory, then `--learn` (the gated pass over the attempts that passed);
2. again, every attempt starting from what pass 1 kept in MEMORY.md / USER.md.

It prints passes, steps and tokens per task side by side, and what was learned. With greedy
sampling a repeat of the same prompt is the same run, so a second empty-memory pass would only
repeat pass 1: `--repeat K` is for a server that samples.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: this checkout's arreio
from tests.realmodel import prepare

REPO = Path(__file__).resolve().parents[2]

SUITE = Path(__file__).resolve().parent / "learning"


def arreio() -> str:
    return str(Path(sys.executable).with_name("arreio"))


def batch(root: Path, env: dict[str, str], model: str, *extra: str) -> tuple[list[dict], dict, float]:
    started = time.monotonic()
    done = subprocess.run(
        [arreio(), "batch", "suite.yaml", "--model", model, "--json", "-j", "1", *extra],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    seconds = time.monotonic() - started
    rows, summary = [], {}
    for line in done.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if item.get("type") == "attempt":
            rows.append(item)
        elif item.get("type") == "summary":
            summary = item
    if not rows:
        sys.exit(f"bench: the batch ran no attempt (exit {done.returncode}):\n{done.stderr[-3000:]}")
    if done.stderr.strip():
        print(done.stderr.strip()[-3000:], file=sys.stderr)
    return rows, summary, seconds


def table(first: list[dict], second: list[dict]) -> str:
    by_task = {r["task"]: r for r in second}
    head = (
        "| task | pass 1 (empty memory) | steps | tokens in/out | pass 2 (learned) | steps | tokens in/out |\n"
        "|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for a in first:
        b = by_task.get(a["task"], {})
        lines.append(
            f"| {a['task']} | {_verdict(a)} | {a['steps']} | {a['input_tokens']}/{a['output_tokens']} | "
            f"{_verdict(b)} | {b.get('steps', '')} | {b.get('input_tokens', '')}/{b.get('output_tokens', '')} |"
        )
    lines.append(
        f"| **all** | {_sum(first, 'passed')}/{len(first)} | {_sum(first, 'steps')} | "
        f"{_sum(first, 'input_tokens')}/{_sum(first, 'output_tokens')} | {_sum(second, 'passed')}/{len(second)} | "
        f"{_sum(second, 'steps')} | {_sum(second, 'input_tokens')}/{_sum(second, 'output_tokens')} |"
    )
    return "\n".join(lines)


def _verdict(row: dict) -> str:
    if not row:
        return ""
    return "pass" if row["passed"] else f"fail ({row['verdict']})"


def _sum(rows: list[dict], key: str) -> int:
    return sum(int(r.get(key) or 0) for r in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(prepare.MODELS), default="0.5b")
    parser.add_argument("--url", help="a llama-server already running (base URL with /v1)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder and say where")
    parser.add_argument(
        "--memory",
        type=Path,
        help="instead: one pass from this MEMORY.md (what a perfect "
        "--learn would keep: tests/bench/learning/oracle-memory.md), beside nothing else",
    )
    parser.add_argument(
        "--proposer",
        default=None,
        help="learning.proposer_model (default: the run's model; `offline`: the offline proposer)",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the server and the scratch folder are cleaned up
    spec = prepare.MODELS[args.model]
    server = None
    if args.url:
        url = args.url
    else:
        why = prepare.missing(spec)
        if why:
            print(f"bench: {why}", file=sys.stderr)
            return 2
        server, url = prepare.start_server(spec, log=prepare.CACHE / "logs" / "bench-learning.log")
    scratch = Path(tempfile.mkdtemp(prefix="arreio-learnbench-"))
    try:
        root, home = scratch / "suite", scratch / "home"
        shutil.copytree(SUITE, root)
        home.mkdir()
        # a reply cap: a small model in a loop otherwise writes 8192 tokens (an hour on a busy CPU)
        config = "max_tokens: 768\n" + (f"learning: {{proposer_model: {args.proposer}}}\n" if args.proposer else "")
        (root / ".arreio").mkdir()
        (root / ".arreio" / "config.yaml").write_text(config)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ARREIO_", "OPENAI_", "ANTHROPIC_"))}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), OPENAI_BASE_URL=url, OPENAI_API_KEY="local")
        model = f"openai/{spec.name}"
        if args.memory:
            (root / ".arreio").mkdir(exist_ok=True)
            shutil.copy(args.memory, root / ".arreio" / "MEMORY.md")
            rows, summary, seconds = batch(root, env, model)
            print(f"model {spec.name} at {url}; one pass from {args.memory} in {seconds:.0f} s\n")
            print(table(rows, []))
            print(json.dumps(summary, default=str)[:4000])
            return 0
        first, summary1, s1 = batch(root, env, model, "--learn")
        memory = {
            name: (root / ".arreio" / name).read_text() if (root / ".arreio" / name).is_file() else ""
            for name in ("MEMORY.md", "USER.md")
        }
        second, summary2, s2 = batch(root, env, model)
        print(f"model {spec.name} at {url}; pass 1 {s1:.0f} s (learning included), pass 2 {s2:.0f} s\n")
        print(table(first, second))
        print("\nlearned (MEMORY.md):\n" + (memory["MEMORY.md"].strip() or "(nothing)"))
        print("learned (USER.md):\n" + (memory["USER.md"].strip() or "(nothing)"))
        for n, rows in ((1, first), (2, second)):
            for row in rows:
                if not row["passed"]:
                    print(f"pass {n} {row['task']}: {row.get('message', '')[:300]}")
        print(json.dumps({"pass1": summary1, "pass2": summary2}, default=str)[:4000])
    finally:
        if server is not None:
            prepare.stop_server(server)
        if args.keep:
            print(f"scratch kept at {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
