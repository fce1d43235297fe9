"""`arreio config`: see and change the settings a run reads — list, get, set, unset, path, edit.

The files are the user's (`~/.config/arreio/config.yaml`) and the project's (`.arreio/config.yaml`,
the default target; `--global` picks the user's). Agent tools can never write either
(`engine/walls/protected.py`); this command is the human's way. Every change is checked the way
a run checks the config — `load_settings` over the merged layers, then every feature's section check
and the model string — and written atomically only when the result is valid, so a run never meets a
config this command broke. Edits go through ruamel's round-trip mode: comments and key order stay.

Only typer and the standard library at import time; the engine is imported by each command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from arreio.engine.core.ports import process_env

app = typer.Typer(help="See and change settings: list, get, set, unset, path, edit.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]
GlobalFlag = Annotated[
    bool,
    typer.Option(
        "--global", help="The user file (~/.config/arreio/config.yaml), not the project's .arreio/config.yaml."
    ),
]
KeyArg = Annotated[str, typer.Argument(help="A dotted key: max_steps, retry.max_attempts, sandbox.mode.")]

# Sections Settings keeps open and a feature validates with its own model: shown with that model's
# defaults filled in, so `get governance.max_tool_calls` answers 200 before anyone sets it.
SECTIONS = {
    "context": ("arreio.engine.context.settings", "context_settings"),
    "governance": ("arreio.engine.walls.settings", "governance_settings"),
    "mcp_servers": ("arreio.engine.tools.mcp.config", "mcp_servers"),
    "web": ("arreio.engine.tools.web.config", "web_settings"),
    "sandbox": ("arreio.engine.tools.sandbox", "sandbox_settings"),
    "checkpoints": ("arreio.engine.checkpoints.settings", "checkpoint_settings"),
    "knowledge": ("arreio.memory.knowledge.settings", "knowledge_settings"),
    "tools.delegate": ("arreio.engine.features.delegate", "delegate_settings"),
}
LABELS = {"user": "user file", "project": "project file"}


# -- checking: the same steps, and so the same messages, as a run ----------------------------------
def _here() -> tuple[Path, dict[str, str]]:
    return Path.cwd().resolve(), process_env()


def checked_settings(cwd: Path, env: dict[str, str], documents: dict[Path, Any] | None = None) -> Any:
    """The settings a run would get, checked as `prepare` checks them: the merged layers, each
    feature's section (`Feature.check`), the model string. `documents` stands in for files' contents
    (see `load_settings`). Raises the run's ConfigError."""
    from arreio.cli.deps import pipeline_deps
    from arreio.engine.core.config import config_files, load_settings
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.paths import display_path
    from arreio.engine.providers.registry import check_model
    from arreio.engine.tools.run_context import RunContext

    settings = load_settings(cwd, env, documents=documents)
    ctx = RunContext(cwd=cwd, settings=settings, env=env)
    for feature in pipeline_deps().features:
        try:
            feature.check(ctx)
        except ConfigError as error:
            files = [p for p in config_files(cwd, env).values() if p.exists() or p in (documents or {})]
            where = " or ".join(display_path(p, cwd) for p in files) or "the ARREIO_* environment"
            raise ConfigError(f"{error.message} (in {where})") from None
    check_model(settings.model)
    return settings


def config_problem(cwd: Path, env: dict[str, str], documents: dict[Path, Any] | None = None) -> str | None:
    """What a run would refuse in this config, in the run's words; None when it is valid."""
    from arreio.engine.core.errors import ConfigError

    try:
        checked_settings(cwd, env, documents)
    except ConfigError as error:
        return error.message
    return None


# -- what is in force, and where it comes from -----------------------------------------------------
def effective(settings: Any) -> dict[str, Any]:
    """The whole configuration as a run sees it, feature sections with their defaults (JSON types)."""
    import importlib

    tree = settings.model_dump(mode="json")
    for dotted, (module, name) in SECTIONS.items():
        parsed = getattr(importlib.import_module(module), name)(settings)
        value = (
            {k: v.model_dump(mode="json") for k, v in parsed.items()}
            if isinstance(parsed, dict)
            else parsed.model_dump(mode="json")
        )
        *parents, leaf = dotted.split(".")
        node = tree
        for part in parents:
            node = node[part]
        node[leaf] = value
    return tree


def _layers(cwd: Path, env: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """Each layer's own keys, weakest first: (source label, data)."""
    from arreio.engine.core.config import ENV_KEYS, config_files
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.regular_file import Limit
    from arreio.engine.core.yaml_file import read_yaml

    out = []
    for kind, path in config_files(cwd, env).items():
        data = read_yaml(path, error=ConfigError, what="config", limit=Limit.CONFIG) if path.exists() else None
        out.append((LABELS[kind], data if isinstance(data, dict) else {}))
    for var, keys in ENV_KEYS.items():
        if env.get(var):
            out.append((f"environment ({var})", {keys[0]: env[var]}))
    return out


def _sdk_base_url(model: Any, env: dict[str, str]) -> tuple[str, str] | None:
    """(URL, source) when the model's vendor SDK reads its endpoint from the environment
    (OPENAI_BASE_URL for openai/ models, ANTHROPIC_BASE_URL for anthropic/)."""
    from arreio.engine.providers.endpoint import endpoint_of

    vendor = str(model or "").split("/", 1)[0]
    url = endpoint_of(str(model or ""), env, None)
    var = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}.get(vendor)
    return (url, f"environment ({var}, read by the {vendor} SDK)") if url and var else None


def _has(data: Any, parts: list[str]) -> bool:
    for part in parts:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _leaves(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[list[str], Any]]:
    out: list[tuple[list[str], Any]] = []
    for key, value in tree.items():
        path = (*prefix, str(key))
        if isinstance(value, dict) and value:
            out += _leaves(value, path)
        else:  # lists, scalars and empty sections are one value each
            out.append((list(path), value))
    return out


def lookup(tree: dict[str, Any], key: str) -> Any:
    """The value at a dotted key (None below an unset optional section); an unknown key is a
    UsageError with the nearest name (a name typed on the command line: nothing is wrong with the
    config, so not the configuration error's exit 5)."""
    import difflib

    from arreio.engine.core.errors import UsageError

    node: Any = tree
    parts = _parts(key)
    for i, part in enumerate(parts):
        if node is None:  # an optional section that is not set (`web.search`): nothing below it either
            return None
        if not isinstance(node, dict) or part not in node:
            close = difflib.get_close_matches(part, list(node), n=1) if isinstance(node, dict) else []
            hint = f" (did you mean '{'.'.join([*parts[:i], close[0]])}'?)" if close else ""
            raise UsageError(f"unknown setting '{key}'{hint}")
        node = node[part]
    return node


def _parts(key: str) -> list[str]:
    from arreio.engine.core.errors import UsageError

    parts = key.strip().split(".")
    if not all(parts):
        raise UsageError(f"'{key}' is not a key: use dotted names such as retry.max_attempts")
    return parts


def shown(value: Any) -> str:
    """A value as YAML would say it: `true`, `null`, `80`, `[shell]` (as JSON for structures)."""
    from arreio.cli.inert import inert

    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (dict, list)):
        return inert(json.dumps(value, ensure_ascii=False))
    return inert(str(value))


# -- commands ---------------------------------------------------------------------------------------
@app.command("list")
def list_settings(json_output: JsonFlag = False) -> None:
    """Show every setting in force with where it comes from: default, user file, project file, environment."""
    cwd, env = _here()
    tree = effective(checked_settings(cwd, env))
    layers = _layers(cwd, env)
    rows = []
    for parts, value in _leaves(tree):
        source = next((label for label, data in reversed(layers) if _has(data, parts)), "default")
        if parts == ["base_url"] and value is None and (sdk := _sdk_base_url(tree.get("model"), env)):
            value, source = sdk  # no base_url set: the SDK's own variable says where the model's calls go
        rows.append({"key": ".".join(parts), "value": value, "source": source})
    if json_output:
        print(json.dumps({"files": _files(cwd, env), "settings": rows}, ensure_ascii=False, indent=2))
        return
    width = max(len(r["key"]) for r in rows)
    values = [shown(r["value"]) for r in rows]
    value_width = min(40, max(len(v) for v in values))
    for row, value in zip(rows, values, strict=True):
        print(f"{row['key']:<{width}}  {value:<{value_width}}  {row['source']}")


@app.command("get")
def get(key: KeyArg, json_output: JsonFlag = False) -> None:
    """Print a setting's effective value (defaults and every layer applied)."""
    cwd, env = _here()
    value = lookup(effective(checked_settings(cwd, env)), key)
    print(json.dumps(value, ensure_ascii=False) if json_output else shown(value))


@app.command("set")
def set_value(
    key: KeyArg,
    value: Annotated[str, typer.Argument(help="Read as YAML: 80 is a number, '\\[shell]' a list, true a boolean.")],
    global_: GlobalFlag = False,
) -> None:
    """Set a key in the project config (or --global: the user's).

    The value is checked as a run checks it: an invalid one is refused and nothing is written.
    A value starting with '-' goes after `--`: arreio config set max_steps -- -1."""
    from arreio.cli.arguments import text as utf8
    from arreio.cli.config_file import parse_value, with_value
    from arreio.engine.core.errors import UsageError

    utf8(key, "the key")
    utf8(value, "the value")
    if not value.strip():  # YAML reads it as null: "Input should be a valid string" said nothing useful
        raise UsageError(f"an empty value sets nothing; to remove {key}, use `arreio config unset {key}`")
    cwd, env = _here()
    path = _target(cwd, env, global_)
    text = _read(path)
    parsed = parse_value(value)
    _write_checked(cwd, env, path, with_value(text, _parts(key), parsed))
    print(f"{key} = {shown(parsed)}  ({_display(path, cwd)})")


@app.command("unset")
def unset(key: KeyArg, global_: GlobalFlag = False) -> None:
    """Remove a key from the project config (or --global: the user's); comments around it stay."""
    from arreio.cli.config_file import without

    cwd, env = _here()
    path = _target(cwd, env, global_)
    text = _read(path)
    new = without(text, _parts(key)) if text else None
    if new is None:
        other = _target(cwd, env, not global_)
        hint = ""
        if other.exists() and without(_read(other), _parts(key)) is not None:
            hint = f"; it is set in {_display(other, cwd)}" + ("" if global_ else " (use --global)")
        print(f"arreio: {key} is not set in {_display(path, cwd)}{hint}", file=sys.stderr)
        raise typer.Exit(1)
    _write_checked(cwd, env, path, new)
    print(f"{key} removed ({_display(path, cwd)})")


@app.command("path")
def path(json_output: JsonFlag = False) -> None:
    """Show the config files a run reads here, weakest first, and which of them exist."""
    cwd, env = _here()
    files = _files(cwd, env)
    if json_output:
        print(json.dumps(files, indent=2))
        return
    for row in files:
        print(f"{row['kind']:<8} {row['path']}  ({'exists' if row['exists'] else 'not present'})")
    from arreio.engine.core.config import ENV_KEYS

    for var in ENV_KEYS:
        if env.get(var):
            print(f"env      {var} is set (beats both files)")


@app.command("edit")
def edit(global_: GlobalFlag = False) -> None:
    """Open the project config (or --global: the user's) in $VISUAL or $EDITOR (else vi), then check it.

    An invalid result stays as you wrote it; the command names the problem and exits 5."""
    import shlex
    import subprocess

    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.paths import make_state_dir

    cwd, env = _here()
    target = _target(cwd, env, global_)
    if global_:
        target.parent.mkdir(parents=True, exist_ok=True)  # editors cannot save into a missing folder
    else:
        make_state_dir(target.parent)  # and one made here keeps itself out of git (paths.STATE_GITIGNORE)
    editor = env.get("VISUAL") or env.get("EDITOR") or "vi"
    argv = [*shlex.split(editor), str(target)]
    try:
        code = subprocess.call(argv)
    except OSError as exc:
        raise UsageError(f"cannot start the editor {argv[0]!r} ({exc.strerror}): set $VISUAL or $EDITOR") from None
    problem = config_problem(cwd, env)
    if problem is not None:
        again = "arreio config edit" + (" --global" if global_ else "")
        print(
            f"arreio: error: {problem} — {_display(target, cwd)} is kept as you wrote it; fix it with `{again}`",
            file=sys.stderr,
        )
        raise typer.Exit(5)
    if code != 0:
        print(f"arreio: the editor exited with code {code}; the config is valid", file=sys.stderr)
        raise typer.Exit(1)
    print(f"config ok ({_display(target, cwd)})")


# -- edges -------------------------------------------------------------------------------------------
def _target(cwd: Path, env: dict[str, str], user: bool) -> Path:
    from arreio.engine.core.config import config_files

    return config_files(cwd, env)["user" if user else "project"]


def _display(path: Path, cwd: Path) -> str:
    from arreio.engine.core.paths import display_path

    return display_path(path, cwd)


def _files(cwd: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    from arreio.engine.core.config import config_files

    return [{"kind": kind, "path": str(p), "exists": p.exists()} for kind, p in config_files(cwd, env).items()]


def _read(path: Path) -> str:
    """The file's text ('' when there is none). A file a run could not read is refused with the
    run's own message (file, line, problem): `config edit` is the way to repair that."""
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.regular_file import Limit, read_bytes
    from arreio.engine.core.yaml_file import read_yaml

    if path.exists():
        read_yaml(path, error=ConfigError, what="config", shown=_display(path, Path.cwd()), limit=Limit.CONFIG)
    try:  # CRLF files are edited as LF and written back as CRLF (`_write_checked`)
        return read_bytes(path, limit=Limit.CONFIG).decode("utf-8").replace("\r\n", "\n")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _read_bytes(path: Path) -> bytes:
    from arreio.engine.core.regular_file import Limit, read_bytes

    try:
        return read_bytes(path, limit=Limit.CONFIG)
    except OSError:
        return b""  # `_read` already refused a file it cannot read; this one changed since


def _write_checked(cwd: Path, env: dict[str, str], path: Path, after: str) -> None:
    """Write `after` over `path` only if the config it makes is valid. One exception, so a broken
    file can be repaired a key at a time: when the config is already invalid and this change moves
    the problem on, it is written and the remaining problem is named (exit 5)."""
    from arreio.cli.config_file import load_text
    from arreio.engine.core.atomic import write_atomic
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.paths import make_state_dir

    data = load_text(after, error=ConfigError, what=f"config {_display(path, cwd)}")
    if path == _target(cwd, env, user=False):
        make_state_dir(path.parent)  # a folder made here keeps itself out of git (paths.STATE_GITIGNORE)
    problem = config_problem(cwd, env, {path: data if isinstance(data, dict) else {}})
    if path.exists() and b"\r\n" in _read_bytes(path):
        after = after.replace("\n", "\r\n")
    if problem is None:
        write_atomic(path, after)
        return
    already = config_problem(cwd, env)
    if already is None or already == problem:
        note = "" if already is None else " (the config was invalid before this change; fix that first)"
        raise ConfigError(f"{problem}{note}; nothing written")
    write_atomic(path, after)
    raise ConfigError(f"written, but the config is still invalid: {problem}")
