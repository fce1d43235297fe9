from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arreio.memory.knowledge.chunking import ChunkConfig, chunk_text


def test_short_text_is_one_chunk_with_its_line_range() -> None:
    chunks = chunk_text("alpha\nbeta\ngamma\n")
    assert [(c.start_line, c.end_line, c.text) for c in chunks] == [(1, 3, "alpha\nbeta\ngamma")]


def test_chunks_break_on_line_boundaries_and_overlap() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 26))
    chunks = chunk_text(text, ChunkConfig(max_chars=10_000, max_lines=10, overlap_lines=2))
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 10), (9, 18), (17, 25)]
    for chunk in chunks:  # every chunk is whole lines, exactly as in the source
        assert chunk.text == "\n".join(f"line {i}" for i in range(chunk.start_line, chunk.end_line + 1))


def test_prefers_to_end_at_a_blank_line() -> None:
    paragraph_a = "\n".join(f"a{i}" for i in range(7))
    paragraph_b = "\n".join(f"b{i}" for i in range(7))
    chunks = chunk_text(
        paragraph_a + "\n\n" + paragraph_b, ChunkConfig(max_chars=10_000, max_lines=10, overlap_lines=1)
    )
    assert chunks[0].text == paragraph_a  # the cut lands on the paragraph break, not inside b
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 7)
    assert chunks[1].text.endswith("b6") and "a3" not in chunks[1].text


def test_char_budget_bounds_a_chunk_but_never_splits_a_line() -> None:
    long_line = "x" * 500
    chunks = chunk_text("\n".join([long_line] * 4), ChunkConfig(max_chars=300, max_lines=40, overlap_lines=0))
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert all(c.text == long_line for c in chunks)


def test_blank_edges_are_trimmed_and_blank_text_makes_no_chunk() -> None:
    assert chunk_text("\n\n   \n") == []
    chunks = chunk_text("\n\nhello\n\n")
    assert [(c.start_line, c.end_line, c.text) for c in chunks] == [(3, 3, "hello")]


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError):
        ChunkConfig(max_lines=2, overlap_lines=2)


@given(st.lists(st.text(alphabet="ab \t", max_size=30), max_size=60), st.integers(1, 12), st.integers(0, 3))
def test_every_content_line_is_covered_and_ranges_match_text(lines, max_lines, overlap) -> None:
    overlap = min(overlap, max_lines - 1)
    text = "\n".join(lines)
    chunks = chunk_text(text, ChunkConfig(max_chars=80, max_lines=max_lines, overlap_lines=overlap))
    source = text.splitlines()
    covered = set()
    for chunk in chunks:
        assert chunk.text == "\n".join(source[chunk.start_line - 1 : chunk.end_line])
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    assert {i + 1 for i, line in enumerate(source) if line.strip()} <= covered
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
