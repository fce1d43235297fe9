"""Whether a call may run: allow, ask a person, or deny. Pure: settings and a call in, a decision out.

Order: a matching `deny` rule wins, then a matching `allow`, then a matching `ask`; with no rule the
call is asked about when it is sensitive (the tool declares it, the config names it, or it writes
outside `write_allow`), else allowed. An `allow` rule for shell only covers a simple command: one with
`;`, `&&`, `||`, a pipe, a redirect or a substitution is never allowed by a prefix match alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import PurePosixPath
from typing import Any

from arreio.engine.governance.settings import Action, GovernanceSettings, PolicyRule

_SUBJECT_ARGS = ("command", "path", "url", "query")
_COMPOUND = re.compile(r"[;&|`<>\n]|\$\(")


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str


def subject(arguments: dict[str, Any], arg: str | None = None) -> str:
    """The text a rule's pattern is searched in: a named argument, the usual one, or all as JSON."""
    if arg is not None:
        value = arguments.get(arg, "")
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    for name in _SUBJECT_ARGS:
        if isinstance(arguments.get(name), str):
            return arguments[name]
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def _matches(rule: PolicyRule, name: str, arguments: dict[str, Any]) -> bool:
    if rule.tool not in ("*", name):
        return False
    if rule.match is None:
        return True
    text = subject(arguments, rule.arg)
    if rule.action == "allow" and name == "shell" and _COMPOUND.search(text):
        return False
    return re.search(rule.match, text) is not None


def _outside_allow_list(path: str, allow: list[str]) -> bool:
    normal = PurePosixPath(path.replace("\\", "/"))
    text = str(normal)
    if ".." in normal.parts or normal.is_absolute():
        return True
    return not any(fnmatch(text, pattern) or text.startswith(pattern.rstrip("*").rstrip("/") + "/") for pattern in allow)


def decide(settings: GovernanceSettings, name: str, arguments: dict[str, Any], *, tool_sensitive: bool) -> Decision:
    """allow / ask / deny for one call, with the reason in plain words."""
    matched = [r for r in settings.policy if _matches(r, name, arguments)]
    for action in ("deny", "allow", "ask"):
        rule = next((r for r in matched if r.action == action), None)
        if rule is not None:
            pattern = f" matching {rule.match!r}" if rule.match else ""
            return Decision(action, f"policy: {action} {rule.tool}{pattern}")  # type: ignore[arg-type]
    if tool_sensitive:
        return Decision("ask", f"{name} is a sensitive tool")
    if name in settings.sensitive_tools:
        return Decision("ask", f"{name} is listed in governance.sensitive_tools")
    path = arguments.get("path")
    in_scope = settings.write_allow and name in settings.write_tools and isinstance(path, str)
    if in_scope and _outside_allow_list(path, settings.write_allow):
        return Decision("ask", f"{name} writes {path}, outside governance.write_allow")
    return Decision("allow", "not sensitive")
