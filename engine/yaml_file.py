"""Reading a user's YAML file (config, plan, offline script) with one kind of error message:
`invalid plan arreio.plan.yaml:7: mapping values are not allowed here` — the file, the line, the problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from arreio.engine.errors import ArreioError


def read_yaml(
    path: Path, *, error: type[ArreioError], what: str, shown: str | None = None, typ: Literal["safe", "rt"] = "safe"
) -> Any:
    """The parsed document (None when empty). `what` names the kind of file in messages ("config",
    "plan", "script"); `shown` is how the path is printed (default: as given)."""
    from ruamel.yaml import YAML, YAMLError

    shown = shown or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} file not found: {shown}") from None
    except UnicodeDecodeError:
        raise error(f"invalid {what} {shown}: not UTF-8 text") from None
    except OSError as exc:
        raise error(f"cannot read {what} {shown}: {exc.strerror}") from None
    try:
        return YAML(typ=typ).load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise error(f"invalid {what} {shown}{where}: {problem}") from None
