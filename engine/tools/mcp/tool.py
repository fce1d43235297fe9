"""One remote MCP tool as an ordinary `Tool` (so it goes through the chain and every hook), its
permissive argument model, provider-safe names, and MCP results normalised into a `ToolResult`.

How often the same call may repeat follows the server's annotations (governance/ceilings.py):

The hint is the server's word, not a fact: it never spares a call a checkpoint (a server that says
it reads and writes is undone like any other write; `Tool.remote`).

- `readOnlyHint: true` → `repeat = "reads"`: identical calls (same tool, same arguments) are counted,
  and any call in between that may change state (a tool that is not read-only: this server's writes,
  `shell`, `write_file`, …) starts the count again — after a write, the same read may answer anew, so
  status / add / status / status passes; and `read_only = True`: several such calls in one reply run
  concurrently (engine/loop/toolround.py; unless the server is configured `sensitive`);
- anything else → `repeat = "few"`: identical calls are counted over the whole run, whatever ran in
  between (a repeated write is the loop the limit is there to stop).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from arreio.engine.core.messages import ImagePart
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.tools.mcp.config import SEP
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.tools.mcp.hub import McpHub

_MAX_NAME = 64  # providers' limit on tool names
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


class _AnyArgs(BaseModel):
    model_config = ConfigDict(extra="allow")


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def _coerce(value: Any, kinds: list[str]) -> Any:
    """A string the schema wants as a number or a boolean, converted as the built-in tools' models
    would ("5" → 5, "true" → True); anything else unchanged (the type check then speaks)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if "integer" in kinds and re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if "number" in kinds:
        try:
            return float(text) if text.lower() not in ("nan", "inf", "-inf", "infinity", "-infinity") else value
        except ValueError:
            pass
    if "boolean" in kinds and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


def _args_model(schema: Mapping[str, Any]) -> type[BaseModel]:
    """A permissive model that still checks what the schema makes cheap to check (required keys and
    top-level JSON types), so a bad call fails in the chain with a readable message. Strings sent for
    numbers or booleans are converted first, as for the built-in tools."""
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    props = schema.get("properties", {}) if isinstance(schema.get("properties"), Mapping) else {}

    class Args(_AnyArgs):
        @model_validator(mode="before")
        @classmethod
        def _check(cls, data: Any) -> Any:
            if not isinstance(data, Mapping):
                return data
            missing = [r for r in required if r not in data]
            if missing:
                raise PydanticCustomError(
                    "mcp_args", "missing required argument(s): {names}", {"names": ", ".join(missing)}
                )
            data = dict(data)
            for key, value in list(data.items()):
                wanted = props.get(key, {}).get("type") if isinstance(props.get(key), Mapping) else None
                kinds = [wanted] if isinstance(wanted, str) else wanted if isinstance(wanted, list) else []
                if "string" not in kinds:
                    data[key] = value = _coerce(value, kinds)
                allowed = tuple(t for k in kinds for t in _JSON_TYPES.get(k, ()))
                bad_bool = isinstance(value, bool) and bool not in allowed
                if allowed and (not isinstance(value, allowed) or bad_bool):
                    raise PydanticCustomError(
                        "mcp_args",
                        "'{key}' must be {kinds} (got {got})",
                        {"key": key, "kinds": " or ".join(kinds), "got": repr(value)[:40]},
                    )
            return data

    return Args


class McpTool(Tool):
    """One remote tool, wrapped so it goes through the same chain as every other tool. `withheld` is
    why its server's `tools:` allow/deny keeps it back (the resolver then knows it but does not offer it)."""

    repeat = "few"
    remote = True  # a server can say readOnlyHint and write: checkpoints do not take its word (tools/base.py)

    def __init__(
        self,
        hub: McpHub,
        server: str,
        remote: str,
        name: str,
        description: str,
        schema: dict[str, Any],
        *,
        sensitive: bool,
        timeout_s: float,
        read_only: bool = False,
        withheld: str | None = None,
    ) -> None:
        self.hub, self.server, self.remote = hub, server, remote
        self.name = name  # type: ignore[misc]
        self.remote_description = description
        self.description = f"[MCP {server}] {description}".strip()  # type: ignore[misc]
        self._schema = dict(schema or {"type": "object", "properties": {}})
        self._schema.pop("title", None)
        self.input_model = _args_model(self._schema)  # type: ignore[misc]
        self.sensitive = sensitive  # type: ignore[misc]
        self.read_only = read_only  # type: ignore[misc]  # the server's readOnlyHint
        self.repeat = "reads" if read_only else "few"  # type: ignore[misc]  # see the module docstring
        self.withheld = withheld
        self.call_timeout_s = timeout_s
        self.timeout_s = timeout_s + 5  # type: ignore[misc]  # the chain's backstop; the MCP timeout speaks first

    def input_schema(self) -> dict[str, Any]:  # type: ignore[override]
        return self._schema

    def unavailable(self, ctx: RunContext | None) -> str | None:
        """The resolver's prerequisite: withheld by its server's allow/deny, or offered."""
        return self.withheld

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:
        arguments = args.model_dump() if isinstance(args, BaseModel) else dict(args)
        return await self.hub.call(self.server, self.remote, arguments, self.call_timeout_s)


def tool_name(server: str, remote: str, taken: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """`<server>__<tool>`, made safe for every provider (charset, 64 chars) and unique."""
    base = (server + SEP + _BAD_CHARS.sub("_", remote))[:_MAX_NAME]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name, n = base[: _MAX_NAME - len(suffix)] + suffix, n + 1
    return name


def normalise_result(result: Any) -> ToolResult:
    """MCP content blocks → one `ToolResult`: text joined, images kept as images, resources inlined
    when textual and described when binary; `is_error` carried over."""
    texts: list[str] = []
    images: list[ImagePart] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            images.append(ImagePart(media_type=block.mime_type, data=block.data))
            texts.append(f"[image {len(images)}: {block.mime_type}]")
        elif kind == "audio":
            texts.append(f"[audio omitted: {block.mime_type}, {_b64_size(block.data)} bytes]")
        elif kind == "resource":
            texts.append(resource_text(block.resource, images))
        elif kind == "resource_link":
            texts.append(f"[resource link: {getattr(block, 'name', '')} <{block.uri}>]")
    if not texts and getattr(result, "structured_content", None) is not None:
        texts.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    content = "\n".join(texts) if texts else "(the tool returned no content)"
    return ToolResult(content=content, is_error=bool(getattr(result, "is_error", False)), images=images)


def resource_text(res: Any, images: list[ImagePart]) -> str:
    """One resource's contents as the model reads it (an embedded resource of a tool result, or one
    of several a `resources/read` returned): text headed by its uri, an image blob appended to
    `images` and named, another blob described, not inlined."""
    mime = getattr(res, "mime_type", None) or ""
    if hasattr(res, "text"):
        return f"[resource {res.uri}{f' ({mime})' if mime else ''}]\n{res.text}"
    if mime.startswith("image/"):
        images.append(ImagePart(media_type=mime, data=res.blob))
        return f"[image {len(images)}: {mime} from {res.uri}]"
    return f"[binary resource {res.uri} ({mime or 'unknown type'}), {_b64_size(res.blob)} bytes, not shown]"


def _b64_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data) * 3 // 4
