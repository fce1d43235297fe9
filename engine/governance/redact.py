"""The one redactor: secrets never enter the journal, the session, the events, the report, the
substores or a cassette (issue 9; one per run since issue 15).

Two sources of "secret": the values of environment variables whose names look like credentials
(`MY_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, …) and common token formats (provider keys,
GitHub/GitLab/Slack/HF tokens, AWS key ids, JWTs, bearer tokens, private-key blocks), wherever they
come from. Everything is matched in one pass of one combined pattern.

A secret becomes a label. Run files use `[REDACTED:<VAR>]` / `[REDACTED]`; cassettes keep their own
on-disk labels `[redacted:<VAR>]` / `[redacted:token]` (`labelled(CASSETTE)`), so recorded
fingerprints still match. Redaction is idempotent: redacted text redacts to itself.

Redaction runs on JSON text too (session lines, events): patterns never span a quote or a backslash,
and an environment value is also searched in its JSON-escaped form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
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
# Whole-match token formats (the match becomes the label).
TOKEN_PATTERNS: list[tuple[str, str]] = [
    ("private_key", r"(?s:-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----)"),
    ("provider_key", _EDGE + r"sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"),
    ("github_token", _EDGE + r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("gitlab_token", _EDGE + r"glpat-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", _EDGE + r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("aws_key_id", _EDGE + r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"),
    ("google_key", _EDGE + r"AIza[0-9A-Za-z_\-]{35}"),
    ("hf_token", _EDGE + r"hf_[A-Za-z0-9]{30,}"),
    ("jwt", _EDGE + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
]
# Formats that keep a harmless prefix (the scheme, the variable name) and hide only the value:
# (prefix pattern, value pattern).
PREFIXED_PATTERNS: list[tuple[str, str]] = [
    (r"(?i:\bbearer\s+)", r"[A-Za-z0-9._~+/\-]{20,}=*"),
    (r"\b[A-Z][A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)=", r"[^\s\"'\\]{" + str(MIN_SECRET_CHARS) + ",}"),
]


def looks_secret(name: str, value: str) -> bool:
    """Whether an environment variable holds a credential worth hiding."""
    if len(value) < MIN_SECRET_CHARS or value.startswith(("/", "~")) or value.lower() in ("true", "false"):
        return False
    return bool(_SECRET_NAME.search(name)) and not _PLACE_SUFFIX.search(name)


@dataclass(frozen=True)
class Labels:
    """How a redacted secret reads: `named` takes the variable's name."""

    named: str
    token: str


JOURNAL = Labels(named="[REDACTED:{}]", token="[REDACTED]")
CASSETTE = Labels(named="[redacted:{}]", token="[redacted:token]")


class Redactor:
    """Replaces secrets in text, JSON lines, nested values, pydantic objects and streamed pieces.
    `secrets` maps a name to a value to hide (already chosen: `from_env` does the choosing)."""

    def __init__(self, secrets: Mapping[str, str] | None = None, *, labels: Labels = JOURNAL) -> None:
        self.labels = labels
        forms: dict[str, str] = {}
        for name, value in sorted((secrets or {}).items()):
            for form in (value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]):
                forms.setdefault(form, name)
        self._names = forms
        # Longest first, so a value that contains another is replaced whole.
        values = [re.escape(v) for v in sorted(forms, key=len, reverse=True)]
        alternatives = [f"(?P<value>{'|'.join(values)})"] if values else []
        alternatives += [f"(?:{pattern})" for _, pattern in TOKEN_PATTERNS]
        alternatives += [f"(?P<keep{i}>{prefix}){value}" for i, (prefix, value) in enumerate(PREFIXED_PATTERNS)]
        self._pattern = re.compile("|".join(alternatives))

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, labels: Labels = JOURNAL) -> Redactor:
        return cls({name: value for name, value in env.items() if looks_secret(name, value)}, labels=labels)

    def labelled(self, labels: Labels) -> Redactor:
        """The same secrets, written with other labels (a cassette's)."""
        other = Redactor.__new__(Redactor)
        other.labels, other._names, other._pattern = labels, self._names, self._pattern
        return other

    @property
    def names(self) -> list[str]:
        """The environment variables whose values are hidden."""
        return sorted(set(self._names.values()))

    def _label(self, match: re.Match[str]) -> str:
        groups = match.groupdict()
        if groups.get("value") is not None:
            return self.labels.named.format(self._names[match.group("value")])
        for key, kept in groups.items():
            if key.startswith("keep") and kept is not None:
                return kept + self.labels.token
        return self.labels.token

    def text(self, text: str) -> str:
        return self._pattern.sub(self._label, text)

    def find_name(self, text: str) -> str | None:
        """The name of the first environment secret `text` holds (None when it holds none)."""
        if "value" not in self._pattern.groupindex:
            return None
        for match in self._pattern.finditer(text):
            if match.group("value") is not None:
                return self._names[match.group("value")]
        return None

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
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
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

    def chunks(self, pieces: list[str]) -> list[str]:
        """Redact text that streamed in pieces: a secret split across pieces is still found. The
        label lands in the piece where the secret starts; the pieces keep their count."""
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

    def stream_events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Dumped provider stream events (a cassette's); a run of text (or thinking) chunks is
        redacted as one text, so a secret split across chunks is found."""
        out = [{k: (v if k == "text" else self.value(v)) for k, v in e.items()} for e in events]
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
