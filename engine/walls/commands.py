"""A shell command line as the policy and the blocklist read it: the commands it runs, not its text.

`equivalents.parse(line)` gives a `CommandLine`: every simple command the line runs or amounts to,
each a `Command` (argv and redirects); `shell_syntax.py` is the lexer and parser behind it. The same
parsing reads a policy rule's `match`, so a rule and a call are compared as commands:

- words are split and unquoted as bash does ('…' literal, "…" with `$(…)` live, a backslash escaping
  one character, `$'…'` decoded);
- a line splits into commands at `|`, `|&`, `&&`, `||`, `;`, `&`, newlines, `( )` and `{ }`; code in
  `$(…)`, backticks, `<(…)`, `sh -c '…'`, `eval`, `find -exec`, behind wrappers (`sudo`, `env`,
  `xargs`…) and text piped into a shell is parsed the same way, recursively;
- flags are normalised (`Command.flags`): `-rf`, `-r -f`, `-Rf`, `--recursive --force` are one set
  for `rm`; the per-program aliases are `ALIASES`.

What is not followed (the OS sandbox is the boundary; docs/architecture.md invariant 10): variables set
elsewhere, aliases, functions and scripts on disk (what `${…}`, `$((…))` and array subscripts run
is read: `shell_expansions.py`). `CommandLine.complete` is False
when part of a line was not understood; an allow rule never covers such a line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property

MAX_DEPTH = 32  # nested `$(…)` / `sh -c` levels followed; deeper is not understood

# Per program, flag spellings that mean the same thing (after a cluster like -rf is split).
ALIASES: dict[str, dict[str, str]] = {
    "rm": {"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d"},
    "cp": {"-R": "-r", "--recursive": "-r", "--force": "-f"},
    "mv": {"--force": "-f"},
    "ln": {"--force": "-f", "--symbolic": "-s"},
    "chmod": {"--recursive": "-R"},
    "chown": {"--recursive": "-R"},
    "chgrp": {"--recursive": "-R"},
    "grep": {"--recursive": "-r"},
    "git": {"--force": "-f"},
    "curl": {"--output": "-o", "--silent": "-s", "--location": "-L", "--data": "-d", "--upload-file": "-T"},
    "wget": {"--output-document": "-O", "--quiet": "-q"},
    "base64": {"--decode": "-d", "-D": "-d"},
    "sed": {"--in-place": "-i"},
}
# Programs whose options are single-dash words (`find -name`, `-delete`): never split into letters.
LONG_SINGLE_DASH = frozenset({"find", "java", "dd", "gcc", "g++", "clang", "cc", "go", "ffmpeg"})


@dataclass(frozen=True)
class Redirect:
    """`op` as written (`>`, `>>`, `<`, `<<`, `<<<`, `&>`, `>&`…), its `target` word, and for a
    here-document or here-string its `body`."""

    op: str
    target: str
    body: str = ""

    @property
    def writes(self) -> bool:
        """Writes a file (not a duplicated descriptor like `2>&1`, not /dev/null)."""
        if self.op not in (">", ">>", "&>", "&>>", ">|", "<>", ">&"):
            return False
        if self.op == ">&" and (self.target.isdigit() or self.target == "-"):
            return False
        return self.target not in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


@dataclass(frozen=True)
class Command:
    """One simple command. `implied` is "" for a command as the line spells it (in a substitution or a
    `sh -c` string included); else how it was derived: the program behind a wrapper (`sudo`) or what a
    command amounts to (`find -delete` → `rm -r -f ROOTS`)."""

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    implied: str = ""
    substitutions: tuple[str, ...] = ()  # the code of every $(…), `…`, <(…) in its words
    assignments: tuple[str, ...] = ()  # `NAME=value` words before the program: its environment changed
    # indexes into `argv` of words only known when the line runs: an unset variable, `$(…)`, arithmetic,
    # an unquoted glob or brace expansion — any of them may turn into an option (or several words)
    open_words: tuple[int, ...] = ()

    @cached_property
    def program(self) -> str:
        return os.path.basename(self.argv[0].lstrip("\\")) if self.argv else ""

    @cached_property
    def _shape(self) -> tuple[frozenset[str], tuple[str, ...]]:
        return shape(self.program, self.argv[1:])

    @property
    def flags(self) -> frozenset[str]:
        """Normalised flags: clusters split (`-rf` → -r, -f), aliases applied (`--force` → -f)."""
        return self._shape[0]

    @property
    def words(self) -> tuple[str, ...]:
        """Every argument that is not a flag, in order (flag values included)."""
        return self._shape[1]

    @property
    def text(self) -> str:
        return " ".join(self.argv)


def shape(program: str, args: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """(flags, positional words) of an argument list, as `Command.flags` / `.words` describe."""
    aliases = ALIASES.get(program, {})
    flags: set[str] = set()
    words: list[str] = []
    ended = False
    for arg in args:
        if ended or arg in ("-", "") or not arg.startswith("-") or re.fullmatch(r"-\d+", arg):
            words.append(arg)
        elif arg == "--":
            ended = True
        elif arg.startswith("--") or program in LONG_SINGLE_DASH:
            name, eq, value = arg.partition("=")
            flags.add(aliases.get(name, name) + eq + value)
        else:
            flags.update(aliases.get("-" + ch, "-" + ch) for ch in arg[1:])
    return frozenset(flags), tuple(words)


@dataclass
class CommandLine:
    """Everything a line runs. `pipelines` holds the spelled commands joined by pipes (one list per
    pipeline, single commands included); `functions` maps `f() { … }` to the commands of its body."""

    commands: list[Command] = field(default_factory=list)
    pipelines: list[list[Command]] = field(default_factory=list)
    functions: dict[str, list[Command]] = field(default_factory=dict)
    complete: bool = True
    # `NAME=value` alone on a command (no program): a shell variable set, which changes the
    # environment of every later command when NAME is exported already (PATH, GIT_*, LD_PRELOAD)
    assignments: list[str] = field(default_factory=list)

    def extend(self, other: CommandLine) -> None:
        self.commands += other.commands
        self.pipelines += other.pipelines
        self.functions.update(other.functions)
        self.assignments += other.assignments
        self.complete = self.complete and other.complete
