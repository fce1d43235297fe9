"""Redaction for cassettes: the governance layer decides what a secret is (`looks_secret`, the token
formats); this module replaces them with stable labels, also across streamed chunks, so a recorded
reply and its replay hash alike (DESIGN.md: secrets never enter a cassette)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from arreio.engine.governance.redact import TOKEN_PATTERNS, looks_secret

_TOKENS = re.compile("|".join(f"(?:{pattern.pattern})" for _, pattern in TOKEN_PATTERNS), re.DOTALL)


class Redactor:
    """Replaces secrets with `[redacted:NAME]` / `[redacted:token]`. Idempotent: redacted text
    redacts to itself, so a replayed reply hashes like the recorded one."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._names: dict[str, str] = {}
        for name, value in sorted((env or {}).items()):
            if looks_secret(name, value):
                self._names.setdefault(value, name)
        values = "|".join(re.escape(v) for v in sorted(self._names, key=len, reverse=True))
        self._pattern = re.compile(f"{values}|{_TOKENS.pattern}" if values else _TOKENS.pattern)

    def _label(self, match: re.Match[str]) -> str:
        name = self._names.get(match.group(0))
        return f"[redacted:{name}]" if name else "[redacted:token]"

    def text(self, text: str) -> str:
        return self._pattern.sub(self._label, text)

    def chunks(self, pieces: list[str]) -> list[str]:
        """Redact text that streamed in pieces: a secret split across chunks is still found. The
        replacement lands in the chunk where the secret starts; the pieces keep their count."""
        joined = "".join(pieces)
        spans = [(m.start(), m.end(), self._label(m)) for m in self._pattern.finditer(joined)]
        if not spans:
            return list(pieces)
        out, start = [], 0
        for piece in pieces:
            end = start + len(piece)
            kept, pos = [], start
            for s, e, label in spans:
                if e <= pos or s >= end:
                    continue
                if s >= pos:
                    kept.append(joined[pos:s])
                    kept.append(label)
                pos = max(pos, min(e, end))
            kept.append(joined[pos:end])
            out.append("".join(kept))
            start = end
        return out

    def events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Redact dumped stream events; a run of text (or thinking) chunks is redacted as one text."""
        out = [{k: (v if k == "text" else self.json(v)) for k, v in e.items()} for e in events]
        i = 0
        while i < len(out):
            j = i + 1
            if out[i]["type"] in ("text", "thinking"):
                while j < len(out) and out[j]["type"] == out[i]["type"]:
                    j += 1
                for event, text in zip(out[i:j], self.chunks([e["text"] for e in out[i:j]]), strict=True):
                    event["text"] = text
            i = j
        return out

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        return value
