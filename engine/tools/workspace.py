"""The working directory as file tools see it: path confinement and atomic writes.

Every path a model hands a tool resolves inside `ctx.cwd`, with symlinks resolved, so neither
`../` nor an absolute path nor a symlink can reach outside it (DESIGN.md section 6). Writes go
through a temp file in the same folder, fsync, `os.replace` (DESIGN.md invariant 2): a crash
leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

from pathlib import Path

from arreio.engine.tools.base import ToolError


def resolve_in_root(root: Path, path: str) -> Path:
    """The absolute, symlink-resolved form of `path` (relative to `root` unless absolute).

    Raises a definitive `ToolError` ("path X is outside the working directory") when the result
    is not `root` itself or below it. Paths that do not exist yet are fine (write_file needs them).
    """
    raw = path.strip() if path.strip() else "."
    try:
        base = root.resolve()
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = base / candidate
        resolved = candidate.resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # NUL bytes, symlink loops
        raise ToolError(f"path {raw!r} cannot be used: {exc}") from None
    if resolved != base and not resolved.is_relative_to(base):
        raise ToolError(f"path {raw} is outside the working directory")
    return resolved


def display_path(root: Path, path: Path) -> str:
    """`path` as the model should see it: relative to the root, POSIX separators, '.' for root."""
    try:
        rel = path.relative_to(root.resolve())
    except ValueError:
        return str(path)
    text = rel.as_posix()
    return text if text else "."
