"""Secrets never enter the journal, the session or the events (issue 9).

Two sources of "secret": the values of environment variables whose names look like credentials
(`MY_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, …) and common token formats (provider keys,
GitHub/GitLab/Slack/HF tokens, AWS key ids, JWTs, bearer tokens, private-key blocks), wherever they
come from. A secret becomes `[REDACTED:<VAR>]` or `[REDACTED]`.

Redaction runs on JSON text too (session lines, events): patterns never span a quote or a backslash,
and an environment value is also searched in its JSON-escaped form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

# A name segment that marks a credential: MY_API_KEY, GITHUB_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY.
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH|PAT|PRIVATE_KEY|ACCESS_KEY)(?:_|$)",
    re.IGNORECASE,
)
# ...unless the variable names a place rather than a value (SSH_AUTH_SOCK, GOOGLE_CREDENTIALS_FILE).
_PLACE_SUFFIX = re.compile(r"_(?:SOCK|PATH|FILE|DIR|HOME|URL_PATH)$", re.IGNORECASE)
MIN_SECRET_CHARS = 8

_EDGE = r"(?<![A-Za-z0-9_])"
TOKEN_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private_key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL)),
    ("provider_key", re.compile(_EDGE + r"sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("github_token", re.compile(_EDGE + r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("gitlab_token", re.compile(_EDGE + r"glpat-[A-Za-z0-9_\-]{20,}")),
    ("slack_token", re.compile(_EDGE + r"xox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("aws_key_id", re.compile(_EDGE + r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])")),
    ("google_key", re.compile(_EDGE + r"AIza[0-9A-Za-z_\-]{35}")),
    ("hf_token", re.compile(_EDGE + r"hf_[A-Za-z0-9]{30,}")),
    ("jwt", re.compile(_EDGE + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
]
# Patterns that keep a harmless prefix (the scheme, the variable name) and hide only the value.
PREFIXED_PATTERNS: list[re.Pattern[str]] = [
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/\-]{20,}=*"),
    re.compile(r"(\b[A-Z][A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)=)[^\s\"'\\]{" + str(MIN_SECRET_CHARS) + ",}"),
]


def looks_secret(name: str, value: str) -> bool:
    """Whether an environment variable holds a credential worth hiding."""
    if len(value) < MIN_SECRET_CHARS or value.startswith(("/", "~")) or value.lower() in ("true", "false"):
        return False
    return bool(_SECRET_NAME.search(name)) and not _PLACE_SUFFIX.search(name)


class Redactor:
    """Replaces secrets in text, JSON lines and nested values. Cheap when there is nothing to hide."""

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        forms: dict[str, str] = {}
        for name, value in (secrets or {}).items():
            for form in {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}:
                forms.setdefault(form, f"[REDACTED:{name}]")
        # Longest first, so a value that contains another is replaced whole.
        self._values = sorted(forms.items(), key=lambda item: len(item[0]), reverse=True)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Redactor:
        return cls({name: value for name, value in env.items() if looks_secret(name, value)})

    @property
    def names(self) -> list[str]:
        return sorted({label[10:-1] for _, label in self._values})

    def text(self, text: str) -> str:
        for value, label in self._values:
            if value in text:
                text = text.replace(value, label)
        for _, pattern in TOKEN_PATTERNS:
            text = pattern.sub("[REDACTED]", text)
        for pattern in PREFIXED_PATTERNS:
            text = pattern.sub(lambda m: m.group(1) + "[REDACTED]", text)
        return text

    def bytes(self, data: bytes) -> bytes:
        """For UTF-8 JSON lines: the same redaction, bytes in, bytes out."""
        text = data.decode("utf-8", errors="surrogateescape")
        redacted = self.text(text)
        return data if redacted == text else redacted.encode("utf-8", errors="surrogateescape")

    def value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string redacted (keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value

    def model(self, obj: Any) -> Any:
        """A pydantic object (an event, the report) with every string redacted; the same object when
        nothing changed."""
        raw = obj.model_dump_json()
        clean = self.text(raw)
        if clean == raw:
            return obj
        return type(obj).model_validate_json(clean)


class DeltaGuard:
    """Streamed text arrives in pieces, and a secret can straddle two of them. The guard holds back
    the unfinished last word of the text and thinking streams (tokens never contain whitespace) and
    releases it, redacted, once the word is complete or any other event arrives."""

    STREAMS = ("text_delta", "thinking_delta")
    MAX_HELD = 8192  # an unbroken run this long is released anyway (a pathological stream)

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._held: dict[str, Any] = {}  # stream type -> last event of it, carrying the held text

    def feed(self, event: Any) -> list[Any]:
        kind = getattr(event, "type", "")
        if kind not in self.STREAMS:
            return [*self.flush(), event]  # whole events are redacted where they are written
        out = [e for other in self.STREAMS if other != kind for e in self._release(other)]
        held = self._held.pop(kind, None)
        text = (held.text if held is not None else "") + event.text
        cut = max(text.rfind(c) for c in " \n\t\r") + 1
        if len(text) - cut > self.MAX_HELD:
            cut = len(text)
        if cut:
            out.append(event.model_copy(update={"text": self.redactor.text(text[:cut])}))
        if cut < len(text):
            self._held[kind] = event.model_copy(update={"text": text[cut:]})
        return out

    def flush(self) -> list[Any]:
        return [e for kind in self.STREAMS for e in self._release(kind)]

    def _release(self, kind: str) -> list[Any]:
        held = self._held.pop(kind, None)
        if held is None:
            return []
        return [held.model_copy(update={"text": self.redactor.text(held.text)})]

