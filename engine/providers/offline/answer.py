"""What the offline model writes and says: the summary file, the appended section, the final answer.

Pure text building. The answer claims only what the history shows was done, one kind of fact per
sentence ("I read a.md. I wrote b.md."), so the promise gate (engine/judgement/promises.py) reads a
write verb only next to files that were written; files left alone are named without one.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from arreio.engine.core.wording import counted

APPEND_MARK = "<!-- arreio offline: appended -->"
_DEFINITION = re.compile(r"^\s*(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)


def quoted(path: str) -> str:
    """A path as the answer names it: backticked when it holds a space, so it reads as one path."""
    return f"`{path}`" if any(c.isspace() for c in path) else path


def _names(paths: list[str]) -> str:
    return ", ".join(quoted(p) for p in paths)


def definitions(name: str, text: str) -> list[str]:
    """The functions and classes a Python file defines, in order ("def main", "class App")."""
    if PurePosixPath(name).suffix != ".py":
        return []
    return [f"{kind} {ident}" for kind, ident in _DEFINITION.findall(text)]


def describe(name: str, text: str) -> list[str]:
    """A few deterministic facts about one file's text, as a Markdown section."""
    lines = text.splitlines()
    words = len(text.split())
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    headings = [ln.lstrip("#").strip() for ln in lines if ln.startswith("#")]
    out = [f"## {name}", "", f"- {counted(len(lines), 'line')}, {counted(words, 'word')}"]
    if first:
        out.append(f"- First line: {first[:120]}")
    if headings:
        out.append(f"- Headings: {'; '.join(h[:60] for h in headings[:8])}")
    defined = definitions(name, text)
    if defined:
        out.append(f"- Defines: {', '.join(defined[:40])}")
    todo = [ln.strip() for ln in lines if re.match(r"\s*[-*]\s*\[ \]", ln)]
    if todo:
        out.append(f"- Open items: {len(todo)}")
    return out + [""]


def _facts(inputs: list[str], contents: dict[str, str | None]) -> list[str]:
    lines: list[str] = []
    for name in inputs:
        text = contents.get(name)
        lines += [f"## {name}", "", "- could not be read", ""] if text is None else describe(name, text)
    return lines


def report(goal: str, inputs: list[str], contents: dict[str, str | None]) -> str:
    """A new file's content: a title from the goal's first line, then a section per input."""
    title = next((ln.lstrip("# ").strip() for ln in goal.splitlines() if ln.strip()), "the goal")
    lines = [f"# Summary: {title}", "", "Written by the arreio offline model from the files the goal names.", ""]
    return "\n".join(lines + _facts(inputs, contents)).rstrip() + "\n"


def section(inputs: list[str], contents: dict[str, str | None]) -> str:
    """The section added at the end of a file the goal asks to extend: marked, so it is easy to find
    (and to remove); it never repeats or rewrites what was there."""
    # one level below the section's own heading, so the added part reads as one section
    body = [f"#{ln}" if ln.startswith("## ") else ln for ln in _facts(inputs, contents)]
    body = body or ["- The goal names no other file to read.", ""]
    return "\n".join([APPEND_MARK, "## Added by the arreio offline model", "", *body]).rstrip() + "\n"


@dataclass
class Account:
    """What a run did and declined, from its history; `answer` words it."""

    entries: int | None = None  # the working directory's listing, when one was made
    read: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    appended: list[str] = field(default_factory=list)  # existing files that got a marked section
    kept: list[str] = field(default_factory=list)  # targets that already existed: not overwritten
    current: list[str] = field(default_factory=list)  # targets that already hold what the run would write
    not_text: list[str] = field(default_factory=list)  # existing files to extend that are not documents
    inexact: list[str] = field(default_factory=list)  # existing files whose whole text could not be matched
    unknown: list[str] = field(default_factory=list)  # targets whose existence could not be told
    protected: list[str] = field(default_factory=list)  # targets inside .arreio/ or .git/: never written
    failed: list[str] = field(default_factory=list)  # writes the tools refused
    changes: list[str] = field(default_factory=list)  # files the goal asks to edit/move/delete
    no_target: bool = False  # the goal asks for output but names no file to write
    facts: list[str] = field(default_factory=list)  # sentences answering a read-only goal


_PROTECTED = {".arreio": "arreio's own state folder", ".git": "the repository's .git/"}


def protected_place(path: str) -> str | None:
    """How the answer names the place a goal's output is in when the tools refuse every write there
    (`.arreio/`, `.git/`; docs/architecture.md invariant 10), after `..` and `./` are worked out; else None."""
    top = PurePosixPath(posixpath.normpath(path)).parts[:1]
    return _PROTECTED.get(top[0]) if top else None


def _them(paths: list[str], one: str, many: str) -> str:
    return one if len(paths) == 1 else many


def answer(a: Account) -> str:
    did = bool(a.written or a.appended or a.current)
    declined = a.kept or a.not_text or a.inexact or a.unknown or a.protected or a.failed or a.changes or a.no_target
    sentences = ["Done."] if did and not declined else []
    if a.entries is not None:
        listed = f"I listed the working directory ({counted(a.entries, 'entry', 'entries')})"
        sentences.append(listed + (f" and read {_names(a.read)}." if a.read else "."))
    elif a.read:
        sentences.append(f"I read {_names(a.read)}.")
    sentences += a.facts
    if a.written:
        sentences.append(f"I wrote {_names(a.written)}.")
    if a.appended:
        sentences.append(
            f"I updated {_names(a.appended)} with a marked section at the end; what was there is unchanged."
        )
    if a.current:
        sentences.append(
            f"{_names(a.current)} already {_them(a.current, 'holds', 'hold')} what I would write, "
            f"so I left {_them(a.current, 'it', 'them')} as {_them(a.current, 'it is', 'they are')}."
        )
    if a.kept:
        it = _them(a.kept, "it", "them")
        sentences.append(
            f"{_names(a.kept)} already existed and the goal does not ask to add to {it}, so I did not overwrite {it}."
        )
    if a.not_text:
        sentences.append(
            f"I add sections only to text documents (Markdown, plain text), so I left "
            f"{_names(a.not_text)} as {_them(a.not_text, 'it was', 'they were')}."
        )
    if a.inexact:
        sentences.append(
            f"I could not match all of {_names(a.inexact)} exactly, so I left "
            f"{_them(a.inexact, 'it as it was', 'them as they were')} rather than risk changing "
            f"what was there."
        )
    if a.unknown:
        sentences.append(
            f"I could not tell whether {_names(a.unknown)} already "
            f"{_them(a.unknown, 'exists', 'exist')}, so I left {_them(a.unknown, 'it', 'them')} alone."
        )
    if a.protected:
        where = " and ".join(dict.fromkeys(place for p in a.protected if (place := protected_place(p))))
        sentences.append(
            f"{_names(a.protected)} {_them(a.protected, 'is', 'are')} inside {where}, which the agent "
            f"may not write, so I left {_them(a.protected, 'it', 'them')} alone."
        )
    if a.failed:
        sentences.append(f"I could not write {_names(a.failed)}.")
    if a.changes:
        sentences.append(
            f"The goal asks to change {_names(a.changes)}; the offline model does not edit, move or "
            f"delete files, so I left {_them(a.changes, 'it as it was', 'them as they were')}."
        )
    if a.no_target:
        sentences.append("The goal names no file to write, so I wrote nothing.")
    elif declined and not did:
        sentences.append("I wrote nothing.")
    return " ".join(sentences) or "I had nothing to do."


def fact(name: str, text: str | None) -> str:
    """One sentence about a file, for a goal that only asks questions. Only counts and identifiers:
    the file's own words never enter the answer (they could read as claims)."""
    if text is None:
        return f"I could not read {quoted(name)}."
    lines, words = text.splitlines(), len(text.split())
    out = f"{quoted(name)} has {counted(len(lines), 'line')} and {counted(words, 'word')}"
    defined = [d.split()[1] for d in definitions(name, text)]
    if defined:
        out += f"; it defines {', '.join(defined[:20])}" + (" and more" if len(defined) > 20 else "")
    return out + "."


# What the offline model cannot do, said as the goal's first word: it reads, lists, counts and writes
# files a goal names; it does not fix, build or run anything.
_ACTIONS = frozenset(
    {
        "fix",
        "implement",
        "refactor",
        "debug",
        "add",
        "remove",
        "delete",
        "rename",
        "install",
        "deploy",
        "build",
        "run",
        "test",
        "update",
        "upgrade",
        "migrate",
        "optimize",
        "optimise",
        "improve",
        "change",
        "modify",
        "make",
        "translate",
        "commit",
        "push",
        "merge",
        "format",
        "lint",
        "review",
        "rewrite",
        "port",
        "convert",
        "solve",
    }
)


def declined(a: Account, goal: str, files: Any) -> str | None:
    """Why a final answer is not the goal done (None: it is): a goal that asks for work the offline model
    cannot do, a write the tools refused, an output in a protected place or of unknown state, an edit it
    cannot make, an output that already existed (never overwritten), an output the goal wants but does
    not name."""
    first = next(iter(goal.split()), "").strip("#*_`>-.:,!").lower()
    if not files.named and first in _ACTIONS:
        return (
            f"the offline model cannot {first} anything: it reads, lists, counts and writes files a goal "
            "names; give a real model (--model, or set a provider's API key)"
        )
    if a.failed:
        return f"could not write {_names(a.failed)}"
    if a.protected:
        return f"{_names(a.protected)} lies where the agent's tools cannot write"
    if a.unknown:
        return f"could not tell whether {_names(a.unknown)} exists"
    if a.changes:
        return f"the offline model does not edit, move or delete files ({_names(a.changes)})"
    if a.kept:
        return f"{_names(a.kept)} already existed and the offline model does not overwrite a file"
    if a.no_target:
        return "the goal asks for output but names no file to write"
    return None
