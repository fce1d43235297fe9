"""The working directory as file tools see it: path confinement and atomic writes.

Every path a model hands a tool resolves inside `ctx.cwd`, with symlinks resolved, so neither
`../` nor an absolute path nor a symlink can reach outside it (docs/architecture.md section 6). Writes go
through a temp file in the same folder, fsync, `os.replace` (docs/architecture.md invariant 2): a crash
leaves either the old file or the new one, never half of one.

Some places inside it are never written (docs/architecture.md invariant 10): arreio's state folder, `.git/` and
the user config (`governance/protected.py`); `check_writable` refuses them on the resolved path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.engine.core.paths import resolve_below
from arreio.engine.tools.base import ToolError
from arreio.engine.walls.protected import write_refusal
from arreio.engine.walls.settings import governance_settings

if TYPE_CHECKING:
    from arreio.engine.tools.run_context import RunContext


def resolve_in_root(root: Path, path: str, *, root_resolved: bool = False) -> Path:
    """The absolute, symlink-resolved form of `path` (relative to `root` unless absolute).

    Raises a definitive `ToolError` ("path X is outside the working directory") when the result
    is not `root` itself or below it. Paths that do not exist yet are fine (write_file needs them).
    `root_resolved`: `root` is resolved already (a `RunContext.cwd` is), so only `path` is walked.
    """
    raw = path.strip() if path.strip() else "."
    try:
        base = root if root_resolved else root.resolve()
        resolved = resolve_below(base, os.path.expanduser(raw) if raw.startswith("~") else raw)
    except (OSError, ValueError, RuntimeError) as exc:  # NUL bytes, symlink loops
        raise ToolError(f"path {raw!r} cannot be used: {exc}") from None
    if resolved != base and not resolved.is_relative_to(base):
        raise ToolError(f"path {raw} is outside the working directory")
    return resolved


def check_writable(ctx: RunContext, target: Path, tool: str) -> None:
    """Refuse (a definitive `ToolError`) to let `tool` write `target` — a `resolve_in_root` result —
    inside a protected path, unless a policy rule names it (`governance/protected.py`)."""
    rules = ctx.section(governance_settings).policy
    refused = write_refusal(tool, target, ctx.cwd, ctx.env, rules, ctx.state_dir)
    if refused is not None:
        raise ToolError(refused)


def display_path(root: Path, path: Path, *, root_resolved: bool = False) -> str:
    """`path` as the model should see it: relative to the root, POSIX separators, '.' for root,
    control characters written out (`shown_name`)."""
    try:
        rel = path.relative_to(root if root_resolved else root.resolve())
    except ValueError:
        return shown_name(str(path))
    text = rel.as_posix()
    return shown_name(text) if text else "."


def shown_name(name: str) -> str:
    """A file name as one line of a tool's output: a newline, tab, escape or other control character
    in it is written out (`\\x0a`). A name may hold any of them, and a raw newline let a file's name
    fake more lines of a listing or more search hits for the model."""
    if name.isprintable():
        return name
    # a lone surrogate (a byte that is not UTF-8) is the chain's to write out, as the byte (surrogates.py)
    return "".join(
        ch
        if ch.isprintable() or ch == " " or "\ud800" <= ch <= "\udfff"
        else f"\\x{ord(ch):02x}"
        if ord(ch) < 0x100
        else f"\\u{ord(ch):04x}"
        for ch in name
    )
