"""What lets a command that an allow rule covers do more than the rule meant: its side doors.

An allow rule (`policy.py`) names a command — `git diff`, `pytest`, `ls` — and means "this, as it
reads". The shell offers many ways for the same words to run another program or write a file; a
command that uses any of them is not covered, and the person is asked instead:

- its environment changed: `GIT_EXTERNAL_DIFF=./x git diff`, `X=1; …` (a name exported already keeps
  the new value: PATH, GIT_*, LD_PRELOAD), `env X=1 cmd`, `export`, `declare`, `read`, `printf -v`,
  `set`, `source`, `alias`, `hash`, `trap`, or a shell function defined on the line (`line_side_door`);
- a redirect that writes (`> file`), code in `$(…)`, backticks or `<(…)`, or a word only known when
  it runs where an option may stand (`$x`, `*`, `{--output=x,HEAD}`);
- a wrapper that changes who runs or adds words unseen: `sudo`, `doas`, `su`, `xargs`, `watch`,
  `flock`, `exec`, `eval`, `env` with anything before the command;
- an option that runs, loads or writes (`option_profiles.py`): `git -c`, `git --exec-path`,
  `git diff --output`, `--ext-diff`, `--upload-pack`, `find -exec`, `sed -i`, `sort -o`, `pytest -p`;
- words that run or write: a `sed` script with `e`/`w`, an `awk` program with `system`, `|` or `>`,
  `uniq IN OUT`, `make CC=…`, `curl -d @file`, `wget -O file`, `git submodule foreach`, `git config K V`;
- for git, a folder shaped like a repository (HEAD, objects/, refs/) met before any `.git` where git
  looks for one: its `config` (core.fsmonitor, diff.external) is code git runs (`planted_git_dir`).

A rule's own flags are taken as meant (`match: "git diff --output=out.patch"` allows exactly that).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from arreio.engine.walls.commands import ALIASES, Command, CommandLine
from arreio.engine.walls.equivalents import unwrap
from arreio.engine.walls.option_profiles import (
    ANY,
    GENERIC,
    GIT_OTHER,
    GIT_PROFILES,
    GIT_RUNS,
    GIT_SHORT_DENIED,
    GIT_TOP,
    INTERPRETER,
    INTERPRETERS,
    PROFILES,
    Profile,
    option_problem,
)

# Builtins that change the shell for the commands after them (or run a file): never covered.
# Vocabulary, kept filled as written: the formatter would put one word to a line.
# fmt: off
_SHELL_STATE = frozenset({
    "export", "declare", "typeset", "local", "readonly", "set", "shopt", "alias", "unalias", "source", ".",
    "enable", "hash", "unset", "let", "read", "mapfile", "readarray", "getopts", "ulimit", "umask", "trap", "fc",
    "history", "complete", "compgen", "bind", "coproc", "exec", "eval",
})
# fmt: on
_WHO_RUNS = {
    "sudo": "runs its command as another user",
    "doas": "runs its command as another user",
    "su": "runs its command as another user",
    "xargs": "adds words it reads when it runs",
    "watch": "runs its words through a shell",
    "flock": "creates a lock file and runs a command",
    "parallel": "runs the commands it reads",
    "nohup": "writes nohup.out",
}
_WRAPPER_OPTIONS = {"time": Profile(short="*", deny_short="oa", deny_long=frozenset({"output", "append"}))}
_MAX_LEVELS = 64
_SYSTEM_PROGRAMS = ("/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/sbin/", "/sbin/")
# `system(…)`, a pipe (not `||`), `@load`/`@include`, or `>` inside a print statement (elsewhere a comparison)
_AWK_RUNS_OR_WRITES = re.compile(r"\bsystem\s*\(|(?<!\|)\|(?!\|)|@load|@include|\bprintf?\b[^;{}\n]*>")


def line_side_door(line: CommandLine) -> str | None:
    """A side door of the line as a whole: a variable set for what follows, a function defined."""
    if line.assignments:
        return f"it sets {_name(line.assignments[0])} for the commands after it"
    if line.functions:
        return f"it defines a shell function ({next(iter(line.functions))})"
    return None


def side_door(
    command: Command, accepted: frozenset[str] = frozenset(), spelled: frozenset[str] = frozenset()
) -> str | None:
    """Why `command` may run or write more than its words say, or None (module docstring). `accepted`:
    the covering rule's own flags, taken as meant; `spelled`: its programs as written (a rule naming
    `./scripts/check.sh` means that file)."""
    if command.assignments:
        return f"it sets {_name(command.assignments[0])} for {command.program}"
    runs = command.argv[0] if command.argv else ""
    if "/" in runs and not runs.startswith(_SYSTEM_PROGRAMS) and runs not in spelled:
        return f"it runs {runs}, a file named by its path, not the program {command.program}"
    writes = next((r for r in command.redirects if r.writes), None)
    if writes is not None:
        return f"it writes {writes.target} ({writes.op})"
    network = next((r for r in command.redirects if r.target.startswith(("/dev/tcp/", "/dev/udp/"))), None)
    if network is not None:
        return f"it opens a network connection ({network.target})"
    if command.substitutions:
        return "it runs code in $(…), backticks or <(…)"
    program, argv = command.program, command.argv
    if program in _SHELL_STATE:
        return f"{program} changes the shell for the commands after it"
    if program in _WHO_RUNS:
        return f"{program} {_WHO_RUNS[program]}"
    inner = unwrap(command)
    if inner is not None:  # nice, timeout, env, command…: their own options only; what they run is read on its own
        own = argv[1 : len(argv) - len(inner.argv)]
        if program == "env" and own:
            return "env changes the environment of the command it runs"
        return option_problem(_WRAPPER_OPTIONS.get(program, ANY), own, accepted, first=1)
    opened = frozenset(command.open_words)
    if program == "git":
        return _git(command, accepted, opened)
    if INTERPRETERS.fullmatch(program):
        return _interpreter(command, accepted, opened)
    profile = PROFILES.get(program, GENERIC)
    problem = option_problem(profile, argv[1:], accepted, open_words=opened, first=1, aliases=ALIASES.get(program))
    if problem is not None:
        return problem
    return _words(command)


# -- git ------------------------------------------------------------------------------------------
def _git(command: Command, accepted: frozenset[str], opened: frozenset[int]) -> str | None:
    argv = command.argv
    at = 1
    while at < len(argv) and argv[at].startswith("-") and argv[at] != "-":
        problem = option_problem(GIT_TOP, [argv[at]], accepted, open_words=opened, first=at)
        if problem is not None:
            return problem
        at += 1
    if at >= len(argv):
        return None
    if at in opened:
        return f"{argv[at]!r} is only known when the line runs"
    sub, rest = argv[at], argv[at + 1 :]
    word = next((a for a in rest if not a.startswith("-")), "")
    if (sub, "") in GIT_RUNS or (sub, word) in GIT_RUNS:
        return f"git {sub}{' ' + word if (sub, word) in GIT_RUNS else ''} runs what it is given or writes a file"
    if sub == "config" and len([a for a in rest if not a.startswith("-")]) > (2 if word in ("get", "list") else 1):
        return "git config NAME VALUE writes a config file"
    profile = GIT_PROFILES.get(sub) or replace(GIT_OTHER, deny_short=GIT_SHORT_DENIED.get(sub, ""))
    return option_problem(profile, rest, accepted, open_words=opened, first=at + 1, aliases=ALIASES["git"])


def planted_git_dir(folder: Path) -> Path | None:
    """The folder git would take as its repository from `folder` when it is not a `.git`: one shaped
    like a repository (a HEAD file, objects/ and refs/) met before any `.git` as git walks up from
    `folder`. Its config is code git runs (core.fsmonitor, diff.external, core.pager)."""
    for level, where in enumerate((folder, *folder.parents)):
        if level >= _MAX_LEVELS or os.path.lexists(where / ".git"):
            return None
        if (where / "HEAD").is_file() and (where / "objects").is_dir() and (where / "refs").is_dir():
            return where
    return None


# -- interpreters -----------------------------------------------------------------------------------
def _interpreter(command: Command, accepted: frozenset[str], opened: frozenset[int]) -> str | None:
    """`python -m pytest …` is read as pytest; any other interpreter line by `INTERPRETER` (no code
    given inline, no module preloaded)."""
    args = command.argv[1:]
    for at, arg in enumerate(args):
        if arg == "-m" and at + 1 < len(args):
            problem = option_problem(INTERPRETER, args[:at], accepted, open_words=opened, first=1)
            if problem is not None:
                return problem
            module = args[at + 1]
            return option_problem(
                PROFILES.get(module, GENERIC), args[at + 2 :], accepted, open_words=opened, first=at + 3
            )
        if not arg.startswith("-"):
            break
    return option_problem(INTERPRETER, args, accepted, open_words=opened, first=1)


# -- words that run or write ----------------------------------------------------------------------
def _words(command: Command) -> str | None:
    program, args = command.program, list(command.argv[1:])
    if program == "sed":
        scripts = _sed_scripts(args)
        if any(_sed_runs_or_writes(script) for script in scripts):
            return "its sed script runs a command or writes a file (e, w, W, s///e, s///w)"
    elif program in ("awk", "gawk", "mawk", "nawk"):
        script = next((a for a in args if not a.startswith("-") and not _after_valued(args, a, "Fv")), "")
        if _AWK_RUNS_OR_WRITES.search(script):
            return "its awk program runs a command or writes a file (system, |, print >)"
    elif program in ("uniq", "xxd") and len(_positional(args, "fsw" if program == "uniq" else "cglson")) > 1:
        return f"{program} writes its second file"
    elif program in ("make", "gmake") and any("=" in a and not a.startswith("-") for a in args):
        return "it sets a make variable (CC=…, SHELL=…), which may run another program"
    elif program == "curl":
        sent = _option_values(args, "dFT", ("data", "data-binary", "data-ascii", "json", "form", "upload-file"))
        encoded = _option_values(args, "", ("data-urlencode",))
        if any(re.match(r"[@<]|[^=]*=[@<]", v) for v in sent) or any(re.match(r"[^=]*@", v) for v in encoded):
            return "curl sends a file (@file)"
    elif program == "wget":
        if any(v != "-" for v in _option_values(args, "O", ("output-document",))):
            return "wget writes the file -O names"
    elif program in ("less", "more") and any(a.startswith("+") for a in args):
        return f"{program} runs the commands given with +"
    return None


def _positional(args: list[str], valued: str) -> list[str]:
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-") and len(arg) > 1:
            skip = len(arg) == 2 and arg[1] in valued
        else:
            out.append(arg)
    return out


def _after_valued(args: list[str], arg: str, valued: str) -> bool:
    at = args.index(arg)
    return at > 0 and len(args[at - 1]) == 2 and args[at - 1][0] == "-" and args[at - 1][1] in valued


def _option_values(args: list[str], letters: str, names: tuple[str, ...]) -> list[str]:
    """The values given to the short options `letters` (clustered too) and the long `names`."""
    out: list[str] = []
    for at, arg in enumerate(args):
        following = args[at + 1] if at + 1 < len(args) else ""
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in names:
                out.append(value if eq else following)
        elif arg.startswith("-") and len(arg) > 1:
            for k, letter in enumerate(arg[1:], 2):
                if letter in letters:
                    out.append(arg[k:] or following)
                    break
    return out


def _sed_scripts(args: list[str]) -> list[str]:
    scripts: list[str] = []
    positional: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        following = args[at + 1] if at + 1 < len(args) else ""
        if arg == "--":
            positional += args[at + 1 :]
            break
        if arg.startswith("--expression"):
            name, eq, value = arg.partition("=")
            scripts.append(value if eq else following)
            at += 1 if eq else 2
            continue
        if arg.startswith("-") and len(arg) > 1 and not arg.startswith("--"):
            cluster = arg[1:]
            for k, letter in enumerate(cluster):
                if letter in "el":
                    value = cluster[k + 1 :] or following
                    if letter == "e":
                        scripts.append(value)
                    at += 0 if cluster[k + 1 :] else 1
                    break
        elif not arg.startswith("-"):
            positional.append(arg)
        at += 1
    if not scripts and positional:
        scripts.append(positional[0])
    return scripts


def _sed_runs_or_writes(script: str) -> bool:
    """Whether a sed script runs a command or writes a file (`e`, `w`, `W`, the `e` and `w` flags of
    `s`), read command by command; anything not understood counts as doing so."""
    s, i, n = script, 0, len(script)
    while i < n:
        c = s[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        if c == "#":
            i = _line_end(s, i)
            continue
        i = _sed_address(s, i)
        while i < n and s[i] in " \t!":
            i += 1
        c = s[i] if i < n else ""
        if c in ("e", "w", "W"):
            return True
        if c in ("s", "y"):
            end = _sed_parts(s, i + 1, 2)
            if end is None:
                return True
            i = end
            if c == "s":
                flags = re.match(r"[gpiImM0-9]*", s[i:]).group()  # type: ignore[union-attr]
                i += len(flags)
                if i < n and s[i] not in " \t\n;}":
                    return True  # `e`, `w file` or a flag not understood
        elif c in ("a", "i", "c"):
            i = _line_end(s, i)
            while i < n and s[i - 1 : i] == "\\":
                i = _line_end(s, i + 1)
        elif c in ("r", "R", ":", "b", "B", "t", "T", "v"):
            i = _line_end(s, i) if c in "rR:" else _command_end(s, i)
        elif c in ("q", "Q", "l", "L"):
            i += 1
            while i < n and s[i].isdigit():
                i += 1
        elif c and c in "pPdDnNgGhHxz=F":
            i += 1
        elif c:
            return True
    return False


def _line_end(s: str, i: int) -> int:
    end = s.find("\n", i)
    return len(s) if end < 0 else end + 1


def _command_end(s: str, i: int) -> int:
    found = re.compile(r"[;\n]").search(s, i)
    return len(s) if found is None else found.end()


def _sed_address(s: str, i: int) -> int:
    n = len(s)
    for _ in range(2):
        if i < n and s[i].isdigit():
            while i < n and (s[i].isdigit() or s[i] == "~"):
                i += 1
        elif i < n and s[i] == "$":
            i += 1
        elif i < n and s[i] in "/\\":
            delimiter = "/" if s[i] == "/" else (s[i + 1] if i + 1 < n else "/")
            end = _sed_parts(s, i + (1 if s[i] == "/" else 2), 1, delimiter)
            i = n if end is None else end
            while i < n and s[i] in "IM":
                i += 1
        elif i < n and s[i] in "+~":
            i += 1
            while i < n and s[i].isdigit():
                i += 1
        if i < n and s[i] == ",":
            i += 1
            continue
        break
    return i


def _sed_parts(s: str, i: int, parts: int, delimiter: str | None = None) -> int | None:
    """The index after `parts` delimited parts starting at `i` (the delimiter is `s[i]` unless given);
    a bracket expression in the first part is read whole, as GNU sed reads it. None: not closed."""
    n = len(s)
    if delimiter is None:
        if i >= n or s[i] in "\n\\":
            return None
        delimiter, i = s[i], i + 1
    for part in range(parts):
        while i < n and s[i] != delimiter:
            if s[i] == "\\":
                i += 2
            elif s[i] == "[" and part == 0:
                close = re.compile(r"\[\^?\]?[^\]]*\]").match(s, i)
                i = close.end() if close else i + 1
            else:
                i += 1
        if i >= n:
            return None
        i += 1
    return i


def _name(assignment: str) -> str:
    return assignment.partition("=")[0].rstrip("+")
