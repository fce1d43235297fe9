"""The one redactor: secrets never enter the journal, the session, the events, the report, the
substores or a cassette (issue 9; one per run since issue 15; issue 16 §4: whatever the path).

One pass of one combined pattern finds three kinds of secret: the values of environment variables
whose names mark a credential (`looks_secret`: `MY_API_KEY`, `PGPASSWORD`, `GITHUBTOKEN`), and the
password of a URL any variable holds; token formats wherever they come from (`TOKEN_PATTERNS`); and
values in a telling place (`PREFIXED_PATTERNS`: `Bearer …`, `Authorization: Basic …`, a URL's
password, `PASSWORD=…`, `"password": "…"`), where the place is kept. A false alarm costs more than
a miss (DESIGN invariant 9): a value is hidden only when it looks like one — not a word, a
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

from arreio.engine.governance.clean_texts import CleanTexts
from arreio.engine.governance.secret_env import MIN_SECRET_CHARS, URL_PASSWORD, looks_secret

# --- formats -------------------------------------------------------------------------------
# Speed: every alternative starts with a literal character or a class, which the regex engine
# tests at a glance; lookbehinds and case-insensitive words come after it. So a token's word edge
# (not after a letter, digit or `_`; a JSON escape before it, `\n` `\u00e9`, is an edge) is a
# two-character lookbehind after its first character. AWS and Google ids, made of base64 letters,
# also refuse base64's `+` `/` before them: an id shape inside image data is not a token.
_EDGE = r"(?:(?<![A-Za-z0-9_].)|(?<=\\[nrtbf].)|(?<=\\u[0-9A-Fa-f]{4}.))"
# A PEM line break: raw or JSON-escaped (at any depth), indented, or numbered (`read_file`, `cat -n`).
_LB = r"(?:(?:\r?\n|\\+r\\+n|\\+n)(?:[ \t]*[0-9]{1,7}(?:\t|\\+t|:))?|[ \t])+"
_PEM_NAME = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
# Header, optional `Proc-Type:`-style lines, base64 lines, and the END line when it is there: a key
# cut short (`head key.pem`) still hides its body, a bare header in code (`"-----BEGIN…"`) stays.
_PEM_END = rf"(?:{_LB}-----END {_PEM_NAME})"
_PEM = (rf"-----BEGIN {_PEM_NAME}(?:{_LB}[A-Za-z][A-Za-z0-9-]*: [^\r\n\"\\]*)*(?:{_LB}[A-Za-z0-9+/=]{{16,}})+"
        rf"(?:{_LB}[A-Za-z0-9+/=]{{1,15}}(?={_LB}-----END))?{_PEM_END}?")
# Whole-match token formats (the match becomes the label); each one alternative, starting with a
# literal character or a class.
TOKEN_PATTERNS: list[tuple[str, str]] = [
    ("private_key", _PEM),
    # Anthropic, OpenAI (`sk-ant-…`, `sk-proj-…`), and one word with a digit or a capital in it (legacy
    # OpenAI, DeepSeek, litellm): not a kebab-case name like `sk-learn-…` or `sk-kogptv2-…`.
    ("provider_key", r"sk-(?:ant|proj|svcacct|admin)-(?![A-Za-z0-9_\-]*?(?:example|your|xxxx))[A-Za-z0-9_\-]{20,}"),
    ("provider_key", r"sk-(?=[a-z]*[A-Z0-9])[A-Za-z0-9]{20,}(?![A-Za-z0-9_\-])"),
    ("stripe_key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("stripe_webhook", r"whsec_[A-Za-z0-9]{24,}"),
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{20,}"),
    ("github_token", r"github_pat_[A-Za-z0-9_]{20,}"),
    ("gitlab_token", r"gl(?:pat|dt|ptt|rt|soat)-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"xox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("slack_token", r"xapp-[0-9]-[A-Za-z0-9\-]{10,}"),
    ("aws_key_id", r"A(?<![+/].)(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("google_key", r"A(?<![+/].)Iza[0-9A-Za-z_\-]{35}"),
    ("google_oauth", r"ya29\.[0-9A-Za-z_\-]{20,}"),
    ("hf_token", r"hf_[A-Za-z0-9]{30,}"),
    ("npm_token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    ("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
]

_T = r"(?:[ \t]|\\+t)"  # a blank, raw or JSON-escaped (at any depth: JSON text in a JSON line)
_Q = r"(?:\\*[\"'])"  # a quote, raw or JSON-escaped (at any depth)
_END = r"(?=[\s,;\"'`]|\\|$)"  # where an unquoted value stops (a backtick: `PW=x` in Markdown)
_STOP = r"\s\"'\\"
_NO_REF = r"(?![$<{}%*\[\]()/~=,;])"  # not a value: a reference, a template, a path, code
# Values, and the lookaheads that scan them, stop this far: a long run that is not a value (minified
# code, `password=password=…`) costs a bounded scan at each place, never one to its end.
_UPTO, _VAL = "{0,1024}", f"{{{MIN_SECRET_CHARS},1024}}"


def _not_placeholder(chars: str = r"^\s\"'\\") -> str:
    """A lookahead refusing a value (made of `chars`) that is a placeholder (`password1`, `your-key`,
    `sk-xxxx`), a masked value (`hf_***`) or a reference (litellm's `os.environ/KEY`)."""
    return (rf"(?![{chars}]{{0,64}}?(?i:example|changeme|placeholder|dummy|your|environ|credential|xxxx"
            r"|\*\*\*|\.\.\.|[<>]))(?!(?i:my|the|a)?[_-]?(?i:pass(?:word|wd)?|pwd|secret|token|api[_-]?key"
            rf"|credentials?)[_-]?[0-9]{{0,3}}(?![{chars}]))")


# `name = `, `name => `, `"name": `, `name: ` (a bare colon needs a blank after it: not an ARN's
# `:secret:`, not minified code's `Password:"`).
_SEP = rf"(?:{_Q}?{_T}*(?:=>|:=|=)|{_Q}{_T}*:|{_T}*:(?={_T})){_T}*"
# The last word of a credential's name, in any case, grouped by first letter; the name must end
# there (not `password_hash`, `tokenizer`, `max_tokens`). What comes before it (`db_`, `PG`,
# `aws_secret_`) is left alone.
_CRED_WORDS = [r"[Pp](?i:ass(?:w(?:or)?d|phrase)|wd|rivate[_-]?key)", r"[Ss](?i:ecret(?:[_-]?key)?)",
               r"[Tt](?i:oken)", r"[Aa](?i:(?:pi|ccess|ccount)[_-]?key)", r"[Cc](?i:redentials?)"]
_NAME_END = r"(?![A-Za-z0-9_]|-[A-Za-z])"
_ENV_WORDS = [r"P(?:ASSW(?:OR)?D|ASSPHRASE|WD|RIVATE_?KEY)", r"SECRET(?:_?KEY(?:_BASE)?)?", r"TOKEN",
              r"A(?:PI|CCESS)_?KEY", r"CREDENTIALS?"]
# `.env` / shell lines (`PGPASSWORD=…`, `export API_KEY="…"`): any value but a word or a reference.
_ENV_VALUE = (_NO_REF + _not_placeholder() + rf"(?![a-z_.\-]{_UPTO}{_END})(?![A-Z_.\-]{_UPTO}{_END})"
              rf"[^{_STOP}`]{_VAL}")
# Config and code, quoted (`"password": "…"`, `password = '…'`, `'token' => "…"`): a literal with
# a digit or ASCII punctuation but `_` `.` `-` (not "Password", "REPLACE_ME", "${DB_PASSWORD}",
# a path expression like "Jobs[-1].JobId").
_SYMBOL = r"[0-9!#$%&()*+,/:;<=>?@\[\]^`{|}~]"
_QUOTED = (_NO_REF + _not_placeholder() + rf"(?![A-Za-z_]\w{_UPTO}(?:\[-?\w*\]|\.[A-Za-z_]\w*){{1,16}}{_Q})"
           rf"(?=[^{_STOP}]{_UPTO}{_SYMBOL})[^{_STOP}]{_VAL}(?={_Q})")
# Unquoted (`password: s3cr3t!`, `aws_secret_access_key = wJalr…`): a letter and a digit, and not
# an expression (`os.environ[…]`, `get_token()`, `settings.secret_v2`, `password2`) nor a type
# (`private_key: Ed25519PrivateKey`).
_BARE = r"^\s\"'\\,;()\[\]{}<>`|"
_UNQUOTED = (
    _NO_REF + _not_placeholder(_BARE) + rf"(?![.])(?=[{_BARE}]{_UPTO}[0-9])(?=[{_BARE}]{_UPTO}[A-Za-z])"
    rf"(?![A-Za-z0-9_.]{_UPTO}[_.][A-Za-z0-9_.]{_UPTO}{_END})(?![a-z][a-z0-9]{{0,11}}{_END})"
    rf"(?![A-Za-z0-9]{_UPTO}[A-Z][a-z]{{2,}}[A-Z][a-z]{{2,}}[A-Za-z0-9]{_UPTO}{_END})[{_BARE}]{_VAL}{_END}"
)
_BEARER = r"A-Za-z0-9._~+/\-"
# Formats that keep a harmless place (the scheme and user, the variable name, the header) and hide
# only the value: (prefix pattern, value pattern). A group `(?P<q>…)` in the prefix may steer the
# value with `(?(q)…)`. A value starting at a label is never matched (idempotence).
PREFIXED_PATTERNS: list[tuple[str, str]] = [
    # URL credentials: scheme and user kept (the user is redacted too if it is a token).
    (r"://[^\s:@/\[\]\"'\\]*:",
     r"(?![$<{%*])(?!x+@)" + _not_placeholder(r"^\s@/\"'\\") + r"[^\s@/\"'\\]{1,256}(?=@[A-Za-z0-9\[])"),
    # `https://<token>@host` (not `ssh://git@host`, whose user is never a secret).
    (r"[Hh](?i:ttps?)://", r"(?=[A-Za-z0-9_.~%\-]{0,256}[0-9])[A-Za-z0-9_.~%\-]{20,256}(?=@[A-Za-z0-9])"),
    (r"[Bb](?i:earer)" + _T + "+",
     _not_placeholder(_BEARER) + rf"(?=[A-Za-z._~+/\-]{_UPTO}[0-9])[{_BEARER}]{{20,8192}}=*"),
    # `Authorization: Basic <base64>` shaped like base64 (not "Basic authentication"), or `token <…>`.
    (r"[Aa](?i:uthorization)" + _SEP + _Q + "?" + _T + r"*(?i:(?P<q>basic)|token)" + _T + "+",
     r"(?(q)(?=[a-z]*[A-Z0-9+/])(?:[A-Za-z0-9+/]{4}){2,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=])"
     rf"|(?=[A-Za-z._\-]{_UPTO}[0-9])[{_BEARER}]{{16,8192}})"),
    *[(word + r"(?![A-Za-z0-9_])=" + _Q + "?", _ENV_VALUE) for word in _ENV_WORDS],
    *[(word + _NAME_END + _SEP + f"(?P<q>{_Q})?", f"(?(q){_QUOTED}|{_UNQUOTED})") for word in _CRED_WORDS],
    (r"curl[ \t][^\n\"'|;&\\]{0,200}?(?:-u|--user)(?:[ \t]+|=)" + _Q + r"?[^\s:\"'\\]+:", _NO_REF + r"[^\s\"'\\@]+"),
    (r"hooks\.slack\.com/services/", _not_placeholder("A-Za-z0-9/") + r"[A-Za-z0-9/]{20,}"),
    # `.netrc` lines: `login` then `password` (a bare "password" in prose has no `login` before it).
    (r"[Ll]ogin[ \t]+[^\s\"'\\]+(?:[ \t]|\r?\n|\\+n)+[ \t]*password[ \t]+", _NO_REF + r"[^\s\"'\\]+"),
]
_NOT_AT_LABEL = r"(?!\[(?i:redacted)\b)"

# Where a match can begin: every alternative above starts with one of these (lowercased), so in
# ASCII text no other position needs trying. `Redactor.text` finds them with `str.find` (fast) and
# tries the one combined pattern only there: the same matches, in the same order, as a scan of every
# position (a test compares the two on the corpus), at a fraction of the cost — Python's regex engine
# tries each of the ~40 alternatives at every position of a text otherwise. Non-ASCII text takes
# the fast path too (a stub's `—`, a result's `✓`), unless it holds one of the only four characters
# that case-insensitive matching equates with an ASCII letter (`_ASCII_ALIKE`: `ſ` for `s`, the
# Kelvin sign for `k`, dotted and dotless i; found by trying every code point) — there a lead could
# hide from `str.lower`, so the plain scan runs (so does text with a capital sigma, lowered by
# context). Without them `str.lower` maps one character to one, always the same way (only `İ`
# lowers to two), so positions and leads in the lowered text are those of the text.
_LEADS = (
    "-----begin", "sk-", "sk_", "rk_", "whsec_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "gldt-", "glptt-", "glrt-", "glsoat-", "xox", "xapp-", "akia", "asia", "abia", "acca", "aiza",
    "ya29.", "hf_", "npm_", "pypi-age", "sg.", "eyj",  # TOKEN_PATTERNS
    "://", "http", "bearer", "authorization", "pass", "pwd", "private", "secret", "token", "api", "access",
    "account", "credential", "curl", "hooks.slack.com/services/", "login",  # PREFIXED_PATTERNS
)
_FAST_FROM = 32  # shorter texts: the plain scan is as quick
_SHORT_KEPT = 4096  # short texts remembered with their redacted form, at most (then forgotten at once)
# İ ı ſ K: (?i) matches them to i, i, s, k; and Σ, the one letter `str.lower` lowers by context
# (final σ/ς), so an environment value's lowered form could differ from the text's around it.
_ASCII_ALIKE = ("\u0130", "\u0131", "\u017f", "\u212a", "\u03a3")


def _after_first(pattern: str, check: str) -> str:
    """`pattern` with `check` inserted after its first character (a literal, an escape or a class)."""
    n = pattern.index("]") + 1 if pattern[0] == "[" else 2 if pattern[0] == "\\" else 1
    return pattern[:n] + check + pattern[n:]


def _combined(values: list[str]) -> re.Pattern[str]:
    """One pattern: the environment values (longest first, so a value containing another is
    replaced whole), the token formats, then the prefixed formats, each prefix closed by an empty
    group `keep<i>` that says where the hidden value starts."""
    alternatives = [re.escape(v) for v in sorted(values, key=len, reverse=True)]
    alternatives += [_after_first(pattern, _EDGE) for _, pattern in TOKEN_PATTERNS]
    for i, (prefix, value) in enumerate(PREFIXED_PATTERNS):
        alternatives.append(f"{prefix}(?P<keep{i}>){_NOT_AT_LABEL}{value}".replace("(?P<q>", f"(?P<q{i}>")
                            .replace("(?(q)", f"(?(q{i})"))
    return re.compile("|".join(alternatives))


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
            if not value:
                continue  # an empty value would match everywhere
            # As written, and JSON-escaped once and twice (a JSON file read into a JSON line).
            once = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
            for form in (value, *once, *(json.dumps(form)[1:-1] for form in once)):
                forms.setdefault(form, name)
        self._names = forms
        self._pattern = _combined(list(forms))
        self._leads = tuple(dict.fromkeys([*_LEADS, *(form.lower() for form in forms)]))
        self._clean = CleanTexts()
        self._short: dict[str, str] = {}  # short text -> as redacted (`text`)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, labels: Labels = JOURNAL) -> Redactor:
        """The variables `looks_secret` picks, and the password of a URL any variable holds
        (`DATABASE_URL=postgres://app:<password>@db/app`: the password alone is hidden wherever it
        shows, unless it is a word like `password` or `postgres`)."""
        secrets = {name: value for name, value in env.items() if looks_secret(name, value)}
        for name, value in env.items():
            for password in URL_PASSWORD.findall(value):
                if name not in secrets and looks_secret("PASSWORD", password):
                    secrets[name] = password
        return cls(secrets, labels=labels)

    def labelled(self, labels: Labels) -> Redactor:
        """The same secrets, written with other labels (a cassette's)."""
        other = Redactor.__new__(Redactor)
        other.labels, other._names, other._pattern, other._leads = labels, self._names, self._pattern, self._leads
        other._clean = self._clean  # the same secrets: what one finds clean the other does too
        other._short = {}  # written with other labels
        return other

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
        kept, hidden = match.string[match.start():match.start(group)], match.string[match.end(group):match.end()]
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
                done = self._short[text] = self._pattern.sub(self._label, text)
            return done
        if not text.isascii() and any(c in text for c in _ASCII_ALIKE):
            return self._pattern.sub(self._label, text)
        if self._clean.holds(text):  # this very text was scanned before and held nothing
            return text
        lowered = text.lower()
        starts: set[int] = set()
        for lead in self._leads:
            at = lowered.find(lead)
            while at >= 0:
                starts.add(at)
                at = lowered.find(lead, at + 1)
        if not starts:
            self._clean.add(text)
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
            self._clean.add(text)
            return text
        out.append(text[done:])
        return "".join(out)

    def known_clean(self, text: str) -> bool:
        """Whether this very text object was scanned by this redactor (or a relabelled copy) and
        held nothing to hide (long texts only: see `CleanTexts`)."""
        return self._clean.holds(text)

    def find_name(self, text: str) -> str | None:
        """The name of the first environment secret `text` holds (None when it holds none)."""
        if not self._names:
            return None
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
