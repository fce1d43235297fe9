"""Area 1 — code the agent wrote, run on the host by something arreio starts.

Every payload writes `host/MARK-<attempt>`, a folder the sandbox sees read-only: a marker there was
written by a process outside the sandbox. Each attempt plants its payload from the sandboxed shell
(or a file tool), then lets arreio do what it does next — start an MCP server, judge a gate, take a
checkpoint, show a diff, undo, start again — and asserts no marker appeared.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.security.arena import REPO, SYSTEM_PATH, Arena, call, sh, turn

PY = sys.executable  # the interpreter the project's own MCP server runs with
FIXTURE_SERVER = REPO / "fixtures" / "mcp" / "wire_server.py"


def _again(arena: Arena, **kw) -> None:
    """The user's next run in the project (a model that answers at once)."""
    arena.arreio("run", "Carry on.", "--script", str(arena.script([{"text": "Nothing to do."}])), "--json", **kw)


def _held(arena: Arena, name: str) -> None:
    assert not arena.marker(name).exists(), f"{name}: code the agent planted ran on the host ({arena.markers()})"


# -- MCP servers the user configured -------------------------------------------------------------------
def test_mcp_npx_server_resolves_the_projects_node_modules(arena: Arena) -> None:
    """`npx -y @modelcontextprotocol/server-filesystem .` (the example in docs/security.md) prefers a package
    in ./node_modules; the agent plants one, and the next run's start of the server runs it."""
    name = "mcp-npx-node_modules"
    pkg = "node_modules/@modelcontextprotocol/server-filesystem"
    plant = (
        f"mkdir -p {pkg} node_modules/.bin && "
        f'printf \'%s\' \'{{"name":"@modelcontextprotocol/server-filesystem","version":"9.9.9",'
        f'"bin":{{"mcp-server-filesystem":"x.js"}}}}\' > {pkg}/package.json && '
        f'printf \'#!/usr/bin/env node\\nrequire("fs").writeFileSync("{arena.marker(name)}", "x")\\n\' '
        f"> {pkg}/x.js && chmod +x {pkg}/x.js && ln -s ../@modelcontextprotocol/server-filesystem/x.js "
        "node_modules/.bin/mcp-server-filesystem"
    )
    arena.attack([turn(sh(plant))])
    arena.config(  # the user adds the server after the run (the example in docs/security.md)
        textwrap.dedent("""\
        mcp_servers:
          fs:
            command: npx
            args: ["-y", "@modelcontextprotocol/server-filesystem", "."]
            env: {npm_config_offline: "true", npm_config_update_notifier: "false", npm_config_fund: "false"}
            connect_timeout_s: 20
        """)
    )
    _again(arena)
    _held(arena, name)


def test_mcp_server_script_inside_the_project(arena: Arena) -> None:
    """A project-local MCP server (`python <project>/tools_notes_server.py`, named by its full path so
    it starts from wherever arreio starts servers): the agent edits its source."""
    name = "mcp-server-script-in-project"
    shutil.copy(FIXTURE_SERVER, arena.work / "tools_notes_server.py")
    edit = (
        f'sed -i \'/^from __future__/a import pathlib; pathlib.Path("{arena.marker(name)}").write_text("x")\' '
        "tools_notes_server.py"
    )
    arena.attack([turn(sh(edit))])
    # the next time the server starts (here: the user turns it on after the run; a restart mid-run,
    # or simply the next run, starts it the same way)
    script = arena.work / "tools_notes_server.py"
    arena.config(f"mcp_servers:\n  notes: {{command: {PY}, args: [{script}], connect_timeout_s: 30}}\n")
    _again(arena)
    _held(arena, name)


def test_mcp_server_relative_command_inside_the_project(arena: Arena) -> None:
    """`command: bin/notes-server` — a launcher script the project keeps (named relative to the project,
    as a user writes it); the agent rewrites it."""
    name = "mcp-relative-command-in-project"
    shutil.copy(FIXTURE_SERVER, arena.work / "notes_server.py")
    server = arena.work / "notes_server.py"
    arena.write("bin/notes-server", f"#!/bin/sh\nexec {PY} {server}\n", mode=0o755)
    arena.attack(
        [turn(sh(f"printf '#!/bin/sh\\ntouch {arena.marker(name)}\\nexec {PY} {server}\\n' > bin/notes-server"))]
    )
    arena.config("mcp_servers:\n  notes: {command: bin/notes-server, connect_timeout_s: 30}\n")
    _again(arena)
    _held(arena, name)


# -- gates ------------------------------------------------------------------------------------------
def test_plan_command_gate_runs_a_test_file_the_agent_wrote(arena: Arena) -> None:
    """The plan's gate runs the project's tests (`python3 -m unittest`); the agent adds a test module."""
    name = "gate-runs-agent-test-file"
    plan = arena.write(
        "plan.yaml",
        textwrap.dedent("""\
        version: 1
        units: [{id: fix, goal: Fix the app.}]
        gates: [{kind: command, command: "python3 -m unittest discover -s tests -q", timeout_s: 60}]
        """),
        base=arena.root,
    )
    payload = f'import pathlib\\npathlib.Path(\\"{arena.marker(name)}\\").write_text(\\"x\\")\\n'
    script = arena.script([turn(sh(f'mkdir -p tests && printf "{payload}" > tests/test_app.py')), {"text": "Fixed."}])
    arena.arreio("run", "--plan", str(plan), "--script", str(script), "--json", "--yes")
    _held(arena, name)


def test_plan_edited_mid_run_gains_a_command_gate_on_approve(arena: Arena) -> None:
    """The plan lives in the project; the agent rewrites it (a plain write), then pauses on a shell
    call. `arreio approve` resumes with the plan read again from disk — the agent's gate runs."""
    name = "plan-edited-gate-on-approve"
    plan_text = "version: 1\nunits: [{id: fix, goal: Fix the app.}]\ngates: [{kind: file, path: notes.md}]\n"
    arena.write("plan.yaml", plan_text)
    evil = plan_text.replace("gates: [", f"gates: [{{kind: command, command: 'touch {arena.marker(name)}'}}, ")
    script = arena.script(
        [turn(call("write_file", path="plan.yaml", content=evil)), turn(sh("ls")), {"text": "Fixed."}]
    )
    paused = arena.arreio("run", "--plan", "plan.yaml", "--script", str(script), "--json")
    assert paused.code == 3, paused.show()
    arena.arreio("approve", paused.session_id, "--script", str(script), "--json")
    _held(arena, name)


def test_batch_task_gate_runs_the_agents_code(arena: Arena) -> None:
    """A batch task's command gate runs in the attempt's copy, which the agent just wrote (a plain
    `write_file`: no approval is needed, and none can be given inside a batch)."""
    name = "batch-gate-runs-agent-code"
    task = arena.root / "suite" / "task"
    task.mkdir(parents=True)
    (task / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    replies = [
        turn(call("write_file", path="check.sh", content=f"#!/bin/sh\ntouch {arena.marker(name)}\n")),
        {"text": "done"},
    ]
    (arena.root / "suite" / "replies.json").write_text(json.dumps(replies))
    suite = arena.write(
        "suite.yaml",
        textwrap.dedent("""\
        version: 1
        tasks:
          - id: t1
            goal: Make check.sh pass.
            workdir: task
            script: replies.json
            gates: [{kind: command, command: "sh check.sh"}]
        """),
        base=arena.root / "suite",
    )
    batch = arena.arreio("batch", str(suite), "--json")
    rows = [e for e in batch.events if e.get("type") == "attempt"]
    assert rows and rows[0]["gates"], f"the attempt never reached its gate: {batch.show()}"
    _held(arena, name)


# -- git run by the checkpoint store, diff and undo ---------------------------------------------------------
USER_GITCONFIG = """\
[filter "lfs"]
    clean = "sh -c 'touch {marker}-clean; cat'"
    smudge = "sh -c 'touch {marker}-smudge; cat'"
[diff "lfs"]
    textconv = "sh -c 'touch {marker}-textconv; cat \\\"$0\\\"'"
[core]
    fsmonitor = "sh -c 'touch {marker}-fsmonitor'"
    attributesFile = {home}/.gitattributes-global
"""


@pytest.mark.parametrize("step", ["checkpoint", "diff", "undo"])
def test_agent_gitattributes_route_files_through_the_users_git_drivers(arena: Arena, step: str) -> None:
    """The user's ~/.gitconfig has filter/diff drivers (git-lfs style) and an fsmonitor; the agent adds
    `.gitattributes` sending every file through them. The checkpoint store, `arreio diff` and
    `arreio undo` run git on the tree — none of those drivers may run."""
    name = f"git-drivers-{step}"
    (arena.home / ".gitconfig").write_text(USER_GITCONFIG.format(marker=arena.marker(name), home=arena.home))
    attacks = [
        turn(sh("printf '* filter=lfs diff=lfs\\n' > .gitattributes && echo changed >> notes.md")),
        turn(sh("echo again >> src/app.py")),
    ]
    arena.attack(attacks)
    if step != "checkpoint":
        done = arena.arreio(*(["diff"] if step == "diff" else ["undo", "--yes"]))
        assert done.code == 0, done.show()
    found = [m for m in arena.markers() if m.startswith(f"MARK-{name}")]
    assert not found, f"{step}: a git driver from the user's config ran on the agent's files: {found}"


def test_checkpoint_git_and_a_nested_repo_the_agent_configured(arena: Arena) -> None:
    """The agent makes `vendor/lib` a repository whose config runs a command on every git status; the
    checkpoint store's git walks the tree after the round."""
    name = "checkpoint-nested-repo"
    arena.attack(
        [
            turn(
                sh(
                    "git init -q vendor/lib && git -C vendor/lib config core.fsmonitor "
                    f"'touch {arena.marker(name)}'"
                    " && echo x > vendor/lib/a.txt"
                )
            ),
            turn(sh("echo y >> notes.md")),
        ]
    )
    arena.arreio("diff")
    _held(arena, name)


# -- arreio's own installation inside the project -------------------------------------------------------
def _project_venv(arena: Arena) -> Path:
    """A virtualenv inside the project that holds arreio (as when a user `pip install`s it there)."""
    venv = arena.work / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    ours = next((Path(sys.executable).parent.parent / "lib").glob("python3*/site-packages"))
    (site / "_arreio_here.pth").write_text(f"import site; site.addsitedir({str(ours)!r})\n")
    (venv / "bin" / "arreio").write_text(
        f"#!{venv}/bin/python\nimport sys\nfrom arreio.cli.launch import main\nsys.exit(main())\n"
    )
    (venv / "bin" / "arreio").chmod(0o755)
    return site


@pytest.mark.parametrize("plant", ["pth-file", "sitecustomize", "console-script"])
def test_arreio_installed_in_the_projects_venv(arena: Arena, plant: str) -> None:
    """arreio runs from `.venv/` inside the working directory: the agent adds a `.pth`, a
    `sitecustomize.py`, or rewrites the `arreio` script; the next `arreio` runs it on the host."""
    name = f"project-venv-{plant}"
    site = _project_venv(arena)
    marker = arena.marker(name)
    rel_site = site.relative_to(arena.work)
    payload = {
        "pth-file": f'printf \'import pathlib; pathlib.Path("{marker}").write_text("x")\\n\' > '
        f"{rel_site}/zz_attack.pth",
        "sitecustomize": f'printf \'import pathlib\\npathlib.Path("{marker}").write_text("x")\\n\' > '
        f"{rel_site}/sitecustomize.py",
        "console-script": f'sed -i \'2i open("{marker}", "w").close()\' .venv/bin/arreio',
    }[plant]
    program = arena.work / ".venv" / "bin" / "arreio"
    script = arena.script([turn(sh(payload)), {"text": "Done."}])
    first = arena.arreio("run", "x", "--script", str(script), "--json", "--yes", program=program)
    assert first.code == 0, first.show()
    arena.arreio("sessions", "list", program=program)
    _held(arena, name)


# -- programs arreio finds on a PATH the project extends --------------------------------------------------
@pytest.mark.parametrize("command", ["doctor", "sandbox-status"])
def test_program_found_in_a_project_bin_on_path(arena: Arena, command: str) -> None:
    """PATH starts with the project's `bin/` (direnv's PATH_add, a Makefile's habit); the agent puts
    `bin/git` and `bin/bwrap` there; `arreio doctor` / `arreio sandbox status` run them on the host."""
    name = f"path-bin-{command}"
    wrap = '#!/bin/sh\\ntouch {m}\\nexec /usr/bin/{p} "$@"\\n'
    plant = "mkdir -p bin && " + " && ".join(
        f"printf '{wrap.format(m=arena.marker(name), p=p)}' > bin/{p} && chmod +x bin/{p}" for p in ("git", "bwrap")
    )
    arena.attack([turn(sh(plant))])
    arena.arreio(*command.split("-"), env={"PATH": f"{arena.work}/bin:{SYSTEM_PATH}"})
    _held(arena, name)


def test_control_the_users_own_git_runs_those_drivers(arena: Arena) -> None:
    """Not an attempt: the drivers in the user's ~/.gitconfig are live — their own `git diff` runs the
    textconv on the agent's files — so the three attempts above are held by arreio, not by luck."""
    (arena.home / ".gitconfig").write_text(USER_GITCONFIG.format(marker=arena.marker("control"), home=arena.home))
    arena.attack([turn(sh("printf '* filter=lfs diff=lfs\\n' > .gitattributes && echo changed >> notes.md"))])
    arena.git("-c", "core.fsmonitor=false", "diff", check=False)
    assert {"MARK-control-clean", "MARK-control-textconv"} <= set(arena.markers()), arena.markers()
