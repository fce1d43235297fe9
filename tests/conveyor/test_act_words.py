"""The act words compile only for a clause that could hold an act (`act_language.Language`): what lets a
clause be skipped must be a step every match of the act takes, or skipping it would change what the
promise gate finds. These tests hold each such step to the pattern itself."""

from __future__ import annotations

from re import _parser

from arreio.engine.judgement import act_words
from arreio.engine.judgement.acts import act_claims


def _tree(value: object) -> object:
    """A parsed pattern as nested tuples, to compare runs of it."""
    if isinstance(value, _parser.SubPattern):
        return tuple(_tree(item) for item in value.data)
    if isinstance(value, (list, tuple)):
        return tuple(_tree(item) for item in value)
    return value


def test_every_lead_is_a_run_of_its_acts_top_level_pattern() -> None:
    """A top-level run is matched by every match of the act (a sequence has no optional member; an
    optional or alternative part is one item), so a clause with no lead found holds no act."""
    gated = 0
    for language in act_words.LANGUAGES:
        for _, source, lead in language.act_sources:
            if lead is None:
                continue
            gated += 1
            parsed = _parser.parse(lead)
            assert parsed.state.groups == 1, lead  # no group of its own: it means the same alone
            run, items = _tree(parsed), _tree(_parser.parse(source))
            assert any(items[i : i + len(run)] == run for i in range(len(items) - len(run) + 1)), (lead, source)
    assert gated == 15 + 8 + 8  # English, Portuguese and Spanish are gated


def test_every_french_act_needs_the_speaker_so_a_clause_without_it_skips_them() -> None:
    """French's speaker is no new rule: every act begins with it or looks ahead for it, so skipping
    a clause without it (and not compiling the acts) finds exactly what running them finds."""
    assert act_words.FRENCH.speaker is not None and act_words.FRENCH.speaker.pattern == act_words._FR_I
    for _, source, _ in act_words.FRENCH.act_sources:
        assert source.startswith(act_words._FR_HAVE) or source.endswith(f"(?=.*{act_words._FR_I}\\b)"), source


def test_gated_and_ungated_clauses_claim_as_before() -> None:
    assert act_claims("Hello.") == []
    assert [a.kind for a in act_claims("I ran the tests, then I read `notes.md`.")] == ["read", "run"]
    assert [a.subject for a in act_claims("Usei a ferramenta `read_file`.")] == ["read_file"]
    assert [a.subject for a in act_claims("Ejecuté las pruebas.")] == ["running the tests"]
