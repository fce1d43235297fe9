"""Reading a user's YAML file (config, plan, offline script) with one kind of error message:
`invalid plan arreio.plan.yaml:7: mapping values are not allowed here` — the file, the line, the problem."""

from __future__ import annotations

import json
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
    if typ == "safe" and text.lstrip()[:1] in ("[", "{"):
        # JSON is YAML: read it with the JSON parser, ~100× faster on a long `--script`; anything
        # it refuses goes to the YAML parser, which reads the rest of YAML and reports problems.
        try:
            return json.loads(text)
        except ValueError:
            pass
    try:
        return YAML(typ=typ).load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise error(f"invalid {what} {shown}{where}: {problem}") from None


def line_of(data: Any, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of a location in ruamel's round-trip data, as deep as it can find."""
    line = None
    node = data
    for key in loc:
        lc = getattr(node, "lc", None)
        try:
            if lc is not None:
                if isinstance(key, int):
                    line = lc.item(key)[0] + 1
                else:
                    line = lc.key(key)[0] + 1
            node = node[key]
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


def plain(value: Any) -> Any:
    """ruamel's commented containers → plain dicts/lists (pydantic wants plain data)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def validated(model: Any, data: Any, path: Path, *, error: type[ArreioError]) -> Any:
    """`model.model_validate(data)` for round-trip YAML `data` read from `path`; the first problem is
    one `error` naming the file, the line, the field and what is wrong — an unknown key with the
    key probably meant (`plan.yaml:4: units.0.gaol: unknown key 'gaol' (did you mean 'goal'?)`)."""
    from pydantic import ValidationError

    from arreio.engine.config import first_error, suggest_key

    try:
        return model.model_validate(plain(data))
    except ValidationError as exc:
        err = first_error(exc)  # a misspelt key first: it also makes the real key look missing
        loc = tuple(err["loc"])
        line = line_of(data, loc) or line_of(data, loc[:-1])
        field = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            message = f"unknown key '{loc[-1]}'{suggest_key(loc, model, leaf_only=True)}"
        else:
            message = str(err["msg"]).removeprefix("Value error, ")
        raise error(f"{path}{f':{line}' if line else ''}: {field}: {message}") from None
