"""Tool calls a model wrote as text (pure): small local models — and llama.cpp or Ollama serving
them — often put the call in the reply's content instead of the tool-calling interface.

Recognised shapes, for tools that exist, with arguments that validate:

- a JSON object `{"name": …, "arguments": {…}}` (also `parameters`, `args`, `input`; `arguments`
  may be a JSON string), bare or in a ``` fence, one per block or a JSON list of them; also
  `{"function": {"name": …, "arguments": …}}` and `{"tool": …, "tool_input": …}`;
- `<tool_call>{…}</tool_call>` (Hermes / Qwen), any number of them;
- `<function name="list_dir" arguments='{…}'/>`, optionally inside `<tools>…</tools>`;
- `<function=list_dir>{…}</function>` (Llama 3.1);
- `<invoke name="list_dir"><parameter name="path">.</parameter></invoke>`.

The same call (name and arguments) written more than once in one reply is run once.

`read_text_calls` says what the text is: calls to run (`calls`), and whether the reply is nothing
but call-shaped text that could not be run (`shaped`: an unknown tool, arguments that do not
validate, the tool list echoed back) — such a reply is never a final answer.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arreio.engine.core.nesting import json_loads

# A tool's name → a check of its arguments: None when they validate, else why not.
Validate = Callable[[str, dict[str, Any]], str | None]

_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FUNCTION_ATTRS = re.compile(r"<function\s+([^<>]*?)/?>", re.DOTALL)
_ATTR = re.compile(r"""(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""", re.DOTALL)
_FUNCTION_EQ = re.compile(r"<function=([\w.-]+)>\s*(.*?)\s*</function>", re.DOTALL)
_INVOKE = re.compile(r"<invoke\s+name=[\"']([\w.-]+)[\"']\s*>(.*?)</invoke>", re.DOTALL)
_PARAMETER = re.compile(r"<parameter\s+name=[\"']([\w.-]+)[\"']\s*>(.*?)</parameter>", re.DOTALL)
_OPEN_FENCE = re.compile(r"```[A-Za-z0-9_-]*")
_WRAPPERS = re.compile(r"</?(?:tools|tool_calls|function_calls|antml:function_calls)\s*>", re.IGNORECASE)
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input", "params")


@dataclass
class TextCalls:
    """What a reply's text holds: `calls` (name, arguments) to run, in order; `shaped`: the reply is
    call-shaped text only; `problems`: why a call-shaped block could not be run (for the model)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    shaped: bool = False
    problems: list[str] = field(default_factory=list)


def read_text_calls(text: str, tools: set[str], validate: Validate) -> TextCalls:
    """The tool calls written in `text` (module docstring). Prose that merely mentions a tool, or
    shows JSON that is not a call, is left alone."""
    found = TextCalls()
    if not text.strip() or not tools:
        return found
    candidates, rest, explicit = _candidates(text)
    if not explicit and len(rest.strip()) > LEAD_IN_CHARS:
        return found  # an answer that shows a call-like example among its prose is an answer
    echoed = False
    for name, arguments in candidates:
        if name == "__schema__":
            echoed = True
            continue
        if name not in tools:
            found.problems.append(f"there is no tool named '{name}' (tools: {', '.join(sorted(tools))})")
            continue
        why = validate(name, arguments)
        if why is not None:
            found.problems.append(f"{name}: {why}")
            continue
        if (name, arguments) in found.calls:
            # one reply showing the same call again (fenced, then bare) is one call shown twice — a small
            # model echoes what it just wrote; running it again would repeat a write or an append
            continue
        found.calls.append((name, arguments))
    if echoed:
        found.problems.append("the reply repeated the tool definitions instead of calling a tool")
    found.shaped = bool(candidates) and not rest.strip(" \t\r\n.:;,-*>`")
    return found


LEAD_IN_CHARS = 200  # prose around a JSON call that still reads as a lead-in ("I'll list the folder:")


def _candidates(text: str) -> tuple[list[tuple[str, dict[str, Any]]], str, bool]:
    """Every call-shaped block (name, arguments), the text left when they are taken out, and whether
    a block used an explicit call syntax (`<tool_call>`, `<function=…>`, `<invoke>`) rather than JSON."""
    out: list[tuple[str, dict[str, Any]]] = []
    rest = text

    def take(pattern: re.Pattern[str], read: Callable[[re.Match[str]], list[tuple[str, dict[str, Any]]]]) -> None:
        nonlocal rest
        for match in list(pattern.finditer(rest)):
            got = read(match)
            if got:
                out.extend(got)
                rest = rest.replace(match.group(0), " ", 1)

    take(_TOOL_CALL, lambda m: _from_json(m.group(1)))
    take(_FUNCTION_EQ, lambda m: [(m.group(1), args)] if (args := _json_object(m.group(2) or "{}")) is not None else [])
    take(_INVOKE, lambda m: [(m.group(1), {k: _scalar(v) for k, v in _PARAMETER.findall(m.group(2))})])
    take(_FUNCTION_ATTRS, _from_attributes)
    explicit = bool(out)
    take(_FENCE, lambda m: _from_json(m.group(1)))
    rest = _WRAPPERS.sub(" ", rest)
    # a fence left without its pair is a marker, not prose: a small model writes the same call
    # again and again between fences that no longer pair up
    unpaired = _OPEN_FENCE.sub(" ", rest)
    stripped = unpaired.strip()
    if stripped[:1] in "[{":  # the whole remaining reply is JSON: one value, or several one after another
        groups = [_from_json(body) for body in _json_values(stripped)]
        if groups and all(groups):  # every value a call (or a list of calls): else it is data
            out.extend(call for group in groups for call in group)
            rest = ""
    return out, rest, explicit


def _json_values(text: str) -> list[str]:
    """`text` as JSON values one after another (whitespace between), each as its own text; [] when
    anything else is there."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        try:
            _, end = decoder.raw_decode(text, at)  # only to find where a value ends; json_loads reads it
        except (ValueError, RecursionError):  # Python's parser recurses once per level
            return []
        values.append(text[at:end])
        at = end
        while at < len(text) and text[at].isspace():
            at += 1
    return values


def _from_attributes(match: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    attrs = {key: html.unescape(double or single) for key, double, single in _ATTR.findall(match.group(1))}
    name = attrs.get("name")
    if not name:
        return []
    arguments = _json_object(attrs.get("arguments") or attrs.get("parameters") or "{}")
    return [(name, arguments if arguments is not None else {})]


def _from_json(body: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = json_loads(body.strip())
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data]
    out = []
    for item in items:
        call = _call_of(item)
        if call is None:
            return []  # a list that is not all calls is data, not calls
        out.append(call)
    return out


def _call_of(item: Any) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(item, dict):
        return None
    if item.get("type") == "function" and isinstance(item.get("function"), dict):
        inner = item["function"]
        if "parameters" in inner and "description" in inner and "arguments" not in inner:
            return ("__schema__", {})  # a tool definition, echoed back
        item = inner
    elif isinstance(item.get("function"), dict):
        item = item["function"]
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    if not name or not any(k in item for k in _ARG_KEYS):
        return None  # {"name": "Alice", "age": 30} is data
    if "description" in item and isinstance(item.get("parameters"), dict) and "properties" in item["parameters"]:
        return ("__schema__", {})
    raw = next((item[k] for k in _ARG_KEYS if k in item), {})
    arguments = _json_object(raw) if isinstance(raw, str) else raw
    if not isinstance(arguments, dict):
        return None
    return name, arguments


def _json_object(text: Any) -> dict[str, Any] | None:
    if isinstance(text, dict):
        return text
    try:
        data = json_loads(text) if isinstance(text, str) and text.strip() else {}
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _scalar(text: str) -> Any:
    """A parameter's text as the JSON value it spells, else the text itself."""
    value = text.strip()
    try:
        return json_loads(value)
    except ValueError:
        return value
