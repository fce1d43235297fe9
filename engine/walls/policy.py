"""Whether a call may run: allow, ask a person, or deny. Settings and a call in, a decision out (the
only I/O is resolving a path's symlinks).

Order:
1. a write into a protected path (`protected.py`: the state folder, `.git/`, the user config) is
   denied — by a file tool, or by a shell line that plainly writes there (a redirect, `tee`, `cp`/`mv`
   to it, `rm` of it, a link to it, `git config NAME VALUE`; read from every folder the line `cd`s
   into) — unless an `allow` rule's `path` names it;
2. a matching `deny` rule wins, then `allow`, then `ask`;
3. with no rule: ask when the call is sensitive (the tool declares it, `sensitive_tools` names it,
   or it writes outside `write_allow`), else allow.

Rules are read for what a call does, not how it is spelled:
- `tool` is a tool name or a glob on it (`sqlite__write_*`, `github__*`).
- For shell, `match` is a command, parsed like the call (`equivalents.parse`: quotes removed, flags
  normalised, `$(…)`, `sh -c`, wrappers, `find -delete`, interpreter one-liners and piped text read).
  * deny / ask: the rule holds when any command the line runs or amounts to contains the rule's: same
    program (a glob), the rule's flags among its flags, the rule's words in order among its words.
    `rm -rf` stops `rm -r -f x`, `rm -fr`, `sudo rm --recursive --force x`, `find . -delete`,
    `python -c 'shutil.rmtree("x")'` and `echo cm0gLXJmIHg= | base64 -d | sh`.
  * allow — allow-lists first: a line is allowed only when EVERY command it runs (behind wrappers
    too) is covered by some allow rule (same program, the rule's flags among its flags, its words
    beginning with the rule's words), the whole line was understood, and no command has a side door
    (`side_doors.py`): an environment variable set, a redirect that writes, `$(…)`, a word only known
    when it runs, a wrapper like `sudo`/`xargs`, a program named by its path, or an option or script
    that runs or writes (`git -c`, `git diff --output`, `find -exec`, `sed -i`). `git status` covers
    `git status --short`, not `git status; curl x | sh`, `git -C /elsewhere status`,
    `GIT_CONFIG_PARAMETERS=… git status` nor `git -c core.fsmonitor=… status`.
  * a rule with several commands (`curl | sh`) holds when they occur in that order; for allow, each
    of its commands is allowed on its own.
  * a `match` written as a regex (`settings.reads_as_regex`) is searched in each command's words (for
    deny and ask, in the whole line too); an allow regex must hold for every command.
- For file tools the path is resolved (symlinks, `..`) before `path`, `match` and `write_allow` see it:
  `./.arreio/x`, `src/../.arreio/x` and a symlink into `.arreio` are all `.arreio/x`.

Deny rules are a convenience: they catch a model's ordinary spellings of what you do not want, not
every possible one (a script written to disk first, a variable set in another call). The boundary
is the OS sandbox shell runs in (`engine/tools/sandbox.py`) and the protected paths.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatch, fnmatchcase
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from arreio.engine.core.paths import resolve_below
from arreio.engine.core.ports import process_env
from arreio.engine.walls.commands import Command, CommandLine
from arreio.engine.walls.equivalents import core, parse
from arreio.engine.walls.protected import path_matches, relative_or_absolute, write_refusal
from arreio.engine.walls.settings import Action, GovernanceSettings, PolicyRule, reads_as_regex
from arreio.engine.walls.shell_syntax import parse_structure
from arreio.engine.walls.side_doors import line_side_door, planted_git_dir, side_door

_SUBJECT_ARGS = ("command", "path", "url", "query")


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str


def subject(arguments: dict[str, Any], arg: str | None = None) -> str:
    """The text a rule's pattern is searched in: a named argument, the usual one, or all as JSON."""
    if arg is not None:
        value = arguments.get(arg, "")
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    for name in _SUBJECT_ARGS:
        if isinstance(arguments.get(name), str):
            return arguments[name]
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


@dataclass
class _Call:
    """One call as the rules see it: its path resolved, its command line parsed."""

    name: str
    arguments: dict[str, Any]
    cwd: Path
    env: Mapping[str, str]
    line: CommandLine | None = None  # shell: the parsed command

    @cached_property
    def target(self) -> Path | None:
        """The `path` argument resolved (None without one), when a check first asks for it: a call
        that no path rule and no write check looks at — every read, by default — is not resolved
        here (two `lstat`s and a Path a read, and the tool resolves it again to open it)."""
        path = self.arguments.get("path")
        return _resolve(path, self.cwd, self.env) if isinstance(path, str) and path.strip() else None

    @property
    def path_subject(self) -> str | None:
        # `cwd` was resolved when this call was built (decide): not again for every look.
        return None if self.target is None else relative_or_absolute(self.target, self.cwd, cwd_resolved=True)

    def text(self, arg: str | None) -> str:
        if arg is None and self.target is not None:
            return self.path_subject or ""
        return subject(self.arguments, arg)


def decide(
    settings: GovernanceSettings,
    name: str,
    arguments: dict[str, Any],
    *,
    tool_sensitive: bool,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    state: Path | None = None,
    cwd_resolved: bool = False,
) -> Decision:
    """allow / ask / deny for one call, with the reason in plain words. `cwd` is the working directory
    paths are resolved from, `env` the run's environment (HOME, ARREIO_HOME) — both default to the
    process's, as `paths.state_dir` does — and `state` the run's state folder when set another way.
    `cwd_resolved`: `cwd` is resolved already (a `RunContext.cwd` is), so it is not walked again."""
    call = _Call(
        name,
        arguments,
        Path(cwd or Path.cwd()).resolve() if not cwd_resolved else cwd,
        process_env() if env is None else env,
    )
    command = arguments.get("command")
    if name == "shell" and isinstance(command, str):
        call.line = parse(command)
    refused = _protected_write(settings, call, state)
    if refused is not None:
        return Decision("deny", refused)
    rules = [r for r in settings.policy if fnmatchcase(name, r.tool)]
    deny = next((r for r in rules if r.action == "deny" and _holds(r, call)), None)
    if deny is not None:
        return Decision("deny", _because(deny))
    allow, passed_over = _allowed(rules, call)
    if allow is not None:
        return Decision("allow", _because(allow))
    ask = next((r for r in rules if r.action == "ask" and _holds(r, call)), None)
    if ask is not None:
        return Decision("ask", _because(ask))
    if tool_sensitive:
        return Decision("ask", f"{name} is a sensitive tool{passed_over}")
    if name in settings.sensitive_tools:
        return Decision("ask", f"{name} is listed in governance.sensitive_tools")
    shown = call.path_subject if settings.write_allow and name in settings.write_tools else None
    if shown is not None and _outside_allow_list(shown, settings.write_allow):
        return Decision("ask", f"{name} writes {shown}, outside governance.write_allow")
    return Decision("allow", "not sensitive")


def _because(rule: PolicyRule) -> str:
    what = "".join(f" {k} {v!r}" for k, v in (("matching", rule.match), ("path", rule.path)) if v)
    return f"policy: {rule.action} {rule.tool}{what}"


def _resolve(path: str, cwd: Path, env: Mapping[str, str]) -> Path:
    text = path.strip()
    if text == "~" or text.startswith("~/"):
        text = (env.get("HOME") or str(Path.home())) + text[1:]
    try:
        return resolve_below(cwd, text)  # `cwd` is resolved (decide): only the path's own parts are walked
    except (OSError, RuntimeError, ValueError):
        return Path(text) if text.startswith("/") else cwd / text


# -- protected paths ----------------------------------------------------------------------------
def _protected_write(settings: GovernanceSettings, call: _Call, state: Path | None) -> str | None:
    if call.name in settings.write_tools and call.target is not None:
        return write_refusal(call.name, call.target, call.cwd, call.env, settings.policy, state)
    if call.line is None:
        return None
    bases = _folders_entered(call.line, call.cwd, call.env)
    for target in _shell_writes(call.line):
        if "$" in target or "`" in target:
            continue  # not known before it runs; the sandbox holds the line
        for base in bases:
            refused = write_refusal(
                "shell", _resolve(target, base, call.env), call.cwd, call.env, settings.policy, state
            )
            if refused is not None:
                return refused
    return None


_CHANGES_FOLDER = frozenset({"cd", "pushd"})
_MAX_FOLDERS = 16


def _folders_entered(line: CommandLine, cwd: Path, env: Mapping[str, str]) -> list[Path]:
    """The working directory and every folder the line may `cd`/`pushd` into (each from each folder
    entered before it). A write is looked at from all of them: `cd .git && printf … >> config` writes
    .git/config. Where a subshell ends the `cd` is not tracked, so a later write is also read from
    the folder the line left: the rare false refusal (`(cd .git && git log) > out`) is the price of
    never missing the plain case."""
    folders = [cwd]
    for command in line.commands:
        if command.program not in _CHANGES_FOLDER or len(command.words) != 1:
            continue
        word = command.words[0]
        if "$" in word or "`" in word or word in ("-", "") or word.startswith(("+", "-")):
            continue  # not known before it runs (or a pushd stack entry); the sandbox holds the line
        for base in list(folders):
            entered = _resolve(word, base, env)
            if entered not in folders and len(folders) < _MAX_FOLDERS:
                folders.append(entered)
    return folders


_GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin", "--name-only"})


def _shell_writes(line: CommandLine) -> list[str]:
    """Paths a line plainly writes: redirects, `tee`, `cp`/`mv`/`install` targets, both ends of `ln`, `rm`, `touch`,
    `sed -i`, and `git config NAME VALUE` (it writes .git/config)."""
    out: list[str] = []
    for command in line.commands:
        out += [r.target for r in command.redirects if r.writes]
        program, words = command.program, command.words
        if program in ("tee", "rm", "touch", "truncate", "shred") or (program == "sed" and "-i" in command.flags):
            out += words if program != "sed" else words[1:]
        elif program == "ln":
            out += words  # a link to a protected file is a door into it (a hard link is the file itself)
        elif program in ("cp", "mv", "install") and len(words) >= 2:
            out.append(words[-1])
        elif (
            program == "git" and words[:1] == ("config",) and len(words) >= 3 and not command.flags & _GIT_CONFIG_READS
        ):
            if not command.flags & {"--global", "--system", "--file", "-f"}:
                out.append(".git/config")
    return out


# -- rules --------------------------------------------------------------------------------------
def _holds(rule: PolicyRule, call: _Call) -> bool:
    """Whether a deny or ask rule holds for the call (any command of a shell line)."""
    if rule.path is not None and (call.target is None or not path_matches(rule.path, call.target, call.cwd, call.env)):
        return False
    if rule.match is None:
        return True
    if call.line is not None and rule.arg in (None, "command"):
        if reads_as_regex(rule.match):
            found = _regex(rule.match)
            return found.search(call.arguments["command"]) is not None or any(
                found.search(c.text) for c in call.line.commands
            )
        return _in_order(_pattern(rule.match), call.line.commands)
    return _regex(rule.match).search(call.text(rule.arg)) is not None


def _allowed(rules: list[PolicyRule], call: _Call) -> tuple[PolicyRule | None, str]:
    """The allow rule that covers the call, or None and why a rule that names its commands does not
    (", and …": said after the reason the call is asked about). A shell line is covered only when
    every command it runs is covered by a rule and has no side door (`side_doors.py`): a variable or
    option, redirect, substitution or wrapper that makes it run or write more than its words say."""
    allows = [r for r in rules if r.action == "allow"]
    if call.line is None:
        return next((r for r in allows if _holds(r, call)), None), ""
    whole = next((r for r in allows if r.match is None and r.path is None), None)
    if whole is not None:
        return whole, ""
    line = call.line
    if not line.complete or not any(not c.implied for c in line.commands):
        return None, ""
    used: PolicyRule | None = None
    passed: tuple[PolicyRule, Command, str] | None = None
    for command in line.commands:
        if not command.argv:  # `done < list.txt`: a redirect alone reads, runs nothing
            writes = next((r for r in command.redirects if r.writes), None)
            if writes is not None:
                return None, ""
            continue
        covering = [
            r for r in allows if r.match is not None and r.arg in (None, "command") and _covers(r.match, command)
        ]
        if not covering:
            return None, ""
        reasons = [side_door(command, _flags_of(r), _programs_of(r)) for r in covering]
        if None in reasons:
            used = used or covering[reasons.index(None)]
        else:
            passed = passed or (covering[0], command, reasons[0] or "")
    why_line = line_side_door(line)
    if passed is None and why_line is not None and used is not None:
        passed = (used, line.commands[0], why_line)
    if passed is None and used is not None and any(core(c).program == "git" for c in line.commands):
        planted = next((p for p in map(planted_git_dir, _folders_entered(line, call.cwd, call.env)) if p), None)
        if planted is not None:
            passed = (used, line.commands[0], f"git would read its config from {planted}, which is not a .git folder")
    if passed is not None:
        rule, command, why = passed
        return None, f"; {_because(rule)} does not cover `{_short(command.text)}`: {why}"
    return used, ""


def _flags_of(rule: PolicyRule) -> frozenset[str]:
    """The flags a rule spells itself, normalised (`side_door` takes them as meant)."""
    if rule.match is None or reads_as_regex(rule.match):
        return frozenset()
    return frozenset(flag for pattern in _pattern(rule.match) for flag in pattern.flags)


def _programs_of(rule: PolicyRule) -> frozenset[str]:
    if rule.match is None or reads_as_regex(rule.match):
        return frozenset()
    return frozenset(pattern.argv[0] for pattern in _pattern(rule.match) if pattern.argv)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _covers(match: str, command: Command) -> bool:
    if reads_as_regex(match):
        return _regex(match).search(command.text) is not None
    return any(_command_matches(p, command, prefix=True) for p in _pattern(match))


def _command_matches(pattern: Command, command: Command, *, prefix: bool) -> bool:
    if not fnmatchcase(command.program, pattern.program) or not pattern.flags <= command.flags:
        return False
    wanted, words = pattern.words, command.words
    if prefix:
        return len(wanted) <= len(words) and all(fnmatchcase(w, p) for w, p in zip(words, wanted, strict=False))
    remaining = iter(words)
    return all(any(fnmatchcase(w, p) for w in remaining) for p in wanted)


def _in_order(pattern: tuple[Command, ...], commands: list[Command]) -> bool:
    remaining = iter(commands)
    return bool(pattern) and all(any(_command_matches(p, c, prefix=False) for c in remaining) for p in pattern)


@lru_cache(maxsize=256)
def _pattern(match: str) -> tuple[Command, ...]:
    return tuple(parse_structure(match).commands)


@lru_cache(maxsize=256)
def _regex(match: str) -> re.Pattern[str]:
    try:
        return re.compile(match)
    except re.error:  # a "*" rule's command pattern seen by another tool: matched as text
        return re.compile(re.escape(match))


def _outside_allow_list(path: str, allow: list[str]) -> bool:
    if path.startswith("/"):
        return True
    return not any(
        fnmatch(path, pattern) or path.startswith(pattern.rstrip("*").rstrip("/") + "/") for pattern in allow
    )


# -- rules that name no tool --------------------------------------------------------------------
def rule_warnings(settings: GovernanceSettings, known: Iterable[str]) -> list[str]:
    """What a person should hear about the rules before the run relies on them: a rule (or
    `sensitive_tools` entry) whose tool name or glob matches no tool of the run — with the nearest
    name — and shell deny/ask rules written as a regex, which match text, not meaning."""
    names = sorted(set(known))
    out: list[str] = []
    for where, tool in _named_tools(settings):
        if any(fnmatchcase(n, tool) for n in names):
            continue
        close = difflib.get_close_matches(tool, names, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        out.append(f"{where}: tool {tool!r} matches no tool offered in this run{hint}; the rule does nothing")
    for i, rule in enumerate(settings.policy):
        if rule.action != "allow" and rule.match and fnmatchcase("shell", rule.tool) and reads_as_regex(rule.match):
            out.append(
                f"governance.policy[{i}]: shell {rule.action} {rule.match!r} is a regex, matched on text; "
                'other spellings pass it — write the command instead (match: "rm -rf")'
            )
    return out


def _named_tools(settings: GovernanceSettings) -> list[tuple[str, str]]:
    named = [(f"governance.policy[{i}]", r.tool) for i, r in enumerate(settings.policy) if r.tool != "*"]
    return named + [(f"governance.sensitive_tools[{i}]", t) for i, t in enumerate(settings.sensitive_tools)]
