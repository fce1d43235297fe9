"""The one redactor: secrets never enter the journal, the session, the events, the report, the
substores or a cassette; one per run, whatever the path.

One pass of one combined pattern finds three kinds of secret: the values of environment variables
whose names mark a credential (`looks_secret`: `MY_API_KEY`, `PGPASSWORD`, `GITHUBTOKEN`), and the
password of a URL any variable holds; token formats wherever they come from (`TOKEN_PATTERNS`); and
values in a telling place (`PREFIXED_PATTERNS`: `Bearer …`, `Authorization: Basic …`, a URL's
password, `PASSWORD=…`, `"password": "…"`), where the place is kept. A false alarm costs more than
a miss (invariant 9 in docs/architecture.md): a value is hidden only when it looks like one — not a word, a
placeholder, a reference (`${X}`), a path or an expression (`os.environ["X"]`).

A secret becomes a label: `[REDACTED:<VAR>]` / `[REDACTED]` in run files, `[redacted:<VAR>]` /
`[redacted:token]` in cassettes (`labelled(CASSETTE)`, so recorded fingerprints still match).
Redaction is idempotent (no pattern starts at a label) and runs on JSON text too (session lines,
events): a hidden value never spans a quote or a backslash, escapes (`\\n`, `\\"`, `\\u00e9`) count
as the characters they stand for, and an environment value is also searched JSON-escaped. Kept
places may span quotes (`"password": "`): they are written back unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arreio.engine.walls.clean_texts import CleanTexts
from arreio.engine.walls.secret_env import URL_PASSWORD, holds_private_key, looks_secret
from arreio.engine.walls.secret_patterns import ASCII_ALIKE, LEADS, combined
from arreio.engine.walls.spellings import Span, Spellings

_FAST_FROM = 32  # shorter texts: the plain scan is as quick
_SHORT_KEPT = 4096  # short texts remembered with their redacted form, at most (then forgotten at once)


@dataclass(frozen=True)
class Labels:
    """How a redacted secret reads: `named` takes the variable's name."""

    named: str
    token: str


class _Combined:
    """The one combined pattern (`secret_patterns.combined`), compiled on first use: ~20 ms, which a
    command that builds a redactor but never meets a lead (`arreio memory show`, a run refused before
    it starts) need not pay. A `labelled` copy shares it."""

    def __init__(self, values: list[str]) -> None:
        self._values = values
        self._compiled: re.Pattern[str] | None = None

    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = combined(self._values)
        return self._compiled


JOURNAL = Labels(named="[REDACTED:{}]", token="[REDACTED]")
CASSETTE = Labels(named="[redacted:{}]", token="[redacted:token]")


class Redactor:
    """Replaces secrets in text, JSON lines, nested values, pydantic objects and streamed pieces.
    `secrets` maps a name to a value to hide (already chosen: `from_env` does the choosing)."""

    def __init__(self, secrets: Mapping[str, str] | None = None, *, labels: Labels = JOURNAL) -> None:
        self.labels = labels
        forms: dict[str, str] = {}
        for name, value in sorted((secrets or {}).items()):
            if not value:
                continue  # an empty value would match everywhere
            # As written, and JSON-escaped once and twice (a JSON file read into a JSON line).
            once = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
            for form in (value, *once, *(json.dumps(form)[1:-1] for form in once)):
                forms.setdefault(form, name)
        self._names = forms
        self._combined = _Combined(list(forms))
        self._leads = tuple(dict.fromkeys([*LEADS, *(form.lower() for form in forms)]))
        # Their other spellings (reversed, base64, hex, percent-encoded, broken in pieces), made once.
        self._spellings = Spellings({name: value for name, value in (secrets or {}).items() if value})
        self._clean = CleanTexts()
        self._short: dict[str, str] = {}  # short text -> as redacted (`text`)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, labels: Labels = JOURNAL) -> Redactor:
        """The variables `looks_secret` picks, any holding a private key, and the password of a URL any variable holds
        (`DATABASE_URL=postgres://app:<password>@db/app`: the password alone is hidden wherever it
        shows, unless it is a word like `password` or `postgres`)."""
        secrets = {name: value for name, value in env.items() if looks_secret(name, value) or holds_private_key(value)}
        for name, value in env.items():
            for password in URL_PASSWORD.findall(value):
                if name not in secrets and looks_secret("PASSWORD", password):
                    secrets[name] = password
        return cls(secrets, labels=labels)

    def labelled(self, labels: Labels) -> Redactor:
        """The same secrets, written with other labels (a cassette's)."""
        other = Redactor.__new__(Redactor)
        other.labels, other._names, other._combined, other._leads = labels, self._names, self._combined, self._leads
        other._spellings = self._spellings
        other._clean = self._clean  # the same secrets: what one finds clean the other does too
        other._short = {}  # written with other labels
        return other

    @property
    def _pattern(self) -> re.Pattern[str]:
        return self._combined.pattern()

    def compiled(self) -> Redactor:
        """This redactor with its pattern compiled now rather than at its first use (a process that
        forks workers compiles it once for all of them)."""
        self._combined.pattern()
        return self

    @property
    def names(self) -> list[str]:
        """The environment variables whose values are hidden."""
        return sorted(set(self._names.values()))

    def _hit(self, match: re.Match[str]) -> tuple[str, str | None]:
        """What a match keeps in front of its label, and the name of the environment secret it hides
        (None for a format)."""
        group = match.lastgroup  # a prefixed format closes its `keep<i>` group last; others have none
        if group is None or not group.startswith("keep"):
            return "", self._names.get(match.group(0))
        kept, hidden = match.string[match.start() : match.start(group)], match.string[match.end(group) : match.end()]
        # The kept place can hold a token itself (`https://ghp_…:x@github.com`).
        return self._pattern.sub(self._label, kept), self._names.get(hidden)

    def _label(self, match: re.Match[str]) -> str:
        kept, name = self._hit(match)
        return kept + (self.labels.named.format(name) if name is not None else self.labels.token)

    def text(self, text: str) -> str:
        if len(text) < _FAST_FROM:
            # Short texts (ids, names, digests, statuses) come back every turn: remembered by value.
            done = self._short.get(text)
            if done is None:
                if len(self._short) >= _SHORT_KEPT:
                    self._short.clear()
                done = self._short[text] = self._pattern.sub(self._label, self._respelled(text))
            return done
        if not text.isascii() and any(c in text for c in ASCII_ALIKE):
            return self._pattern.sub(self._label, self._respelled(text))
        if self._clean.holds(text):  # this very text was scanned before and held nothing
            return text
        out = self._formats(self._respelled(text))
        if out is text:
            self._clean.add(text)
        return out

    def _formats(self, text: str) -> str:
        """The one combined pattern, tried only where a lead is (see `LEADS`); `text` itself when it
        holds nothing."""
        lowered = text.lower()
        starts: set[int] = set()
        for lead in self._leads:
            at = lowered.find(lead)
            while at >= 0:
                starts.add(at)
                at = lowered.find(lead, at + 1)
        if not starts:
            return text
        out, done, match = [], 0, self._pattern.match
        for start in sorted(starts):
            if start < done:
                continue  # inside the previous match, as a scan would skip it
            found = match(text, start)
            if found is not None:
                out.append(text[done:start])
                out.append(self._label(found))
                done = found.end()
        if not out:
            return text
        out.append(text[done:])
        return "".join(out)

    def _respelled(self, text: str) -> str:
        """The first pass: the environment's secrets in every spelling (`spellings.py`), before the
        formats (whose match could take the first half of a broken value and leave the second);
        `text` itself when it holds none."""
        spans = self._spellings.spans(text) if self._spellings else ()
        if not spans:
            return text
        out, done = [], 0
        for span in spans:
            out += [text[done : span.start], self.labels.named.format(span.name)]
            done = span.end
        out.append(text[done:])
        return "".join(out)

    def spelled(self, text: str, *, partial: bool = False) -> list[Span]:
        """Where `text` holds another spelling of an environment secret (`Spellings.spans`)."""
        return self._spellings.spans(text, partial=partial) if self._spellings else []

    def known_clean(self, text: str) -> bool:
        """Whether this very text object was scanned by this redactor (or a relabelled copy) and
        held nothing to hide (long texts only: see `CleanTexts`)."""
        return self._clean.holds(text)

    def find_name(self, text: str) -> str | None:
        """The name of the first environment secret `text` holds (None when it holds none)."""
        if not self._names:
            return None
        spans = self.spelled(text)
        if spans:
            return spans[0].name
        for match in self._pattern.finditer(text):
            name = self._hit(match)[1]
            if name is not None:
                return name
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
        spans = [(s.start, s.end, self.labels.named.format(s.name)) for s in self.spelled(joined)]
        spans += [
            (m.start(), m.end(), self._label(m))
            for m in self._pattern.finditer(joined)
            if not any(m.start() < end and start < m.end() for start, end, _ in spans)
        ]
        spans.sort()
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
