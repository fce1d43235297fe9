"""The deterministic, hermetic `--offline` model: no network, no randomness, $0.

Without a script it follows a fixed policy read from the goal (every instruction in the history) and
the history itself, so it can drive a real multi-step run and resume one after a crash:

1. list the working directory (again after each new instruction: files may have changed between);
2. list the folders of the files it is to write, until it knows whether each already exists (where
   `list_dir` is not offered, or the repetition guard would refuse another listing, a read of the
   file tells instead);
3. read every file the goal names that exists, and every input (all in one turn, as parallel calls);
4. write each file the goal asks for that did not exist; add a marked section at the end of each
   text document the goal asks to extend (an exact `edit_file` of the whole text, so what was there
   stays byte for byte); a file that existed is never overwritten, moved or deleted;
5. answer with what it did and, just as plainly, what it did not do and why (with an output schema:
   the smallest value the schema allows, its summary field holding that answer — offline_schema.py).

Which file is an input and which an output is read from the goal by `offline_goal.py` (its words are
data in `offline_phrasing.py`); what exists is read from the listings by `offline_tree.py`. Each step
is decided from the history alone (stateless), so the same history always yields the same reply and a
resumed run goes on where it stopped. It never uses `shell` (sensitive: it would pause a run for
approval). With `--script FILE` the `ScriptedProvider` plays the file instead.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import Done, ModelRequest, StreamEvent, TextChunk, ToolCallDone, Usage
from arreio.engine.core.prompt import PLAN_UNITS
from arreio.engine.core.summary import SUMMARY_MARKER, parse_summary_message, summarised_turns
from arreio.engine.providers.offline import answer as say
from arreio.engine.providers.offline.goal import GoalFiles, goal_files, read_goal
from arreio.engine.providers.offline.phrasing import APPENDABLE_SUFFIXES
from arreio.engine.providers.offline.schema import schema_answer
from arreio.engine.providers.offline.summary import offline_summary
from arreio.engine.providers.offline.tree import Listing, exact_size, exact_text, parse_listing, state_of, strip_numbers
from arreio.engine.providers.scripted import estimate_request_tokens

LIST_REPEATS = 3  # the repetition guard's default for `list_dir` and `read_file` (per_target)
__all__ = ["OfflineProvider", "goal_files"]  # goal_files (from goal.py): the offline judge reads goals the same way


@dataclass(frozen=True)
class _Step:
    """One tool call of the history with its result (None while it has none) and whether it came
    after the latest instruction."""

    call: ToolCallPart
    result: ToolResultPart | None
    fresh: bool

    @property
    def path(self) -> str:
        return str(self.call.arguments.get("path", "") or ".")

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.is_error


def _instruction(message: Message) -> bool:
    """A user message that gives an instruction: not a compaction summary, not a harness note."""
    return message.role == "user" and not message.text.startswith((SUMMARY_MARKER, "[arreio]"))


def _own_part(text: str) -> str:
    """An instruction without the plan's goal before it: a plan's unit does what its own goal says
    (the goal above, mined for files too, had unit one write what unit two was for)."""
    return text.split(PLAN_UNITS, 1)[-1]


def _goal_text(messages: list[Message]) -> str:
    """Every instruction so far (a plan sends one per unit), and the goal a compaction summary kept."""
    texts = []
    for m in messages:
        if m.role != "user":
            continue
        if m.text.startswith(SUMMARY_MARKER):  # only the user's words: its records quote file contents
            parsed = parse_summary_message(m)
            if parsed:
                kept = parsed[0]
                texts += [_own_part(t) for t in (kept.goal, *kept.instructions)]
                if kept.current_task and kept.current_task != kept.goal:
                    texts.append(_own_part(kept.current_task))
        elif not m.text.startswith("[arreio]"):
            texts.append(_own_part(m.text))
    return "\n".join(texts)


def _title(messages: list[Message], goal: str, outputs: list[str]) -> str:
    """What a written report is titled from: the plan's goal when one came with it, else the latest
    instruction that names a file to write (a session continued with "Write hello to hi.txt" titled
    hi.txt after its first message), else the goal."""
    first = next((m.text for m in messages if _instruction(m)), "")
    if PLAN_UNITS in first:
        return first.split(PLAN_UNITS, 1)[0]
    wanted = set(outputs)
    for m in reversed(messages):
        if _instruction(m) and wanted & set(read_goal(m.text).named):
            return m.text
    return goal


# A write in a summary's records: `write_file(path="o.md") → …` (arreio's records), or the offline
# summariser's own `write_file {"path": "o.md", …}`.
_SUMMARISED_WRITE = re.compile(r'^(?:write_file|edit_file)(?: \{"path": |\(path=)"((?:[^"\\]|\\.)+)"')


def _summarised_writes(messages: list[Message]) -> set[str]:
    """Files a compaction summary says were written: their calls left the history with the summary
    (the offline summariser lists every call as done), and without this the goal kept in the summary
    was carried out again — a file the user had just undone came back."""
    found: set[str] = set()
    for m in messages:
        parsed = parse_summary_message(m) if m.role == "user" else None
        for item in parsed[0].done if parsed else []:
            if hit := _SUMMARISED_WRITE.match(item):
                found.add(json.loads(f'"{hit.group(1)}"'))
    return found


def _steps(messages: list[Message]) -> list[_Step]:
    last = max((i for i, m in enumerate(messages) if _instruction(m)), default=-1)
    # An `interrupted` result (crash, cancel) does not count: the offline model repeats that call.
    interrupted = {
        p.call_id
        for m in messages
        if m.role == "tool"
        for p in m.parts
        if isinstance(p, ToolResultPart) and p.status == "interrupted"
    }
    results = {
        p.call_id: p
        for m in messages
        if m.role == "tool"
        for p in m.parts
        if isinstance(p, ToolResultPart) and p.status != "interrupted"
    }
    return [
        _Step(c, results.get(c.id), i > last)
        for i, m in enumerate(messages)
        if m.role == "assistant"
        for c in m.tool_calls
        if c.id not in interrupted
    ]


class _View:
    """The history as the policy needs it: listings, reads and write attempts."""

    def __init__(self, steps: list[_Step], summarised: set[str] | None = None) -> None:
        self.steps = steps
        self.summarised = summarised or set()  # written before a compaction (`_summarised_writes`)
        self.listings: dict[str, Listing] = {}
        for s in steps:
            if s.call.name == "list_dir" and s.fresh and s.result is not None:
                self.listings[str(PurePosixPath(s.path))] = parse_listing(s.result.content, s.result.is_error)
        self.read_ok = {s.path: s.result.content for s in steps if s.call.name == "read_file" and s.ok}
        self.read_tried = {s.path for s in steps if s.call.name == "read_file"}
        self.fresh_reads = {s.path: s for s in steps if s.call.name == "read_file" and s.fresh}
        self.attempted = {s.path: s for s in steps if s.call.name in ("write_file", "edit_file")}
        self.read_counts = Counter(s.path for s in steps if s.call.name == "read_file")
        self.list_counts = Counter(str(PurePosixPath(s.path)) for s in steps if s.call.name == "list_dir")

    def may_list(self, folder: str) -> bool:
        """Whether listing `folder` again stays within the repetition guard (governance): the same
        call repeated past its limit would land the run. Counted over the whole history, which can
        only be stricter than the guard's count for this run."""
        return self.list_counts[folder] < LIST_REPEATS

    def state(self, path: str, can_list: bool) -> str:
        """new | exists | unknown | a folder to list first. Without a (fresh) listing to go on, a
        fresh read of the file tells ("probe")."""
        if can_list:
            found = state_of(path, self.listings)
            if found in ("new", "exists", "unknown") or self.may_list(found):
                return found
        read = self.fresh_reads.get(path)
        if read is None or read.result is None:
            return "probe" if self.read_counts[path] < LIST_REPEATS else "unknown"
        if read.ok:
            return "exists"
        # the tool chain prefixes an error with the tool's name: "read_file: file not found: a.md. …"
        return "new" if read.result.content.removeprefix("read_file: ").startswith("file not found") else "unknown"

    def contents(self, names: list[str]) -> dict[str, str | None]:
        return {n: strip_numbers(self.read_ok[n]) if n in self.read_ok else None for n in names}


class OfflineProvider:
    """The default offline model (see module docstring)."""

    name = "offline"

    def __init__(self, chunk_chars: int = 24) -> None:
        self.chunk_chars = chunk_chars

    def reply(self, request: ModelRequest) -> tuple[str, list[ToolCallDone]]:
        """The next reply for this history: (text, tool calls). Pure."""
        text, calls, _ = self.respond(request)
        return text, calls

    def respond(self, request: ModelRequest) -> tuple[str, list[ToolCallDone], str | None]:
        """`reply`, and — for a final answer — why the goal was not done, when it was not (the stream
        then ends as a refusal, which fails the run: "I could not write out.md" is no success)."""
        if request.system and request.system[0].name == "arreio-summariser":
            # A compaction summary request (engine/context/compaction.py marks it): answer with a deterministic one.
            return offline_summary(request), [], None
        messages = request.messages
        goal = _goal_text(messages)
        tools = {t.name for t in request.tools}
        files = read_goal(goal)
        view = _View(_steps(messages), _summarised_writes(messages))
        # Every assistant turn of the session, those a compaction folded into its summary included: ids
        # stay unique per session (`offline_1_0` was given again after a compaction).
        step = summarised_turns(messages) + sum(1 for m in messages if m.role == "assistant")
        can_list = "list_dir" in tools

        def call(j: int, name: str, **arguments: object) -> ToolCallDone:
            return ToolCallDone(id=f"offline_{step}_{j}", name=name, arguments=dict(arguments))

        if not tools:  # asked to finish now (a ceiling's landing): say what stands
            return say.answer(self._account(goal, files, view, can_list)), [], None
        if can_list and "." not in view.listings and view.may_list("."):
            return "I'll start by looking at the working directory.", [call(0, "list_dir", path=".")], None
        targets = [
            p
            for p in files.outputs
            if p not in view.attempted and p not in view.summarised and not say.protected_place(p)
        ]
        states = {p: view.state(p, can_list) for p in targets}
        folders = list(dict.fromkeys(s for s in states.values() if s not in ("new", "exists", "unknown", "probe")))
        if folders:
            return (
                f"Checking what already exists in {', '.join(folders)}.",
                [call(j, "list_dir", path=f) for j, f in enumerate(folders)],
                None,
            )
        wanted = [*files.inputs, *(p for p, s in states.items() if s in ("exists", "probe"))]
        probes = {p for p, s in states.items() if s == "probe"}
        unread = [p for p in dict.fromkeys(wanted) if p not in view.read_tried or (p in probes)]
        if unread and "read_file" in tools:
            return f"Reading {', '.join(unread)}.", [call(j, "read_file", path=p) for j, p in enumerate(unread)], None
        calls, said = self._writes(_title(messages, goal, files.outputs), files, view, states, tools)
        if calls:
            return " ".join(said), [call(j, name, **args) for j, (name, args) in enumerate(calls)], None
        account = self._account(goal, files, view, can_list)
        answer = say.answer(account)
        if request.output_schema is not None:  # structured output: a minimal valid value (offline_schema.py)
            return schema_answer(request.output_schema, answer), [], None
        declined = say.declined(account, goal, files)
        if declined and declined.startswith("the offline model cannot"):  # the rest the answer says already
            answer = f"{answer} I did not do the goal: {declined}."
        return answer, [], declined

    def _writes(self, goal: str, files: GoalFiles, view: _View, states: dict[str, str], tools: set[str]):
        """The write and edit calls of this turn, with what the reply says about them."""
        calls: list[tuple[str, dict]] = []
        writing, adding = [], []
        inputs = files.inputs
        for path, state in states.items():
            if state != "new" or "write_file" not in tools:
                continue
            if path in files.writes:
                calls.append(("write_file", {"path": path, "content": say.report(goal, inputs, view.contents(inputs))}))
            else:
                calls.append(("write_file", {"path": path, "content": say.section(inputs, view.contents(inputs))}))
            writing.append(path)
        for path in files.appends:
            edit = self._append(path, states.get(path), files, view, tools)
            if edit is not None:
                calls.append(edit)
                adding.append(path)
        said = [f"Writing {', '.join(writing)}."] if writing else []
        return calls, said + ([f"Adding a section to {', '.join(adding)}."] if adding else [])

    def _append(self, path: str, state: str | None, files: GoalFiles, view: _View, tools: set[str]):
        """The one call that adds a section to an existing document, or None when it cannot be done
        without risking what is there. `edit_file` replaces the *whole* text with itself plus the
        section; it refuses unless that text matches the file exactly, so nothing else can change."""
        if (
            state != "exists"
            or path not in view.read_ok
            or PurePosixPath(path).suffix.lower() not in APPENDABLE_SUFFIXES
        ):
            return None
        text = exact_text(view.read_ok[path])
        if text is None:
            return None
        added = say.section(files.inputs, view.contents(files.inputs))
        if text.empty:
            return ("write_file", {"path": path, "content": added}) if "write_file" in tools else None
        if "edit_file" not in tools:
            return None
        size, nbytes = exact_size(path, view.listings), len(text.body.encode("utf-8"))
        # With the trailing newline the match can only be the whole file (it is as long as the file can
        # be); without it, only when the listing shows the file is exactly that long.
        old = text.body if size == nbytes else text.body + "\n"
        return ("edit_file", {"path": path, "old": old, "new": old + ("\n" if old.endswith("\n") else "\n\n") + added})

    @staticmethod
    def _holds(path: str, goal: str, files: GoalFiles, view: _View) -> bool:
        """Whether the existing `path`, as read whole, is already what this goal would write there."""
        shown = view.read_ok.get(path)
        text = exact_text(shown) if shown is not None else None
        if text is None:
            return False
        inputs = [p for p in files.inputs if p != path]  # read to be compared, not one of the sources
        wanted = (
            say.report(goal, inputs, view.contents(inputs))
            if path in files.writes
            else say.section(inputs, view.contents(inputs))
        )
        # the title line is worded from how the goal was given (a plan's unit, the mission's heading); the
        # sections under it are what the files say
        return _below_title(text.body) == _below_title(wanted)

    def _account(self, goal: str, files: GoalFiles, view: _View, can_list: bool) -> say.Account:
        # The answer says what this instruction's steps did: a resumed session's earlier work was
        # its own run's answer ("I updated notes.md" again, for a run that only wrote a summary).
        fresh = [s for s in view.steps if s.fresh]
        roots = [s for s in fresh if s.call.name == "list_dir" and s.path == "." and s.ok]
        a = say.Account(entries=_entries(roots[-1].result.content) if roots else None)
        a.read = list(dict.fromkeys(s.path for s in fresh if s.call.name == "read_file" and s.ok))
        for path in files.outputs:
            tried = view.attempted.get(path)
            if (tried is not None and not tried.fresh) or (tried is None and path in view.summarised):
                continue  # done by an earlier instruction of the session (or before a compaction), and said then
            if tried is not None:
                # an append target that was read existed before (an empty one is extended by write_file)
                extended = tried.call.name == "edit_file" or (path in files.appends and path in view.read_ok)
                if not tried.ok:  # a refused edit changed nothing: its text was not what the read showed
                    (a.inexact if tried.call.name == "edit_file" else a.failed).append(path)
                else:
                    (a.appended if extended else a.written).append(path)
                continue
            if say.protected_place(path):
                a.protected.append(path)
                continue
            state = view.state(path, can_list)
            if state == "exists" and path in files.appends:
                suffix = PurePosixPath(path).suffix.lower()
                (a.not_text if suffix not in APPENDABLE_SUFFIXES else a.inexact).append(path)
            elif state == "exists":
                # the same run again: what is there is what it would write, so the goal is done
                (a.current if self._holds(path, goal, files, view) else a.kept).append(path)
            elif state == "new":
                a.failed.append(path)  # it could have been written, but no writing tool was offered
            else:
                a.unknown.append(path)
        a.changes = list(files.changes)
        a.no_target = files.wants_output and not files.outputs and not files.changes
        if not files.wants_output and not files.outputs:  # a question: answer it from what was read
            a.facts = [say.fact(p, view.contents([p])[p]) for p in files.inputs]
        return a

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        text, calls, declined = self.respond(request)
        # A long text (the summary of a huge goal) goes in at most ~256 pieces, and the loop gets a
        # turn between them: a Ctrl-C lands at once, and nothing downstream sees a million deltas.
        step = max(self.chunk_chars, len(text) // 256)
        for n, start in enumerate(range(0, len(text), step)):
            if n and n % 16 == 0:
                await asyncio.sleep(0)
            yield TextChunk(text=text[start : start + step])
        for c in calls:
            yield ToolCallDone(id=c.id, name=c.name, arguments=c.arguments)
        usage = Usage(input_tokens=estimate_request_tokens(request), output_tokens=max(1, len(text) // 4))
        yield Done(stop_reason="tool_use" if calls else "refusal" if declined else "end_turn", usage=usage)


def _below_title(text: str) -> str:
    """A written summary without its first (title) line, trailing newlines dropped."""
    head, _, rest = text.partition("\n")
    return (rest if head.startswith("# ") else text).rstrip("\n")


def _entries(content: str) -> int:
    """The entry count a listing's first line gives ("./ (7 entries)")."""
    head = content.splitlines()[0] if content else ""
    digits = head.rsplit("(", 1)[-1].split(" ", 1)[0]
    return int(digits) if digits.isdigit() else len(content.splitlines())
