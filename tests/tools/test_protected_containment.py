"""The protected-path check's "is this path inside that folder" (a write decision was
~320 µs, most of it pathlib re-parsing the same paths): the string test it now uses must say what
the parts test says for every pair of absolute paths — case-folded names (`ß`, `İ`, `K`), `..` and
`.` left in, a shared prefix that is not a folder boundary (`/a/bc` is not inside `/a/b`), the root.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arreio.engine.walls.protected import _below, _same, _within

NAMES = st.sampled_from(
    ["a", "A", "b", "bc", "B", ".git", ".GIT", "ß", "ss", "SS", "İ", "i̇", "K", "k", "..", ".", "x y"]
)
PATHS = st.lists(NAMES, max_size=5).map(lambda names: Path("/", *names))


def _by_parts(path: Path, root: Path) -> bool:
    a, b = [p.casefold() for p in path.parts], [p.casefold() for p in root.parts]
    return a[: len(b)] == b


@pytest.mark.slow
@pytest.mark.timeout(900)  # 3,000 examples: a busy machine took more than the suite's 120 s
@settings(max_examples=3000, deadline=None)
@given(PATHS, PATHS)
def test_within_says_what_a_comparison_of_names_says(path: Path, root: Path) -> None:
    assert _within(path, root) == _by_parts(path, root)
    assert _same(path, root) == (_by_parts(path, root) and len(path.parts) == len(root.parts))


@settings(max_examples=500, deadline=None)
@given(PATHS, st.lists(NAMES, max_size=3))
def test_a_path_built_below_a_folder_is_within_it_and_gives_its_names_back(root: Path, names: list[str]) -> None:
    path = root.joinpath(*names)
    assert _within(path, root)
    assert _below(path, root) == PurePosixPath(*names).parts if names else _below(path, root) == ()


def test_the_cases_a_prefix_of_characters_would_get_wrong() -> None:
    assert not _within(Path("/work/bc"), Path("/work/b"))
    assert not _within(Path("/work/.github/x"), Path("/work/.git"))
    assert _within(Path("/work/.GIT/config"), Path("/work/.git"))
    assert _within(Path("/anything/at/all"), Path("/"))
    assert _within(Path("/work/Straße/x"), Path("/work/STRASSE"))
    assert not _within(Path("/work"), Path("/work/.git"))
    # a string is read as a path, as before
    assert _within("/work/.git/hooks", "/work/.git/")
