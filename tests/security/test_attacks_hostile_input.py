"""Area 6 — hostile input files: every file arreio reads may be a FIFO, /dev/zero, a sparse 2 GB file,
a folder, a symlink loop, a billion laughs or 50,000 levels deep. The answer is one line and exit 2
(5 for a config file), never a hang, a traceback or the machine's memory.

Two kinds of attempt:
- files a person hands arreio (`--goal`, `--plan`, `--script`, `--output-schema`, a suite, a
  cassette, a config) or that arreio keeps in its state (memory, skills, sessions, the journal, the
  checkpoint index) — made hostile before the command runs;
- files the agent plants during a run for arreio itself to read on the host: a gate's file, a file
  the promise gate checks, `.gitignore` for the checkpoint store's git, and the file tools' targets.

Every command here runs under a 1 GB address-space limit, so a runaway read fails in seconds (as a
traceback, which fails the test) instead of eating the machine; FIFOs are watched (`FifoWatch`), so
a blocked host reader is reported and released instead of hanging the suite.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.security.arena import Arena, Run, call, sh, turn
from tests.security.listeners import FifoWatch

CAP = 1 << 30  # arreio runs in ~50 MB; a runaway read meets this in a second or two
HANG_S = 10  # a refusal takes a second or two; a billion laughs expanding would take forever


def laughs(levels: int = 9) -> str:
    """A YAML billion laughs: `l<levels>` expands to 9**levels strings."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def _indent(text: str, by: str) -> str:
    return "".join(by + line + "\n" for line in text.splitlines())


DEEP_JSON = "[" * 50_000 + "]" * 50_000
DEEP_YAML = "a: " + "[" * 50_000 + "]" * 50_000 + "\n"


def make_hostile(path: Path, kind: str, *, yaml_wrap: str = "") -> None:
    """Make `path` the `kind` of hostile file (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "sparse-2gb":
        with open(path, "wb") as handle:
            handle.truncate(2 << 30)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink-loop":
        path.symlink_to(path.name + ".b")
        path.with_name(path.name + ".b").symlink_to(path.name)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "billion-laughs":
        path.write_text(yaml_wrap.format(laughs=_indent(laughs(), "  ")) if yaml_wrap else laughs())
    elif kind == "deep-json":
        path.write_text(DEEP_JSON)
    elif kind == "deep-json-line":
        path.write_text('{"type":"message","x":' + DEEP_JSON + "}\n")
    elif kind == "deep-yaml":
        path.write_text(DEEP_YAML)
    else:
        raise ValueError(kind)


def assert_refused(run: Run, what: str, codes: tuple[int, ...] = (2,), max_lines: int = 1) -> None:
    """One clean line on stderr (`max_lines` where a command notes each file it skips), the documented
    exit code, no traceback."""
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert not run.traceback and run.code in codes and 1 <= len(lines) <= max_lines, (
        f"{what}: not one clean refusal\n{run.show()}"
    )


def assert_survived(run: Run, what: str, watch: FifoWatch | None = None) -> None:
    """The run went on (or stopped cleanly) without a traceback, and no host process blocked on a FIFO."""
    assert not run.traceback and run.code in (0, 1, 2, 3, 4, 5), f"{what}: crashed\n{run.show()}"
    assert watch is None or not watch.blocked, f"{what}: arreio (or a git it ran) blocked on {sorted(watch.blocked)}"


# -- files a person hands arreio --------------------------------------------------------------------
PLAN_LAUGHS = "version: 1\nunits: [{{id: u, goal: Do it.}}]\nlearning:\n{laughs}"
SUITE_LAUGHS = "version: 1\ntasks: [{{id: t, goal: Do it.}}]\ndefaults: {{tools: [read_file]}}\nx-extra:\n{laughs}"
CLI_FILES = {
    "goal-devzero": ("--goal", "devzero"),
    "goal-sparse-2gb": ("--goal", "sparse-2gb"),
    "goal-directory": ("--goal", "directory"),
    "goal-symlink-loop": ("--goal", "symlink-loop"),
    "plan-billion-laughs": ("--plan", "billion-laughs"),
    "plan-deep-yaml": ("--plan", "deep-yaml"),
    "plan-devzero": ("--plan", "devzero"),
    "script-devzero": ("--script", "devzero"),
    "script-deep-json": ("--script", "deep-json"),
    "script-sparse-2gb": ("--script", "sparse-2gb"),
    "output-schema-deep-json": ("--output-schema", "deep-json"),
    "output-schema-devzero": ("--output-schema", "devzero"),
    "replay-cassette-deep-json-line": ("--replay", "deep-json-line"),
    "replay-cassette-devzero": ("--replay", "devzero"),
}


@pytest.mark.parametrize("attempt", sorted(CLI_FILES))
def test_a_hostile_file_given_on_the_command_line(arena: Arena, attempt: str) -> None:
    flag, kind = CLI_FILES[attempt]
    path = arena.root / "given" / "input"
    make_hostile(path, kind, yaml_wrap=PLAN_LAUGHS if flag == "--plan" else "")
    args = {
        "--goal": ["--offline"],
        "--plan": ["--offline"],
        "--script": ["Say hi."],
        "--output-schema": ["Say hi.", "--offline"],
        "--replay": ["Say hi."],
    }[flag]
    run = arena.arreio("run", "--json", flag, str(path), *args, memory_cap=CAP, timeout=HANG_S)
    assert_refused(run, attempt)


def test_a_hostile_batch_suite(arena: Arena) -> None:
    path = arena.root / "suite.yaml"
    make_hostile(path, "billion-laughs", yaml_wrap=SUITE_LAUGHS)
    assert_refused(arena.arreio("batch", str(path), memory_cap=CAP, timeout=HANG_S), "suite billion-laughs")


@pytest.mark.parametrize(
    "which,kind", [("project", "billion-laughs"), ("project", "devzero"), ("user", "sparse-2gb"), ("user", "fifo")]
)
def test_a_hostile_config_file(arena: Arena, which: str, kind: str) -> None:
    path = (arena.home / ".config" / "arreio" / "config.yaml") if which == "user" else (arena.state / "config.yaml")
    make_hostile(path, kind, yaml_wrap="mcp_servers: {{}}\nx-extra:\n{laughs}")
    with FifoWatch([path]) as watch:
        run = arena.arreio("run", "Say hi.", "--offline", "--json", memory_cap=CAP, timeout=HANG_S)
    assert not watch.blocked, f"arreio blocked reading the {which} config FIFO"
    assert_refused(run, f"{which} config {kind}", codes=(2, 5))


# -- files arreio keeps in its state ---------------------------------------------------------------------
STATE_FILES = {
    "memory-md-devzero": ("MEMORY.md", "devzero", ["run", "Say hi.", "--offline", "--json"]),
    "memory-md-sparse-2gb": ("MEMORY.md", "sparse-2gb", ["run", "Say hi.", "--offline", "--json"]),
    "user-md-fifo": ("USER.md", "fifo", ["run", "Say hi.", "--offline", "--json"]),
    "skill-md-fifo": ("skills/notes/SKILL.md", "fifo", ["run", "Say hi.", "--offline", "--json"]),
    "skill-md-devzero": ("skills/notes/SKILL.md", "devzero", ["skills", "list"]),
    "skill-frontmatter-billion-laughs": ("skills/notes/SKILL.md", "skill-laughs", ["skills", "list"]),
    "skills-usage-deep-json": ("skills/.usage.json", "deep-json", ["curator", "status"]),
    "session-deep-json-line": ("sessions/s1.jsonl", "deep-json-line", ["sessions", "show", "s1"]),
    "audit-journal-deep-json-line": ("audit.jsonl", "deep-json-line", ["audit", "verify"]),
    "audit-journal-devzero": ("audit.jsonl", "devzero", ["audit", "tail"]),
    "checkpoint-index-deep-json-line": ("checkpoints/index.jsonl", "deep-json-line", ["checkpoints", "list"]),
    "context-calibration-deep-json": (
        "context_calibration.json",
        "deep-json",
        ["run", "Say hi.", "--offline", "--json"],
    ),
}


@pytest.mark.parametrize("attempt", sorted(STATE_FILES))
def test_a_hostile_file_in_the_state_folder(arena: Arena, attempt: str) -> None:
    rel, kind, args = STATE_FILES[attempt]
    path = arena.state / rel
    if kind == "skill-laughs":
        path.parent.mkdir(parents=True)
        path.write_text("---\nname: notes\ndescription: Notes.\ntags: *l9\n" + laughs() + "---\nBody.\n")
    else:
        make_hostile(path, kind)
    with FifoWatch([path]) as watch:
        run = arena.arreio(*args, memory_cap=CAP, timeout=HANG_S)
    assert_survived(run, attempt, watch)
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(lines) <= 2, f"{attempt}: {len(lines)} lines on stderr\n{run.show()}"


@pytest.mark.parametrize("kind", ["devzero", "fifo", "sparse-2gb"])
def test_a_hostile_file_for_kb_add(arena: Arena, kind: str) -> None:
    """`kb add` notes each file it skips, then says there is nothing to index (exit 2)."""
    make_hostile(arena.work / "big.md", kind)
    with FifoWatch([arena.work / "big.md"]) as watch:
        run = arena.arreio("kb", "add", "big.md", memory_cap=CAP, timeout=HANG_S)
    assert not watch.blocked, "kb add blocked on a FIFO"
    assert_refused(run, f"kb add {kind}", max_lines=2)


# -- files the agent plants for arreio to read ------------------------------------------------------------
def _plan_with_file_gate(arena: Arena) -> Path:
    return arena.write(
        "plan.yaml",
        "version: 1\nunits: [{id: u, goal: Write out.txt.}]\ngates: [{kind: file, path: out.txt, pattern: 'done'}]\n",
        base=arena.root,
    )


@pytest.mark.parametrize("kind", ["fifo", "devzero", "sparse-2gb"])
def test_the_file_gate_reads_what_the_agent_left(arena: Arena, kind: str) -> None:
    plant = {"fifo": "mkfifo out.txt", "devzero": "ln -s /dev/zero out.txt", "sparse-2gb": "truncate -s 2G out.txt"}[
        kind
    ]
    script = arena.script([turn(sh(plant)), {"text": "Wrote out.txt."}])
    with FifoWatch([arena.work / "out.txt"]) as watch:
        run = arena.arreio(
            "run",
            "--plan",
            str(_plan_with_file_gate(arena)),
            "--script",
            str(script),
            "--json",
            "--yes",
            memory_cap=CAP,
            timeout=HANG_S,
        )
    assert_survived(run, f"file gate on {kind}", watch)


def test_the_promise_gate_meets_a_symlink_loop(arena: Arena) -> None:
    script = arena.script([turn(sh("ln -s b.md a.md && ln -s a.md b.md")), {"text": "Wrote `a.md` and `b.md`."}])
    run = arena.arreio("run", "Write a.md.", "--script", str(script), "--json", "--yes", memory_cap=CAP, timeout=HANG_S)
    assert_survived(run, "promise gate on a symlink loop")


@pytest.mark.parametrize("name", [".gitignore", "sub/.gitignore", ".gitattributes"])
def test_the_checkpoint_store_meets_a_fifo(arena: Arena, name: str) -> None:
    """A FIFO where git reads its ignore or attribute rules: the checkpoint after the round runs git."""
    folder = os.path.dirname(name) or "."
    with FifoWatch([arena.work / name]) as watch:
        run = arena.attack(
            [turn(sh(f"mkdir -p {folder} && rm -f {name} && mkfifo {name}")), turn(sh("echo x >> notes.md"))],
            memory_cap=CAP,
            timeout=HANG_S,
        )
    assert_survived(run, f"checkpoint with {name} a FIFO", watch)


TOOL_TARGETS = {
    "read_file-fifo": ("mkfifo pipe", call("read_file", path="pipe")),
    "grep-tree-with-fifo": ("mkfifo pipe", call("grep", pattern="needle", path=".")),
    "edit_file-fifo": ("mkfifo pipe", call("edit_file", path="pipe", old_string="a", new_string="b")),
    "read_file-sparse-2gb": ("truncate -s 2G pipe", call("read_file", path="pipe")),
    "grep-sparse-2gb": ("truncate -s 2G pipe", call("grep", pattern="needle", path="pipe")),
    "read_file-symlink-loop": ("ln -s pipe2 pipe && ln -s pipe pipe2", call("read_file", path="pipe")),
    "list_dir-symlink-loop": ("ln -s pipe2 pipe && ln -s pipe pipe2", call("list_dir", path="pipe")),
    "grep-symlink-loop": ("ln -s pipe2 pipe && ln -s pipe pipe2", call("grep", pattern="needle", path="pipe")),
}


@pytest.mark.parametrize("attempt", sorted(TOOL_TARGETS))
def test_a_file_tool_meets_a_hostile_target(arena: Arena, attempt: str) -> None:
    plant, tool_call = TOOL_TARGETS[attempt]
    with FifoWatch([arena.work / "pipe"]) as watch:
        run = arena.attack([turn(sh(plant)), turn(tool_call)], memory_cap=CAP, timeout=HANG_S)
    assert_survived(run, attempt, watch)
    assert run.tool_ends(tool_call["name"]), f"{attempt}: the run never finished the call\n{run.show()}"


def test_write_file_onto_a_fifo(arena: Arena) -> None:
    with FifoWatch([arena.work / "pipe"], writers=True) as watch:
        run = arena.attack(
            [turn(sh("mkfifo pipe")), turn(call("write_file", path="pipe", content="hello\n"))],
            memory_cap=CAP,
            timeout=HANG_S,
        )
    assert_survived(run, "write_file onto a FIFO", watch)


HOSTILE_ARGS = {
    "nul-byte-in-path": call("read_file", path="notes\u0000.md"),
    "path-of-100k-chars": call("read_file", path="a/" * 50_000 + "x"),
    "lone-surrogate-in-content": call("write_file", path="s.txt", content="bad \ud800 text"),
    "shell-50k-nested-substitutions": sh("echo " + "$(" * 50_000 + ")" * 50_000),
}


@pytest.mark.parametrize("attempt", sorted(HOSTILE_ARGS))
def test_hostile_tool_arguments_are_data_not_a_crash(arena: Arena, attempt: str) -> None:
    """What the model sends is input too: a bad call is an error result, the run goes on."""
    run = arena.attack([turn(HOSTILE_ARGS[attempt])], memory_cap=CAP, timeout=HANG_S)
    assert_survived(run, attempt)
    assert run.code == 0 and run.tool_ends(), f"{attempt}: the run did not go on past the call\n{run.show()}"
