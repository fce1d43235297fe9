"""A known secret is hidden in its other spellings too (`engine/walls/spellings.py`): reversed,
base64 at every byte offset in both alphabets, hex, percent-encoded, broken in pieces at any point
past its anchor, wrapped; while streaming as well as whole. The corpus (`fixtures/secrets/
spellings.yaml`, tests/governance/test_secret_corpus.py) holds realistic texts; these go through every
offset and every break point."""

from __future__ import annotations

import base64
import json
import random
import textwrap

import pytest

from arreio.engine.core import events as ev
from arreio.engine.walls.delta_guard import DeltaGuard
from arreio.engine.walls.redact import Redactor

KEY = "sk-ant-api03-Rk4vZ9qL2xW7nB5mT8cJ3hF6dS1gA0pE-yU_iO9tPq"
AWS = "q8Hf/3kPz+Lw9RvX2mTb7YcN5dGj/E4sUa1K6oQi"  # `+` and `/`: its two base64 alphabets differ
ENV = {"ANTHROPIC_API_KEY": KEY, "AWS_SECRET_ACCESS_KEY": AWS}


def _core(value: str, offset: int, urlsafe: bool = False) -> str:
    """The base64 characters that depend on `value` alone, `offset` bytes into a stream."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    text = encode(b"\0" * offset + value.encode()).decode()
    return text[(8 * offset + 5) // 6 : 8 * (offset + len(value)) // 6]


def _streamed(redactor: Redactor, text: str, size: int) -> list[str]:
    guard = DeltaGuard(redactor)
    out = [e for i in range(0, len(text), size) for e in guard.feed(ev.TextDelta(text=text[i : i + size]))]
    out += guard.feed(ev.UnitEnd(unit_id="main", verdict="success"))
    return [e.text for e in out if e.type == "text_delta"]


@pytest.mark.parametrize("urlsafe", [False, True], ids=["standard", "url-safe"])
@pytest.mark.parametrize("padded", [True, False], ids=["padded", "unpadded"])
def test_base64_at_every_offset_inside_a_longer_stream(urlsafe: bool, padded: bool) -> None:
    redactor = Redactor.from_env(ENV)
    rng = random.Random(5)
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    for value in (KEY, AWS):
        for before in range(0, 7):
            for after in range(0, 4):
                data = rng.randbytes(before) + value.encode() + rng.randbytes(after)
                stream = encode(data).decode()
                stream = stream if padded else stream.rstrip("=")
                out = redactor.text(f"blob: {stream} end")
                core = _core(value, before % 3, urlsafe)
                assert core not in out and out.startswith("blob: ") and out.endswith(" end"), (before, after, out)


def test_hex_reversed_and_percent_encoded() -> None:
    redactor = Redactor.from_env(ENV)
    from urllib.parse import quote, quote_plus

    for value in (KEY, AWS):
        data = value.encode()
        for spelled in (
            value[::-1],
            data.hex(),
            data.hex().upper(),
            quote(value, safe=""),
            quote(value),
            quote_plus(value),
            quote(value, safe="").replace("%2F", "%2f").replace("%2B", "%2b"),
        ):
            out = redactor.text(f"seen: {spelled}; done")
            assert spelled not in out and out.startswith("seen: [REDACTED:") and out.endswith("]; done"), spelled


@pytest.mark.parametrize(
    "separator",
    ["\n", " ", "\r\n", '" "', "' + '", "\n     2\t", "\\n", "\\\\n      12\\\\t"],
    ids=["newline", "blank", "crlf", "quotes", "plus", "numbered", "json-newline", "nested-json"],
)
def test_a_value_broken_at_any_point_past_its_first_four_characters(separator: str) -> None:
    redactor = Redactor.from_env(ENV)
    for value in (KEY, AWS):
        for cut in range(4, len(value)):
            text = f"got {value[:cut]}{separator}{value[cut:]} ok"
            out = redactor.text(text)
            pieces = [p for p in (value[:cut], value[cut:]) if len(p) >= 4]
            assert [p for p in pieces if p in out] == [] and out.startswith("got [REDACTED:"), (cut, out)


def test_base64_wrapped_at_64_and_76_columns_at_every_offset() -> None:
    redactor = Redactor.from_env(ENV)
    for width in (64, 76):
        for before in range(0, 80, 7):
            data = b"x" * before + b"token: " + KEY.encode() + b"\n"
            stream = base64.b64encode(data).decode()
            text = "\n".join(textwrap.wrap(stream, width))
            out = redactor.text(text)
            core = _core(KEY, (before + 7) % 3)
            start = stream.index(core)
            # Every line's piece of the secret (of 8 characters or more) is gone.
            for line_start in range(0, len(stream), width):
                lo, hi = max(start, line_start), min(start + len(core), line_start + width)
                assert hi - lo < 8 or stream[lo:hi] not in out, (width, before)


def test_a_value_echoed_in_two_halves_never_streams_its_first_half() -> None:
    redactor = Redactor.from_env(ENV)
    text = f"$ echo ${{K:0:27}}; echo ${{K:27}}\n{KEY[:27]}\n{KEY[27:]}\nand the rest of the reply.\n"
    for size in (1, 3, 7, 16, 40):
        pieces = _streamed(redactor, text, size)
        assert "".join(pieces) == redactor.text(text)
        assert not any(KEY[:12] in p or KEY[27:40] in p for p in pieces), size


def test_the_split_value_wins_over_a_format_that_would_take_its_first_half() -> None:
    """`password: <first half>` alone is a format match; had it been labelled first, the second half
    would be left in the text. The spellings pass runs first."""
    redactor = Redactor.from_env({"DB_PASSWORD": "Tg7#pLm2!vQz9xR&w-long-enough"})
    out = redactor.text("password: Tg7#pLm2!vQz9\nxR&w-long-enough")
    assert out == "password: [REDACTED:DB_PASSWORD]"


def test_a_private_key_in_any_variable_is_hidden_line_by_line(tmp_path) -> None:
    lines = [
        "MIICXAIBAAKBgQCjkiENoRND5HGrrA4aUYdzzVWtSxFFGDKf1SgQK58mqGvVN4xf",
        "JmiTr6EOnJvPKFSGTMm9OafEZuotgd5G/n3gY2xVv8wQpKJzX0dWnTrQmH7vLc9s",
        "AoGAc2VlZC1ub3QtYS1yZWFsLWtleS1idXQtc2hhcGVkLWxpa2Utb25lLXE4Mw==",
    ]
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    redactor = Redactor.from_env({"DEPLOY": pem, "HOME": "/home/dev"})  # a name that says nothing
    assert redactor.names == ["DEPLOY"]
    env_sorted = "\n".join(sorted(["HOME=/home/dev", "LANG=C", *("DEPLOY=" + pem).splitlines()]))
    out = redactor.text(env_sorted)
    assert [line for line in lines if line in out] == [] and "HOME=/home/dev" in out and "LANG=C" in out


def test_json_lines_stay_json_and_the_name_is_found() -> None:
    redactor = Redactor.from_env(ENV)
    line = json.dumps({"content": f"{AWS[:20]}\n{AWS[20:]}", "n": 1})
    assert json.loads(redactor.text(line))["content"] == "[REDACTED:AWS_SECRET_ACCESS_KEY]"
    assert redactor.find_name(f"x {base64.b64encode(KEY.encode()).decode()} y") == "ANTHROPIC_API_KEY"
