"""What a final answer says the agent did with its tools (docs/architecture.md invariants 6 and 9).

An answer may say it used a tool ("I used the read_file tool"), read a file ("I read notes.txt"),
listed a folder, searched the code or the web, or ran the tests or a command ("I ran `make`").
`calls.py` holds each such act against the session's tool calls. As with the files and commands of
`claims.py` and `passes.py`, the registry is closed and doubt backs off: only a first-person,
past-tense act counts, in English, Portuguese, Spanish, German, French, Chinese or Japanese
(`act_words.py`); a clause whose act is negated, conditional, future, a request, a question, a
habit or an example claims nothing, nor does anything quoted, in code blocks, tables or under a
"next steps" heading. A tool named bare is a tool only when it is one of the harness's own or is
called a tool ("the fetch_page tool"), and a name or path the answer's own code blocks show is left
alone: "I used `read_file()` to load it" may describe the code it wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arreio.engine.core.prose import clauses, fenced, lines, path_mentions
from arreio.engine.judgement.act_words import BUILTIN_TOOLS, LANGUAGES, SUFFIX_DOUBT, TOOL_WORDS
from arreio.engine.judgement.claims import writing_head
from arreio.engine.judgement.passes import is_command

__all__ = ["Act", "act_claims"]


@dataclass(frozen=True)
class Act:
    """One act the answer claims. `kind`: "tool" (`subject` is the tool's name), "read" (a path),
    "command" (a command line), "list", "search", "web" or "run" (the subject says what, in words)."""

    kind: str
    subject: str


_TICKED = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"(?:functions\.)?([A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)*)\s*(?:\(.*\))?")
_SNAKE = re.compile(r"(?<![\w⟦./-])([A-Za-z][A-Za-z0-9]*(?:_{1,2}[A-Za-z0-9]+)+)(?![\w./-]|⟧)")
_BARE_TOOLS = re.compile(r"(?<![\w⟦./-])(grep|shell)(?![\w./-])", re.IGNORECASE)
_NAMED_TOOLS = re.compile(rf"(?<![\w⟦./-])(memory|delegate|brave)(?=\s*{TOOL_WORDS})", re.IGNORECASE)
# A name followed by one of these is the project's code, not the harness's tool ("the read_file helper").
_CODE_NOUN = re.compile(
    r"\s*(?:helper|function|method|module|class|utility|util|api|wrapper|decorator|library|package|"
    r"parameter|argument|option|flag|variable|from|in\s+⟦p\d+⟧|\(|'s\b)"
)
_SLOT = re.compile(r"⟦([ptc])(\d+)⟧")
_TESTS = re.compile(r"tests?|test suite|suite|specs?|testes|teste|suíte|pruebas|prueba|testsuite|单元测试|测试|テスト")


@dataclass(frozen=True)
class _Template:
    text: str  # the clause lowercased, with ⟦pN⟧ ⟦tN⟧ ⟦cN⟧ for its paths, tool names and commands
    slots: dict[str, str]  # "p0" → the path, "t1" → the name, "c2" → the command


def act_claims(text: str) -> list[Act]:
    """Acts the answer claims, in order, each once ("I used the read_file tool to read notes.txt" →
    the read_file tool, reading notes.txt; "you can use read_file to…" → nothing)."""
    shown = fenced(text).lower()
    found: list[Act] = []
    for line in lines(text, writing_head):
        for clause in clauses(line.text):
            found += _clause_acts(_template(clause), shown)
    return [act for i, act in enumerate(found) if act not in found[:i]]


def _clause_acts(template: _Template, shown: str) -> list[Act]:
    low = template.text
    out: list[Act] = []
    for language in LANGUAGES:
        if language.speaker is not None and not language.speaker.search(low):
            continue
        if language.gate is not None and not language.gate.search(low):
            continue  # no act of the language can match (`act_language.Language`): nor are they compiled
        for kind, pattern in language.acts:
            for m in pattern.finditer(low):
                if language.doubt.search(low if language.verb_last else low[: m.end()]) or SUFFIX_DOUBT.search(
                    low[m.end() :]
                ):
                    continue
                obj = m.groupdict().get("obj") or m.groupdict().get("command") or ""
                out += _acts_of(kind, obj, template, shown)
    return out


def _acts_of(kind: str, obj: str, template: _Template, shown: str) -> list[Act]:
    slots = [(letter + n, template.slots[letter + n]) for letter, n in _SLOT.findall(obj)]
    if kind == "tool":
        return [
            Act("tool", name)
            for key, name in slots
            if key[0] == "t" and _is_tool(key, name, template.text) and name.lower() not in shown
        ]
    if kind == "read":
        return [Act("read", path) for key, path in slots if key[0] == "p" and path.lower() not in shown]
    if kind == "run":
        commands = [command for key, command in slots if key[0] == "c"]
        if commands:
            return [Act("command", command) for command in commands if command.lower() not in shown]
        return [Act("run", "running the tests" if _TESTS.fullmatch(obj.strip()) else "running a command")]
    return [Act(kind, {"list": "listing a folder", "search": "searching", "web": "searching the web"}[kind])]


def _is_tool(key: str, name: str, low: str) -> bool:
    """One of the harness's tools, or a name the answer calls a tool ("the fetch_page tool")."""
    slot = re.escape(f"⟦{key}⟧")
    if re.search(rf"{slot}{_CODE_NOUN.pattern}", low):
        return False
    if name.lower() in BUILTIN_TOOLS:
        return True
    return re.search(rf"{slot}\s*{TOOL_WORDS}|{TOOL_WORDS}\s+{slot}", low) is not None


def _template(clause: str) -> _Template:
    slots: dict[str, str] = {}

    def put(letter: str, value: str) -> str:
        key = f"{letter}{len(slots)}"
        slots[key] = value
        return f" ⟦{key}⟧ "

    def ticked(m: re.Match[str]) -> str:
        inner = m.group(1).strip().removeprefix("$ ")
        if is_command(inner):
            return put("c", inner)
        whole = path_mentions(f"`{inner}`")
        if len(whole) == 1 and whole[0][0] == 1 and whole[0][1] == len(inner) + 1:
            return put("p", whole[0][2])
        ident = _IDENT.fullmatch(inner)
        if ident:
            return put("t", ident.group(1))
        return " ⟦x⟧ "  # other code: its words are not the speaker's

    text = _TICKED.sub(ticked, clause)
    for at, end, path in reversed(path_mentions(text)):
        text = text[:at] + put("p", path) + text[end:]
    text = _SNAKE.sub(lambda m: put("t", m.group(1)), text)
    text = _BARE_TOOLS.sub(lambda m: put("t", m.group(1).lower()), text)
    text = _NAMED_TOOLS.sub(lambda m: put("t", m.group(1).lower()), text)
    return _Template(re.sub(r"[ \t]+", " ", text).strip().lower(), slots)
