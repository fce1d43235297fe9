"""The formats the redactor knows a secret by, whatever the environment holds: token formats
(`TOKEN_PATTERNS`), values in a telling place (`PREFIXED_PATTERNS`), where a match can begin
(`LEADS`), and the one combined pattern (`combined`). Split from `redact.py`."""

from __future__ import annotations

import re

from arreio.engine.walls.secret_env import MIN_SECRET_CHARS

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
PEM_END = rf"(?:{_LB}-----END {_PEM_NAME})"
_PEM = (
    rf"-----BEGIN {_PEM_NAME}(?:{_LB}[A-Za-z][A-Za-z0-9-]*: [^\r\n\"\\]*)*(?:{_LB}[A-Za-z0-9+/=]{{16,}})+"
    rf"(?:{_LB}[A-Za-z0-9+/=]{{1,15}}(?={_LB}-----END))?{PEM_END}?"
)
# A private key's base64 body without its BEGIN line (`sed 1d key.pem`, a sorted `env` that moved the
# header away, a key kept in a variable without its armour): the DER encoding of every private-key
# format starts with a version number right after the first length, unlike a certificate's, a CSR's
# or a public key's (`MIIC+TCC…`, `MIIEUTCC…`, `MIIBIjAN…`, `MIIBCgKC…`): PKCS#1 RSA and DSA
# (`MII…IBAAK`), PKCS#8 (`MII…IBADAN`, `MIG…AgEA`), SEC1 EC (`MHcCAQEE`, `MIG…AgEB`, `MIH…AgEB`),
# Ed25519, X25519 and Ed448 (`MC4CAQAwBQYDK2V`, `MEcCAQAwBQYDK2V`), and OpenSSH's own format. Never
# inside a longer base64 run (`+` or `/` before it).
_KEY_BODY = (
    rf"[A-Za-z0-9+/]{{20,}}=*(?:{_LB}[A-Za-z0-9+/=]{{16,}})*"
    rf"(?:{_LB}[A-Za-z0-9+/=]{{1,15}}(?={_LB}-----END)|{_LB}[A-Za-z0-9+/]{{0,14}}={{1,2}})?{PEM_END}?"
)
_NOT_IN_BASE64 = r"(?<![+/].)"
# A PEM private key, base64-encoded once more (a Kubernetes secret's `tls.key: LS0tLS1CRUdJTi…`):
# "-----BEGIN " then "PRIVATE KEY" at any of the three offsets.
_ENCODED_PEM = (
    r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,32}?(?:UFJJVkFURSBLRVk|BSSVZBVEUgS0VZ|QUklWQVRFIEtFW)"
    rf"[A-Za-z0-9+/=]*(?:{_LB}[A-Za-z0-9+/=]{{16,}})*"
)
# Whole-match token formats (the match becomes the label); each one alternative, starting with a
# literal character or a class.
TOKEN_PATTERNS: list[tuple[str, str]] = [
    ("private_key", _PEM),
    ("private_key", rf"M{_NOT_IN_BASE64}II[A-Za-z0-9+/]{{2}}[AQgw]IBA(?:AK|DA){_KEY_BODY}"),
    ("private_key", rf"M{_NOT_IN_BASE64}I[GH][A-Za-z0-9+/]AgE[AB]{_KEY_BODY}"),
    ("private_key", rf"M{_NOT_IN_BASE64}(?:C4|Ec)CAQAwBQYDK2V{_KEY_BODY}"),
    ("private_key", rf"M{_NOT_IN_BASE64}HcCAQEE{_KEY_BODY}"),
    ("private_key", rf"b{_NOT_IN_BASE64}3BlbnNzaC1rZXktdjE{_KEY_BODY}"),
    ("private_key", _ENCODED_PEM),
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
    return (
        rf"(?![{chars}]{{0,64}}?(?i:example|changeme|placeholder|dummy|your|environ|credential|xxxx"
        r"|\*\*\*|\.\.\.|[<>]))(?!(?i:my|the|a)?[_-]?(?i:pass(?:word|wd)?|pwd|secret|token|api[_-]?key"
        rf"|credentials?)[_-]?[0-9]{{0,3}}(?![{chars}]))"
    )


# `name = `, `name => `, `"name": `, `name: ` (a bare colon needs a blank after it: not an ARN's
# `:secret:`, not minified code's `Password:"`).
_SEP = rf"(?:{_Q}?{_T}*(?:=>|:=|=)|{_Q}{_T}*:|{_T}*:(?={_T})){_T}*"
# The last word of a credential's name, in any case, grouped by first letter; the name must end
# there (not `password_hash`, `tokenizer`, `max_tokens`). What comes before it (`db_`, `PG`,
# `aws_secret_`) is left alone.
_CRED_WORDS = [
    r"[Pp](?i:ass(?:w(?:or)?d|phrase)|wd|rivate[_-]?key)",
    r"[Ss](?i:ecret(?:[_-]?key)?)",
    r"[Tt](?i:oken)",
    r"[Aa](?i:(?:pi|ccess|ccount)[_-]?key)",
    r"[Cc](?i:redentials?)",
]
_NAME_END = r"(?![A-Za-z0-9_]|-[A-Za-z])"
# What may stand between the name and its value in a note: `password for staging: …`, `token of the
# CI bot = …` (up to three words after for/of/on/to/at/in, none holding a `:` or `=`).
_WHOSE = r"(?:[ \t]+(?i:for|of|on|to|at|in)(?:[ \t]+[\w.@/\-]{1,40}){1,3}?)?"
_ENV_WORDS = [
    r"P(?:ASSW(?:OR)?D|ASSPHRASE|WD|RIVATE_?KEY)",
    r"SECRET(?:_?KEY(?:_BASE)?)?",
    r"TOKEN",
    r"A(?:PI|CCESS)_?KEY",
    r"CREDENTIALS?",
]
# `.env` / shell lines (`PGPASSWORD=…`, `export API_KEY="…"`): any value but a word or a reference.
_ENV_VALUE = (
    _NO_REF + _not_placeholder() + rf"(?![a-z_.\-]{_UPTO}{_END})(?![A-Z_.\-]{_UPTO}{_END})"
    rf"[^{_STOP}`]{_VAL}"
)
# Config and code, quoted (`"password": "…"`, `password = '…'`, `'token' => "…"`): a literal with
# a digit or ASCII punctuation but `_` `.` `-` (not "Password", "REPLACE_ME", "${DB_PASSWORD}",
# a path expression like "Jobs[-1].JobId").
_SYMBOL = r"[0-9!#$%&()*+,/:;<=>?@\[\]^`{|}~]"
_QUOTED = (
    _NO_REF + _not_placeholder() + rf"(?![A-Za-z_]\w{_UPTO}(?:\[-?\w*\]|\.[A-Za-z_]\w*){{1,16}}{_Q})"
    rf"(?=[^{_STOP}]{_UPTO}{_SYMBOL})[^{_STOP}]{_VAL}(?={_Q})"
)
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


def _one_of(words: list[str]) -> str:
    """Words that begin with different letters (a case-insensitive class or a capital) as one group."""
    if len({(word[1] if word[0] == "[" else word[0]).lower() for word in words}) != len(words):
        raise ValueError("two words begin with the same letter")
    return "(?:" + "|".join(words) + ")"


# Formats that keep a harmless place (the scheme and user, the variable name, the header) and hide
# only the value: (prefix pattern, value pattern). A group `(?P<q>…)` in the prefix may steer the
# value with `(?(q)…)`. A value starting at a label is never matched (idempotence).
PREFIXED_PATTERNS: list[tuple[str, str]] = [
    # URL credentials: scheme and user kept (the user is redacted too if it is a token).
    (
        r"://[^\s:@/\[\]\"'\\]*:",
        r"(?![$<{%*])(?!x+@)" + _not_placeholder(r"^\s@/\"'\\") + r"[^\s@/\"'\\]{1,256}(?=@[A-Za-z0-9\[])",
    ),
    # `https://<token>@host` (not `ssh://git@host`, whose user is never a secret).
    (r"[Hh](?i:ttps?)://", r"(?=[A-Za-z0-9_.~%\-]{0,256}[0-9])[A-Za-z0-9_.~%\-]{20,256}(?=@[A-Za-z0-9])"),
    (
        r"[Bb](?i:earer)" + _T + "+",
        _not_placeholder(_BEARER) + rf"(?=[A-Za-z._~+/\-]{_UPTO}[0-9])[{_BEARER}]{{20,8192}}=*",
    ),
    # `Authorization: Basic <base64>` shaped like base64 (not "Basic authentication"), or `token <…>`.
    (
        r"[Aa](?i:uthorization)" + _SEP + _Q + "?" + _T + r"*(?i:(?P<q>basic)|token)" + _T + "+",
        r"(?(q)(?=[a-z]*[A-Z0-9+/])(?:[A-Za-z0-9+/]{4}){2,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=])"
        rf"|(?=[A-Za-z._\-]{_UPTO}[0-9])[{_BEARER}]{{16,8192}})",
    ),
    # Each list as one alternative of its words, the rest written once: the words start with different
    # letters, so at most one matches at a place and the match is what five alternatives gave — at a
    # fifth of the pattern to compile (every run compiles it: ~6 ms less).
    (_one_of(_ENV_WORDS) + r"(?![A-Za-z0-9_])=" + _Q + "?", _ENV_VALUE),
    (_one_of(_CRED_WORDS) + _NAME_END + _WHOSE + _SEP + f"(?P<q>{_Q})?", f"(?(q){_QUOTED}|{_UNQUOTED})"),
    # A registry's `auth` (docker's config.json, `.npmrc`'s `_auth=`): base64 of `user:password`.
    # Not `oauth`, not `auth: required`: a base64 run with both cases and a digit or `+/=`.
    (
        r"[Aa](?<![A-Za-z0-9].)(?i:uth)" + _NAME_END + _SEP + f"{_Q}?",
        r"(?=[A-Za-z0-9+/]{0,1024}[0-9+/=])(?=[A-Za-z0-9+/]{0,1024}[a-z])(?=[A-Za-z0-9+/]{0,1024}[A-Z])"
        r"(?:[A-Za-z0-9+/]{4}){3,256}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=_.\-])",
    ),
    (
        r"docker[ \t]+login[^\n\"'|;&\\]{0,200}?[ \t](?:-p|--password)(?:[ \t]+|=)" + _Q + "?",
        _NO_REF + _not_placeholder() + r"[^\s\"'\\]{4,}",
    ),
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
# that case-insensitive matching equates with an ASCII letter (`ASCII_ALIKE`: `ſ` for `s`, the
# Kelvin sign for `k`, dotted and dotless i; found by trying every code point) — there a lead could
# hide from `str.lower`, so the plain scan runs (so does text with a capital sigma, lowered by
# context). Without them `str.lower` maps one character to one, always the same way (only `İ`
# lowers to two), so positions and leads in the lowered text are those of the text.
LEADS = (
    "-----begin",
    "sk-",
    "sk_",
    "rk_",
    "whsec_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glptt-",
    "glrt-",
    "glsoat-",
    "xox",
    "xapp-",
    "akia",
    "asia",
    "abia",
    "acca",
    "aiza",
    "ya29.",
    "hf_",
    "npm_",
    "pypi-age",
    "sg.",
    "eyj",
    "mii",
    "mig",
    "mih",
    "mc4c",
    "mecc",
    "mhccaqee",
    "b3blbnnzac1rzxktdje",
    "ls0tls1crudjti",  # TOKEN_PATTERNS
    "://",
    "http",
    "bearer",
    "auth",
    "pass",
    "pwd",
    "private",
    "secret",
    "token",
    "api",
    "access",
    "account",
    "credential",
    "curl",
    "hooks.slack.com/services/",
    "login",
    "docker",  # PREFIXED_PATTERNS
)
# İ ı ſ K: (?i) matches them to i, i, s, k; and Σ, the one letter `str.lower` lowers by context
# (final σ/ς), so an environment value's lowered form could differ from the text's around it.
ASCII_ALIKE = ("\u0130", "\u0131", "\u017f", "\u212a", "\u03a3")


def _after_first(pattern: str, check: str) -> str:
    """`pattern` with `check` inserted after its first character (a literal, an escape or a class)."""
    n = pattern.index("]") + 1 if pattern[0] == "[" else 2 if pattern[0] == "\\" else 1
    return pattern[:n] + check + pattern[n:]


def combined(values: list[str]) -> re.Pattern[str]:
    """One pattern: the environment values (longest first, so a value containing another is
    replaced whole), the token formats, then the prefixed formats, each prefix closed by an empty
    group `keep<i>` that says where the hidden value starts."""
    alternatives = [re.escape(v) for v in sorted(values, key=len, reverse=True)]
    alternatives += [_after_first(pattern, _EDGE) for _, pattern in TOKEN_PATTERNS]
    for i, (prefix, value) in enumerate(PREFIXED_PATTERNS):
        alternatives.append(
            f"{prefix}(?P<keep{i}>){_NOT_AT_LABEL}{value}".replace("(?P<q>", f"(?P<q{i}>").replace("(?(q)", f"(?(q{i})")
        )
    return re.compile("|".join(alternatives))
