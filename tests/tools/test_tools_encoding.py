"""Text that is not UTF-8: read_file and grep say which encoding they assumed instead of
handing the model U+FFFD garbage, binary stays refused, and `kb add` indexes such text."""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.engine.tools.encoding import sniff
from arreio.memory.knowledge.sources import SourceText, read_text

CP1252 = "Café “quoted” – 5 €\nsecond line\n"  # smart quotes, dash and euro: not in latin-1


@pytest.mark.parametrize(
    "data,expected",
    [
        (b"plain ascii\n", "utf-8"),
        ("déjà vu ✓\n".encode(), "utf-8"),
        ("\ufeffwith a bom\n".encode("utf-8"), "utf-8-sig"),
        ("utf-16 text\n".encode("utf-16"), "utf-16"),
        (CP1252.encode("cp1252"), "cp1252"),
        (b"caf\xe9 \x81 undefined in cp1252\n", "latin-1"),
        ("# -*- coding: koi8-r -*-\nprint('привет')\n".encode("koi8-r"), "koi8-r"),
        ('<?xml version="1.0" encoding="ISO-8859-15"?>\n<a>€</a>\n'.encode("iso-8859-15"), "iso8859-15"),
    ],
)
def test_sniff_names_the_encoding(data: bytes, expected: str) -> None:
    found = sniff(data)
    assert found is not None and found.name == expected
    assert bool(found.why) == (expected not in ("utf-8", "utf-8-sig"))  # anything else is said out loud


def test_binary_is_still_binary() -> None:
    assert sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR") is None


def test_a_utf8_character_cut_by_the_sniff_window_is_still_utf8() -> None:
    assert sniff(("x" * 8191 + "é").encode()[:8192]).name == "utf-8"


def test_read_file_says_what_it_assumed(call, root: Path) -> None:
    (root / "legacy.txt").write_bytes(CP1252.encode("cp1252"))
    result = call("read_file", path="legacy.txt")
    assert not result.is_error and "\ufffd" not in result.content
    assert (
        result.content.splitlines()[0]
        == "[legacy.txt is not UTF-8: no valid UTF-8; assumed Windows-1252; decoded as cp1252]"
    )
    assert "Café “quoted” – 5 €" in result.content


def test_read_file_of_utf8_has_no_note(call, root: Path) -> None:
    (root / "plain.md").write_text("déjà\n", encoding="utf-8")
    assert call("read_file", path="plain.md").content == "     1\tdéjà"


def test_grep_finds_text_in_other_encodings_and_names_them(call, root: Path) -> None:
    (root / "legacy.txt").write_bytes(CP1252.encode("cp1252"))
    (root / "plain.txt").write_text("Café au lait\n", encoding="utf-8")
    result = call("grep", pattern="Café")
    assert "legacy.txt:1: Café “quoted” – 5 €" in result.content and "plain.txt:1: Café au lait" in result.content
    assert "[not UTF-8, decoded as cp1252: legacy.txt]" in result.content and "\ufffd" not in result.content


def test_kb_add_indexes_text_that_is_not_utf8(tmp_path: Path) -> None:
    legacy = tmp_path / "notes.txt"
    legacy.write_bytes("Die Größe der Übersicht\n".encode("cp1252"))
    read = read_text(legacy)
    assert isinstance(read, SourceText) and read.text == "Die Größe der Übersicht\n"
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\0\1\2")
    assert read_text(binary) == f"{binary}: skipped, binary file"
