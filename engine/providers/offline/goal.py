"""Reading a goal for the offline model: which named files it reads, writes, extends or must leave.

Pure: text in, `GoalFiles` out. The words are data (`offline_phrasing.py`); this module only walks a
sentence. A file's role comes from the nearest word before it that says something:
- a verb gives its object role ("write b.md", "read a.md", "update c.md");
- a destination word (`to`, `into`, `as`, `in`, …) gives the role of the verb it follows
  ("summarise a.md into b.md", "put a list in b.md");
- a source word (`of`, `from`, …) and a possessive ("a.md's summary") make it an input;
- a negation ("do not modify a.md", "not a.md") makes it an input that must stay as it is;
- a file before a passive verb is that verb's object ("b.md should be created");
- a file with none of these is an input, or takes the role of the label it sits under ("Outputs:").
When mentions disagree, the safest role wins: read-only > change > append > write.
Misreading is bounded by the provider, not by this parser: it never overwrites a file that existed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from arreio.engine.core.prompt import ATTACHED, PIPED_INPUT
from arreio.engine.core.prose import path_mentions
from arreio.engine.providers.offline.phrasing import (
    AUXILIARIES,
    DESTINATIONS,
    DETERMINERS,
    LABELS,
    NEGATIONS,
    PARTICIPLES,
    SOURCES,
    Role,
    Verb,
    verb_forms,
)

_URL = re.compile(r"https?://\S+")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_EMPHASIS = re.compile(r"^[*_`]+|[*_`]+$")
_COLON_LABEL = re.compile(r"^(?:\*\*|__)?([A-Za-z][A-Za-z' -]{0,30}?)(?:\*\*|__)?\s*:(?:\*\*|__)?(?:\s+(.*))?$")

_FORMS = verb_forms()
_LONGEST = max(len(form.split()) for form in [*_FORMS, *SOURCES, *NEGATIONS])
_SAFETY = {"read": 0, "write": 1, "append": 2, "change": 3, "protect": 4}


@dataclass(frozen=True)
class GoalFiles:
    """The files a goal names, each once, in order of first mention.

    `reads`: to read, never write (inputs, and files it says to leave alone); `changes`: files it asks
    to edit, rewrite, move or delete (read, never touched); `writes`: files to create; `appends`: files
    to extend with a marked section. `wants_output`: it uses a writing verb or label at all, even
    without naming a file ("Write a summary.")."""

    named: tuple[str, ...] = ()  # every file, in order of first mention
    reads: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    appends: tuple[str, ...] = ()
    wants_output: bool = False

    @property
    def inputs(self) -> list[str]:
        return [p for p in self.named if p in self.reads or p in self.changes]

    @property
    def outputs(self) -> list[str]:
        return [p for p in self.named if p in self.writes or p in self.appends]


def goal_files(goal: str) -> tuple[list[str], list[str]]:
    """(inputs, outputs) named by a goal, in order of first mention, without duplicates: inputs are
    read (never written), outputs are written or extended. Used by the offline judge too."""
    files = read_goal(goal)
    return files.inputs, files.outputs


@lru_cache(maxsize=8)
def read_goal(goal: str) -> GoalFiles:
    """What the goal asks of each file it names (see the module docstring). Pure, so the answer for
    a goal is kept (a run asks once a step, and a big goal took seconds each time); a sentence seen
    before in the same goal is read once."""
    roles: dict[str, str] = {}
    wants = False
    read: dict[tuple[str, Role | None], tuple[list[tuple[str, str]], bool]] = {}
    # piped input and attached files are context (their text is data, never instructions: a file's
    # `self.items.append` was read as a path to open)
    goal = goal.split("\n" + PIPED_INPUT, 1)[0].split(ATTACHED, 1)[0]
    for text, default in _blocks(_URL.sub(" ", goal)):
        if default in ("write", "append"):
            wants = True
        for sentence in _SENTENCE.split(text):
            key = (sentence, default)
            if key not in read:
                read[key] = _sentence(sentence, default)
            mentions, wanted = read[key]
            wants = wants or wanted
            for path, role in mentions:
                if path not in roles or _SAFETY[role] > _SAFETY[roles[path]]:
                    roles[path] = role
    final = {p: "read" if r == "protect" else r for p, r in roles.items()}
    by_role = {role: tuple(p for p, r in final.items() if r == role) for role in ("read", "change", "write", "append")}
    return GoalFiles(
        named=tuple(final),
        reads=by_role["read"],
        changes=by_role["change"],
        writes=by_role["write"],
        appends=by_role["append"],
        wants_output=wants,
    )


# -- blocks: paragraphs, bullets and headings, each with the role its label gives ------------------
def _label(text: str) -> Role | None:
    return LABELS.get(_EMPHASIS.sub("", text.strip()).strip().rstrip(":").strip().lower())


def _blocks(goal: str) -> list[tuple[str, Role | None]]:
    """The goal as blocks of running text (wrapped lines joined), each with a default role: the label
    of the heading it sits under, or of the "Label:" line whose bullet list it belongs to."""
    blocks: list[list] = []
    heading: Role | None = None
    listed: Role | None = None  # a "Label:" line's role, kept over the bullets that follow it
    open_block = False
    for raw in goal.splitlines():
        line = raw.strip().lstrip("\ufeff")
        if not line:
            open_block = False
            continue
        if _HEADING.match(raw):
            text = _HEADING.sub("", raw).strip().rstrip("#").strip()
            heading, listed, open_block = _label(text), None, False
            if heading is None:
                blocks.append([text, None])  # a title can name files too ("# Update CHANGES.md")
            continue
        bullet = _BULLET.match(raw)
        body = _BULLET.sub("", raw).strip() if bullet else line
        colon = _COLON_LABEL.match(body)
        role = _label(colon.group(1)) if colon else None
        if role is not None:
            rest = colon.group(2) or ""
            if not bullet:
                listed = role
            blocks.append([rest, role])
            open_block = bool(rest)
            continue
        if bullet:
            blocks.append([body, listed or heading])
            open_block = True
        elif open_block:
            blocks[-1][0] += " " + body
        else:
            listed = None
            blocks.append([body, heading])
            open_block = True
    return [(text, role) for text, role in blocks]


# -- one sentence -----------------------------------------------------------------------------------
@dataclass
class _Marker:
    at: int  # character offset in the sentence
    kind: str  # verb | dest | source | neg | aux
    word: str
    verb: Verb | None = None
    negated: bool = False
    passive: bool = False
    strong: bool = True


def _markers(sentence: str, spans: list[tuple[int, int]]) -> list[_Marker]:
    blanked = list(sentence.lower())
    for start, end in spans:  # a path's own words ("write-up.md") are not verbs
        blanked[start:end] = " " * (end - start)
    low = "".join(blanked).replace("\u2019", "'")
    words = [(m.start(), m.group(0)) for m in _WORD.finditer(low)]
    out: list[_Marker] = []
    i = 0
    while i < len(words):
        for n in range(min(_LONGEST, len(words) - i), 0, -1):
            phrase = " ".join(w for _, w in words[i : i + n])
            marker = _classify(phrase, words, i, out)
            if marker is not None:
                out.append(marker)
                i += n
                break
        else:
            i += 1
    return out


def _classify(phrase: str, words: list[tuple[int, str]], i: int, seen: list[_Marker]) -> _Marker | None:
    at = words[i][0]
    before = [w for _, w in words[max(0, i - 3) : i]]
    if phrase in _FORMS and not _in_noun_phrase(words, i):
        lemma, verb = _FORMS[phrase]
        # a negation shortly before, with no other verb between, negates this verb
        since = [m for m in seen if m.at >= words[max(0, i - 3)][0]]
        negated = any(m.kind == "neg" for m in since) and not any(m.kind == "verb" for m in since)
        head = phrase.split()[0]
        participle = head in PARTICIPLES or (head != lemma.split()[0] and head.endswith("ed"))
        passive = participle and any(w in AUXILIARIES for w in before[-2:])
        return _Marker(at, "verb", phrase, verb, negated, passive)
    if phrase in SOURCES:
        return _Marker(at, "source", phrase)
    if phrase in NEGATIONS or phrase.endswith("n't"):
        return _Marker(at, "neg", phrase)
    if phrase in DESTINATIONS:
        negated = bool(seen) and seen[-1].kind == "neg" and seen[-1].at >= words[max(0, i - 1)][0]
        return _Marker(at, "dest", phrase, negated=negated, strong=DESTINATIONS[phrase])
    if phrase in AUXILIARIES:
        return _Marker(at, "aux", phrase)
    return None


def _in_noun_phrase(words: list[tuple[int, str]], i: int) -> bool:
    """Word `i` ends a noun phrase, so it is a noun and not a verb: right after a determiner ("the
    summary"), or after a determiner and one word, one space apart ("its line count", "the word
    count": the count was read as the verb, and the file after it as one to read)."""
    if i >= 1 and words[i - 1][1] in DETERMINERS:
        return True
    if i < 2 or words[i - 2][1] not in DETERMINERS or words[i - 1][1] in _FORMS:
        return False
    (a, det), (b, word), (c, _) = words[i - 2], words[i - 1], words[i]
    return b == a + len(det) + 1 and c == b + len(word) + 1  # no comma between: "in the folder, count …"


def _sentence(sentence: str, default: Role | None) -> tuple[list[tuple[str, str]], bool]:
    """Each named file with its role here ("protect" = read, and must never be written), and whether
    the sentence asks for output at all."""
    named = path_mentions(sentence, quoted=True)  # a goal may quote a name with a space: "my notes.md"
    found = [(at, path) for at, _, path in named]
    spans = [(at, end) for at, end, _ in named]
    markers = [m for m in _markers(sentence, spans) if m.kind != "aux"]
    wants = any(m.kind == "verb" and not m.negated and m.verb.object in ("write", "append", "change") for m in markers)
    mentions: list[tuple[str, str, int | None, bool]] = []  # path, role, governing verb's offset, weak
    for (_, path), (start, end) in zip(found, spans):
        role, verb_at, weak = _role(sentence, markers, start, end, default)
        mentions.append((path, role, verb_at, weak))
        wants = wants or role in ("write", "append")
    for m in markers:  # "summarise the notes into a table" asks for output even without a file
        if m.kind == "dest" and not m.negated and (verb := _governing(markers, m.at)) is not None:
            wants = wants or (verb.verb.destination in ("write", "append") and not verb.negated)
    # a weak destination ("the TODOs in notes.md") yields to a strong one of the same verb ("to out.md")
    strong = {v for _, r, v, weak in mentions if r in ("write", "append") and not weak and v is not None}
    return [
        (p, "read" if weak and v in strong and r in ("write", "append") else r) for p, r, v, weak in mentions
    ], wants


def _governing(markers: list[_Marker], at: int) -> _Marker | None:
    return next((m for m in reversed(markers) if m.kind == "verb" and m.at < at), None)


def _role(
    sentence: str, markers: list[_Marker], start: int, end: int, default: Role | None
) -> tuple[str, int | None, bool]:
    if sentence[end:].lstrip("`").startswith(("'s", "\u2019s")):
        return "read", None, False
    before = [m for m in markers if m.at < start]
    if not before:
        # "b.md should be created": the first verb after it, if passive, takes it as its object
        after = next((m for m in markers if m.at >= end and m.kind == "verb"), None)
        if after is not None and after.passive:
            return ("protect" if after.negated else after.verb.object), after.at, False
        return default or "read", None, False
    last = before[-1]
    if last.kind == "neg":
        return "protect", None, False
    if last.kind == "source":
        return "read", None, False
    if last.kind == "verb":
        return ("protect" if last.negated else last.verb.object), last.at, False
    verb = _governing(markers, last.at)  # a destination word
    if verb is None:
        return default or "read", None, False
    if last.negated or verb.negated:
        return "protect", verb.at, False
    return verb.verb.destination, verb.at, not last.strong
