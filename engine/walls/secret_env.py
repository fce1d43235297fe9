"""Which environment variables hold a credential (the redactor hides their values wherever they
show): `looks_secret`, and the password a URL in any variable carries. Split from `redact.py`."""

from __future__ import annotations

import re

__all__ = ["MIN_SECRET_CHARS", "URL_PASSWORD", "holds_private_key", "looks_secret"]

MIN_SECRET_CHARS = 8

# --- environment variables -------------------------------------------------------------------
# Words that mark a credential anywhere in a name (PGPASSWORD, DJANGO_SECRETKEY, GITHUBTOKEN), and
# short ones only as a whole segment (MYSQL_PWD, GH_PAT, NPM_AUTH: not KEYBOARD, PATH, AUTHOR).
_STRONG_NAME = re.compile(
    r"(?i)PASSW(?:OR)?D|PASSPHRASE|SECRET|TOKEN(?!IZ)|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|(?:^|_)PWD(?:_|$)"
)
_WEAK_NAME = re.compile(r"(?i)(?:^|_)(?:KEY|PASS|PW|AUTH|PAT)(?:_|$)")
# ...unless the variable names a place or a setting rather than a value (SSH_AUTH_SOCK,
# GOOGLE_CREDENTIALS_FILE, PASSWORD_MIN_LENGTH, AWS_ACCESS_KEY_ID, TOKEN_URL).
_SETTING_SUFFIX = re.compile(
    r"(?i)_(?:SOCK|SOCKET|PATH|FILE|DIR|HOME|URL|URI|ENDPOINT|HOST|PORT|DOMAIN|REGION|ID|NAME|TYPE|MODE|METHOD"
    r"|PROVIDER|BACKEND|LENGTH|LEN|MIN|MAX|TTL|TIMEOUT|EXPIRY|EXPIRES|LIMIT|COUNT|BUDGET|ENABLED|DISABLED"
    r"|REQUIRED|POLICY|HEADER|PREFIX|SCOPES?|AUDIENCE|ISSUER|VERSION|FORMAT|ALGORITHM|CMD|COMMAND)$"
)
_NOT_A_VALUE = re.compile(
    r"(?:[/~]|\.\.?/|[A-Za-z]:\\|\$)"  # a path, a reference
    r"|(?i:true|false|yes|no|on|off|none|null|enabled|disabled)$|\d+$"
    r"|[A-Za-z][A-Za-z0-9+.\-]*://[^@\s]*$"  # a URL holding no credential
)
_PLAIN_WORD = re.compile(r"[a-z_.\-]+|[A-Z_.\-]+")
# A single word: even as a password (`DB_PASSWORD=postgres`), hiding it would hide the word everywhere.
_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+")
URL_PASSWORD = re.compile(r"://[^\s:@/]*:([^\s@/]+)@")
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")


def holds_private_key(value: str) -> bool:
    """Whether a variable holds a private key, whatever its name (`DEPLOY=-----BEGIN …`): hidden
    whole, and line by line (a sorted `env` scatters its lines)."""
    return "-----BEGIN" in value and _PRIVATE_KEY.search(value) is not None


def looks_secret(name: str, value: str) -> bool:
    """Whether an environment variable holds a credential worth hiding. A password-like name takes
    any value but a single word; other names need one that is not a plain word (`rotate-daily`); a
    weak segment (KEY, AUTH, PASS) needs a random-looking one (a letter and a digit, or mixed case)."""
    if len(value) < MIN_SECRET_CHARS or _NOT_A_VALUE.match(value) or _SETTING_SUFFIX.search(name):
        return False
    strong = _STRONG_NAME.search(name)
    if strong is not None:
        password = strong.group(0).upper().startswith("PASS") or "PWD" in strong.group(0).upper()
        return not (_WORD if password else _PLAIN_WORD).fullmatch(value)
    if _WEAK_NAME.search(name):
        mixed_case = value != value.lower() and value != value.upper() and " " not in value
        return mixed_case or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value))
    return False
