"""What a command amounts to: the commands behind wrappers, inside code strings, and in other spellings.

`parse(line)` is the command line as the policy and the blocklist read it: `commands.parse_structure`
plus, for every command, what it runs or means —

- the program behind a wrapper: `sudo`, `doas`, `env`, `nice`, `nohup`, `timeout`, `time`, `xargs`,
  `command`, `exec`, `stdbuf`, `watch` (`sudo -u x rm -rf /` also reads as `rm -rf /`);
- the program a runner starts by name: `python -m pytest`, `uv run pytest`, `npx jest` (runners.py);
- the code of `sh|bash|zsh|dash|ksh -c '…'`, `eval …`, `su -c '…'`, `env -S '…'`, parsed as a line;
- `find … -exec CMD … ;` runs CMD; `find ROOTS … -delete` (or `-exec rm`) amounts to `rm -r -f ROOTS`;
- interpreter one-liners (`python -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`): a tree deletion
  (`shutil.rmtree(X)`, `remove_tree`, `fs.rmSync(X, {recursive})`, `FileUtils.rm_rf`) amounts to
  `rm -r -f X` (X: the literal, `~` for the home folder, `?` when computed); a literal handed to
  `system`/`subprocess`/`exec`/backticks is parsed as a command line;
- text fed to a shell on stdin: `echo '…' | sh`, `printf … | bash`, `echo B64 | base64 -d | sh`,
  `sh <<EOF … EOF`, `bash <<< '…'` — the text (decoded) is parsed as a line.

Derived commands carry `Command.implied` (how they were found), except code that is spelled out in the
line (`sh -c`, `eval`, `find -exec`, piped text), which counts as spelled: an allow rule must cover it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import deque
from dataclasses import replace

from arreio.engine.walls.commands import MAX_DEPTH, Command, CommandLine
from arreio.engine.walls.runners import run_by
from arreio.engine.walls.shell_syntax import parse_structure, work_budget

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_INTERPRETER = re.compile(r"(python|pypy|perl|ruby|php)[\d.]*|(node|nodejs|deno|bun)")
# interpreter family → the options whose value is code (a cluster ending in the letter counts too)
_CODE_FLAGS = {
    "python": ("-c",),
    "pypy": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
}
# wrapper → (its options that take a value, how many positional words precede the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "env": (frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "taskset": (frozenset(), 1),
    "flock": (frozenset({"-w", "-E"}), 1),
    "xargs": (
        frozenset(
            {
                "-I",
                "-n",
                "-P",
                "-d",
                "-L",
                "-s",
                "-E",
                "-a",
                "--max-args",
                "--max-procs",
                "--delimiter",
                "--arg-file",
                "--replace",
            }
        ),
        0,
    ),
    "watch": (frozenset({"-n", "--interval"}), 0),
    "unbuffer": (frozenset(), 0),
    "busybox": (frozenset(), 0),
}
_STRING = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_TREE_DELETE = re.compile(
    r"\b(?:rmtree|remove_tree|rm_rf|rm_r|rimraf(?:\.sync)?|rmSync|rmdirSync|rm|rmdir)\s*\(\s*(?P<arg>[^,)]*)"
    r"(?P<rest>[^)]*)"
)
_EXEC_LITERAL = re.compile(
    rf"(?:\b(?:system|popen|check_output|check_call|call|run|Popen|getoutput|getstatusoutput|exec|execSync|"
    rf"spawnSync|spawn|execFile|qx)\s*\(?\s*(?P<lit>{_STRING}|\[[^\]]*\])|`(?P<bt>[^`]+)`)"
)
_HOME_HINT = re.compile(r"expanduser|home\(\)|homedir\(\)|\bHOME\b|^['\"]?~")
_MAX_EXPANSIONS = 2000  # derived commands per line, plus one per character of it


def parse(line: str) -> CommandLine:
    """Every command `line` runs or amounts to (module docstring). Pure; never raises."""
    with work_budget(line):
        out = parse_structure(line)
        _imply(out, 0, budget=_MAX_EXPANSIONS + len(line))
    return out


def _imply(out: CommandLine, depth: int, *, budget: int) -> None:
    """Adds what every command implies, breadth first. A command already known is not followed
    twice (`sh -c "$(sh -c "$(…)")"` reads each level once, not once per enclosing level). Each
    derived command comes from text in the line, so `budget` grows with its length; past it the line
    is cut and marked not understood."""
    queue: deque[tuple[Command, int]] = deque()
    seen: set[Command] = set()

    def absorb(line: CommandLine, level: int, *, new: bool) -> None:
        fresh = [c for c in line.commands if c not in seen]
        seen.update(fresh)
        if new:
            if not fresh:
                return
            out.commands.extend(fresh)
            out.pipelines.extend(p for p in line.pipelines if any(c in fresh for c in p))
            out.functions.update(line.functions)
            out.assignments += line.assignments
            out.complete = out.complete and line.complete
        queue.extend((c, level) for c in fresh)
        for pipeline in line.pipelines:
            for fed in _piped_into_shell(pipeline, level + 1):
                absorb(fed, level + 1, new=True)

    absorb(out, depth, new=False)
    derived = 0
    while queue:
        command, level = queue.popleft()
        if level > MAX_DEPTH:
            out.complete = False
            continue
        for found in _derive(command, level + 1):
            derived += 1
            if derived > budget:
                out.complete = False
                return
            if isinstance(found, CommandLine):
                absorb(found, level + 1, new=True)
            elif found not in seen:
                seen.add(found)
                out.commands.append(found)
                queue.append((found, level + 1))


def core(command: Command) -> Command:
    """The command behind every wrapper (`sudo nice -n 5 rm x` → `rm x`); itself when unwrapped."""
    inner = unwrap(command)
    while inner is not None:
        command, inner = inner, unwrap(inner)
    return command


def unwrap(command: Command) -> Command | None:
    """The command a wrapper runs, or None (not a wrapper, or `command -v`, `xargs` alone)."""
    spec = _WRAPPERS.get(command.program)
    if spec is None:
        return None
    takes_value, positionals = spec
    args = list(command.argv[1:])
    while args:
        arg = args[0]
        if command.program in ("env", "sudo") and re.fullmatch(r"[A-Za-z_]\w*=.*", arg, re.S):
            args.pop(0)
        elif arg == "--":
            args.pop(0)
            break
        elif arg.startswith("-") and len(arg) > 1:
            if command.program == "command" and arg in ("-v", "-V"):
                return None  # a lookup, nothing runs
            args.pop(0)
            if arg in takes_value and args:
                args.pop(0)
        else:
            break
    args = args[positionals:]
    if not args:
        return None
    return Command(tuple(args), command.redirects, implied=command.program)


def _derive(command: Command, level: int) -> list[Command | CommandLine]:
    found: list[Command | CommandLine] = []
    inner = unwrap(command)
    if inner is not None:
        found.append(inner)
    if (started := run_by(command)) is not None:
        found.append(started)
    program, argv = command.program, command.argv
    if command.program == "env" and "-S" in argv[1:-1]:
        found.append(parse_structure(argv[argv.index("-S") + 1], depth=level))
    code = _shell_code(command)
    if code is not None:
        found.append(parse_structure(code, depth=level))
    if program == "eval" and len(argv) > 1:
        found.append(parse_structure(" ".join(argv[1:]), depth=level))
    if program in SHELLS and (body := _fed_code(command)):
        found.append(parse_structure(body, depth=level))
    if program == "find":
        found += _find(command, level)
    if _INTERPRETER.fullmatch(program):
        found += _interpreter(command, level)
    return found


def _fed_code(command: Command) -> str:
    """The here-document or here-string a program reads its code from (`bash <<EOF`), if any."""
    if _has_script(command):
        return ""
    return next((r.body for r in command.redirects if r.op in ("<<", "<<-", "<<<") and r.body), "")


def _shell_code(command: Command) -> str | None:
    """The code of `sh -c CODE` / `bash -lc CODE` / `su root -c CODE`."""
    if command.program not in SHELLS and command.program != "su":
        return None
    args = command.argv[1:]
    for i, arg in enumerate(args):
        if i + 1 >= len(args):
            break
        if arg == "--command" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]):
            return args[i + 1]
        if not arg.startswith(("-", "+")) and args[i - 1] not in ("-o", "+o", "-O", "+O") and command.program != "su":
            break  # a script file: what follows are its arguments
    return None


def _has_script(command: Command) -> bool:
    """A shell given a script file or `-c`, or an interpreter given code or a file, reads no code
    from stdin (`-s` and `-` say it does)."""
    if _shell_code(command) is not None or code_of(command) is not None:
        return True
    if "-s" in command.flags and command.program in SHELLS:
        return False
    return any(w != "-" for w in command.words)


def reads_stdin_code(command: Command) -> bool:
    """A shell or interpreter that takes its program from stdin (`sh`, `bash -s`, `python -`)."""
    command = core(command)
    if command.program in SHELLS or _INTERPRETER.fullmatch(command.program):
        return not _has_script(command)
    return False


def _piped_into_shell(pipeline: list[Command], level: int) -> list[CommandLine]:
    """Text an `echo`/`printf` (optionally through `base64 -d`) pipes into a shell, parsed."""
    found: list[CommandLine] = []
    for k in range(1, len(pipeline)):
        if not reads_stdin_code(pipeline[k]):
            continue
        text = _literal_output(pipeline[:k])
        if text is not None:
            found.append(parse_structure(text, depth=level))
    return found


def _literal_output(feeders: list[Command]) -> str | None:
    decoders = 0
    while feeders and is_decoder(core(feeders[-1])):
        feeders, decoders = feeders[:-1], decoders + 1
    if not feeders or decoders > 1:
        return None
    source = core(feeders[-1])
    if source.program not in ("echo", "printf") or source.substitutions:
        return None
    text = " ".join(w for w in source.argv[1:] if w not in ("-n", "-e", "-E"))
    if source.program == "printf":
        text = text.replace("\\n", "\n")
    if decoders:
        try:
            text = base64.b64decode(text.strip(), validate=False).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return None
    return text


def is_decoder(command: Command) -> bool:
    """Turns encoded bytes back into text: `base64 -d`, `base32 -d`, `xxd -r`, `openssl … -d`."""
    if command.program in ("base64", "base32", "basenc"):
        return "-d" in command.flags
    if command.program == "xxd":
        return "-r" in command.flags
    if command.program == "openssl":
        return "-d" in command.flags or "-D" in command.flags
    return command.program in ("uudecode",)


def _find(command: Command, level: int) -> list[Command | CommandLine]:
    argv = list(command.argv[1:])
    roots = []
    while argv and not argv[0].startswith(("-", "(", "!")):
        roots.append(argv.pop(0))
    roots = roots or ["."]
    found: list[Command | CommandLine] = []
    deletes = "-delete" in argv
    i = 0
    while i < len(argv):
        if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(argv)) if argv[j] in (";", "+")), len(argv))
            ran = Command(tuple(argv[i + 1 : end]), implied="")
            if ran.argv:
                found.append(ran)
                deletes = deletes or core(ran).program in ("rm", "unlink", "shred")
            i = end
        i += 1
    if deletes:
        found.append(Command(("rm", "-r", "-f", *roots), implied="find -delete"))
    return found


def code_of(command: Command) -> str | None:
    """The code of an interpreter one-liner (`python -c CODE`, `perl -ne CODE`, `deno eval CODE`)."""
    m = _INTERPRETER.fullmatch(command.program)
    if m is None:
        return None
    args = command.argv[1:]
    if command.program in ("deno", "bun"):
        return args[1] if len(args) > 1 and args[0] == "eval" else None
    options = _CODE_FLAGS[m.group(1) or m.group(2)]
    letters = {o[1] for o in options if len(o) == 2}
    for i, arg in enumerate(args[:-1]):
        if arg in options or (re.fullmatch(r"-[A-Za-z]+", arg) and arg[-1] in letters):
            return args[i + 1]  # clustered too: `python -Sc CODE`, `perl -ne CODE`
        if not arg.startswith("-"):
            break  # a script file: what follows are its arguments
    return None


def _interpreter(command: Command, level: int) -> list[Command | CommandLine]:
    code = code_of(command) or _fed_code(command)
    if not code:
        return []
    how = f"{command.program} {'-c' if command.program.startswith(('python', 'pypy')) else '-e'}"
    found: list[Command | CommandLine] = []
    for m in _TREE_DELETE.finditer(code):
        name = m.group(0).split("(")[0].strip()
        recursive = name in (
            "rmtree",
            "remove_tree",
            "rm_rf",
            "rm_r",
            "rimraf",
            "rimraf.sync",
        ) or "recursive" in m.group("rest")
        if recursive:
            found.append(Command(("rm", "-r", "-f", _target(m.group("arg"))), implied=how))
    for m in _EXEC_LITERAL.finditer(code):
        if m.group("bt"):
            found.append(_as_implied(parse_structure(m.group("bt"), depth=level), how))
            continue
        literal = m.group("lit")
        if literal.startswith("["):
            parts = [_unquote(p) for p in re.findall(_STRING, literal)]
            text = " ".join(_shell_word(p) for p in parts)
        else:
            text = _unquote(literal)
        found.append(_as_implied(parse_structure(text, depth=level), how))
    return found


def _as_implied(line: CommandLine, how: str) -> CommandLine:
    line.commands = [replace(c, implied=how) for c in line.commands]
    line.pipelines = [[replace(c, implied=how) for c in p] for p in line.pipelines]
    return line


def _target(arg: str) -> str:
    arg = arg.strip()
    if re.fullmatch(_STRING, arg):
        value = _unquote(arg)
        return "~" if value.startswith("~") and value.rstrip("/") == "~" else value
    return "~" if _HOME_HINT.search(arg) else "?"


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


def _shell_word(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'" if re.search(r"[^\w@%+=:,./-]", word) or not word else word
