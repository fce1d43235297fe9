"""The shared readers every file goes through: `read_bytes`/`read_text` (a regular file of a sane size,
never a FIFO waited on), `json_loads` (bounded depth) and `yaml_loader` (bounded depth and alias
expansion). The end-to-end cases are in tests/cli/test_bad_input_files.py and test_bad_state_files.py."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAMLError

from arreio.engine.core.nesting import MAX_DEPTH, depth, json_loads
from arreio.engine.core.regular_file import NotRegularFile, TooLarge, read_bytes, read_text, size_text
from arreio.engine.core.yaml_file import MAX_NODES, load_yaml, yaml_loader
from tests.bad_files import deep_json, deep_yaml, laughs, make

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs and /dev/zero")


@linux
def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    make(tmp_path / "pipe", "fifo")
    with pytest.raises(NotRegularFile) as refused:
        read_bytes(tmp_path / "pipe", limit=100)
    assert refused.value.strerror == "a named pipe, not a regular file"
    assert isinstance(refused.value, OSError)  # a reader's own `except OSError` names or skips it
    with pytest.raises(OSError) as nobody:  # ENXIO: no reader ever had it open
        os.open(tmp_path / "pipe", os.O_WRONLY | os.O_NONBLOCK)
    assert nobody.value.errno == errno.ENXIO


@linux
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused(device: str) -> None:
    with pytest.raises(NotRegularFile, match="a character device, not a regular file"):
        read_text(device, limit=100)


def test_a_file_past_its_limit_is_refused_from_its_size(tmp_path: Path) -> None:
    big = make(tmp_path / "big", "sparse")  # 2 GB of holes: reading it would allocate 2 GB
    with pytest.raises(TooLarge) as refused:
        read_bytes(big, limit=1024 * 1024)
    assert refused.value.because("big") == "big is 2 GB, over the 1 MB limit"
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 1000)
    assert read_bytes(exact, limit=1000) == b"x" * 1000
    with pytest.raises(TooLarge):
        read_bytes(exact, limit=999)


def test_read_text_reads_as_path_read_text_does(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes("a\r\nb\rc\n\ufeffé".encode())
    assert read_text(path, limit=100) == path.read_text(encoding="utf-8")
    path.write_bytes(b"\xff")
    with pytest.raises(UnicodeDecodeError):
        read_text(path, limit=100)


def test_sizes_read_as_words() -> None:
    assert [size_text(n) for n in (900, 1024, 1536 * 1024, 1024**3, 2 * 1024**3)] == [
        "900 bytes",
        "1 KB",
        "1.5 MB",
        "1 GB",
        "2 GB",
    ]


# -- JSON ------------------------------------------------------------------------------------------
def test_json_nested_past_the_bound_is_a_decode_error_not_a_recursion_error() -> None:
    for text in (deep_json(), "[" * 50_000, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)):
        with pytest.raises(json.JSONDecodeError, match=f"nested deeper than {MAX_DEPTH} levels"):
            json_loads(text)
        with pytest.raises(ValueError):  # what every reader of JSON lines already catches
            json_loads(text.encode())
    at_bound = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert json_loads(at_bound) == json.loads(at_bound)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"code": "[" * 5000 + '\\"{' * 500, "list": [[1, 2], {"a": "]]]"}]})
    assert depth(json.loads(text)) == 3 and json_loads(text) == json.loads(text)
    assert str(pytest.raises(ValueError, json_loads, deep_json()).value) == f"nested deeper than {MAX_DEPTH} levels"


# -- YAML ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("typ", ["safe", "rt"])
def test_billion_laughs_is_refused_at_once(typ: str) -> None:
    with pytest.raises(YAMLError) as refused:
        load_yaml(laughs(), typ)
    # the bound is reached while composing, before any walk: the mark below is the alias that crossed it
    assert refused.value.problem == f"more than {MAX_NODES:,} nodes (aliases expanded)"
    assert refused.value.problem_mark.line + 1 == 7  # the alias that crossed the bound


@pytest.mark.parametrize("typ", ["safe", "rt"])
@pytest.mark.parametrize(
    "text",
    [deep_yaml(), deep_json(), "".join("  " * i + "a:\n" for i in range(500)) + "b: 1\n"],
    ids=["flow", "json", "block"],
)
def test_deep_yaml_is_refused_not_recursed_into(typ: str, text: str) -> None:
    with pytest.raises(YAMLError) as refused:
        load_yaml(text, typ)
    assert refused.value.problem == f"nested deeper than {MAX_DEPTH} levels"


@pytest.mark.parametrize("typ", ["safe", "rt"])
def test_a_deep_flow_collection_is_refused_where_it_crosses_the_bound(typ: str) -> None:
    """At the bracket that opens one level too many, before the scanner reads further: it looks ahead
    for a key after every open bracket (~1,000 characters), each step checking all of them, which
    made refusing 50,000 `[` take ~1 s."""
    from ruamel.yaml.reader import Reader

    read = []

    class Counting(Reader):
        def forward(self, length: int = 1) -> None:
            super().forward(length)
            read.append(self.index)

    yaml = yaml_loader(typ)
    yaml.Reader = Counting
    with pytest.raises(YAMLError) as refused:
        yaml.load("x: " + "[" * 50_000 + "]" * 50_000)
    assert refused.value.problem == f"nested deeper than {MAX_DEPTH} levels"
    assert max(read) <= len("x: ") + MAX_DEPTH
    for k in (MAX_DEPTH - 1, MAX_DEPTH):  # what the bound allows still loads
        assert load_yaml("[" * k + "]" * k, typ) is not None
    with pytest.raises(YAMLError):
        load_yaml("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), typ)


def test_aliases_cannot_stack_depth_past_the_bound() -> None:
    half = MAX_DEPTH // 2 + 5
    text = f"a: &a {'[' * half}1{']' * half}\nb: {'[' * half}*a{']' * half}\n"
    with pytest.raises(YAMLError, match="nested deeper"):
        load_yaml(text)
    with pytest.raises(YAMLError, match="refers to a node that contains it"):
        load_yaml("a: &a [1, *a]\n")


@pytest.mark.parametrize("typ", ["safe", "rt"])
def test_ordinary_anchors_merges_and_nesting_load_as_before(typ: str) -> None:
    from ruamel.yaml import YAML

    text = (
        "base: &base {model: offline, tools: [a, b]}\nunits:\n  - <<: *base\n    id: one\n  - *base\n"
        "deep: " + "[" * (MAX_DEPTH - 2) + "x" + "]" * (MAX_DEPTH - 2) + "\n"
    )  # with the root and "x": 100
    assert json.dumps(load_yaml(text, typ)) == json.dumps(YAML(typ=typ, pure=True).load(text))
