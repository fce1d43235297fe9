"""Shell syntax: the lexer and parser behind `equivalents.parse` (what the words mean is not here).

`parse_structure(line)` splits a line the way bash does and returns the simple commands it spells
(`commands.CommandLine`), the code inside `$(…)`, backticks and `<(…)` included. It follows bash's
quoting (shlex's POSIX rules, plus what shlex cannot tell: whether text was quoted, which decides
whether `$(…)` inside it runs), here-documents (their body is data, unless the delimiter is unquoted:
then `$(…)` in it runs), `NAME=value` assignments (a later `$NAME` in the line takes the value),
`for`/`case` headers (data), `if`/`then`/`do`/`{`/`}`/`!` (skipped to reach the program) and
`f() { … }` definitions. It never raises: what it does not understand clears `complete`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from arreio.engine.governance.commands import MAX_DEPTH, Command, CommandLine, Redirect

_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!",
                       "esac", "function"})
_HEADERS = frozenset({"for", "select", "case"})  # their words are data, not a command
_OPS = ("&>>", ";;&", "<<<", "<<-", "&&", "||", ";;", ";&", "|&", "&>", ">>", "<<", ">&", "<&", ">|", "<>",
        "|", "&", ";", "(", ")", "<", ">", "\n")
_REDIRS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", "<<", ">&", "<&", ">|", "<>", "<", ">"})
_WORD_END = frozenset(" \t\n|&;()<>")
_FD = re.compile(r"\d+(?=[<>])")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)", re.S)
_GLOB = re.compile(r"[*?\[]")  # in a word's unquoted text: the word is only known when it runs
_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")  # brace expansion: `{--output=x,HEAD}` is two words
_SPECIAL_PARAMETERS = frozenset("@*#?$!-0123456789")
# Characters one check may lex in all (code inside code is lexed once per level): a line built to
# make us work is cut there and left not understood, instead of holding the event loop.
_WORK: ContextVar[list[int] | None] = ContextVar("shell_syntax_work", default=None)
WORK_FACTOR, WORK_FLOOR = 8, 1 << 16
_MAX_NESTING = 64  # `$( $( … ) )` levels read; deeper, the rest of the line is not understood


@contextmanager
def work_budget(line: str) -> Iterator[None]:
    """Bound the lexing every `parse_structure` call inside does to a multiple of `line`'s length
    (an enclosing budget, if any, stays the one that counts)."""
    if _WORK.get() is not None:
        yield
        return
    token = _WORK.set([WORK_FACTOR * len(line) + WORK_FLOOR])
    try:
        yield
    finally:
        _WORK.reset(token)


def parse_structure(line: str, *, depth: int = 0, variables: dict[str, str] | None = None) -> CommandLine:
    """The commands `line` spells, substitutions included, without what they imply (for that use
    `equivalents.parse`). Never raises: what is not understood clears `complete`."""
    out = CommandLine()
    work = _WORK.get()
    if depth > MAX_DEPTH or (work is not None and work[0] < len(line)):
        out.complete = False
        return out
    if work is not None:
        work[0] -= len(line)
    try:
        _Parser(line, out, {} if variables is None else variables, depth).run()
    except RecursionError:  # nesting past `_MAX_NESTING` in some form we do not count
        out.complete = False
    return out


@dataclass
class _Token:
    kind: str  # word | op | redir
    text: str
    subs: tuple[str, ...] = ()
    quoted: bool = False
    plain: int = 0  # how many leading characters were bare text (no quote, escape or `$`)
    body: str = ""  # a here-document delimiter's body, filled in when its line ends
    body_subs: tuple[str, ...] = ()
    open: bool = False  # only known when it runs: an unset variable, `$(…)`, arithmetic, a glob, braces


class _Lexer:
    """Tokens of a line, one at a time (the parser feeds assignments back into `variables`)."""

    def __init__(self, text: str, variables: dict[str, str]) -> None:
        self.s, self.i, self.ok, self.variables = text, 0, True, variables
        self.nesting = 0
        self._open, self._bare = False, []  # of the word being read (`_word`)
        self._want_delim = ""
        self._heredocs: list[tuple[_Token, bool]] = []

    def next(self) -> _Token | None:
        s = self.s
        while self.i < len(s):
            if s[self.i] in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            elif s[self.i] == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            else:
                break
        if self.i >= len(s):
            return None
        if (m := _FD.match(s, self.i)) is not None:
            self.i = m.end()
        if s[self.i] in "<>" and s.startswith("(", self.i + 1):  # process substitution
            start = self.i
            self.i += 2
            inner = self._balanced()
            return _Token("word", s[start:self.i], (inner,))
        for op in _OPS:
            if s.startswith(op, self.i):
                self.i += len(op)
                if op == "\n":
                    self._read_heredocs()
                if op in ("<<", "<<-"):
                    self._want_delim = op
                return _Token("redir" if op in _REDIRS else "op", op)
        token = self._word()
        if self._want_delim:
            self._heredocs.append((token, self._want_delim == "<<-"))
            self._want_delim = ""
        return token

    def _word(self) -> _Token:
        outer, (self._open, self._bare) = (self._open, self._bare), (False, [])  # `$(…)` inside reads its own
        try:
            return self._read_word()
        finally:
            self._open, self._bare = outer

    def _read_word(self) -> _Token:
        s, out, subs, quoted = self.s, [], [], False
        plain: int | None = None
        while self.i < len(s) and s[self.i] not in _WORD_END:
            c = s[self.i]
            if plain is None and c in "\\'\"$`":
                plain = sum(map(len, out))
            if c == "\\":
                if self.i + 1 < len(s) and s[self.i + 1] != "\n":
                    out.append(s[self.i + 1])
                    quoted = True
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.ok, end = False, len(s)
                out.append(s[self.i + 1:end])
                self.i, quoted = end + 1, True
            elif s.startswith("$'", self.i):
                out.append(self._ansi_c())
                quoted = True
            elif c == '"' or s.startswith('$"', self.i):
                self.i += 1 if c == '"' else 2
                self._double(out, subs, '"')
                quoted = True
            else:
                self._live(c, out, subs)
        value, bare = "".join(out), "".join(self._bare)
        is_open = self._open or _GLOB.search(bare) is not None or _BRACES.search(bare) is not None
        return _Token("word", value, tuple(subs), quoted, len(value) if plain is None else plain, open=is_open)

    def _live(self, c: str, out: list[str], subs: list[str]) -> None:
        """One character outside single quotes: `$…` and backticks expand, the rest is literal."""
        s = self.s
        if c == "`":
            end = self.i + 1
            while end < len(s) and s[end] != "`":
                end += 2 if s[end] == "\\" else 1
            if end >= len(s):
                self.ok = False
            inner = s[self.i + 1:end].replace("\\`", "`")
            subs.append(inner)
            out.append(f"`{inner}`")
            self.i = end + 1
            self._open = True
        elif s.startswith("$((", self.i):  # arithmetic: no command runs (it may assign, and index with `$(…)`)
            self._open = True
            start, self.i = self.i, self.i + 3
            depth = 2
            while self.i < len(s) and depth:
                depth += {"(": 1, ")": -1}.get(s[self.i], 0)
                self.i += 1
            out.append(s[start:self.i])
        elif s.startswith("$(", self.i):
            self.i += 2
            inner = self._balanced()
            subs.append(inner)
            out.append(f"$({inner})")
            self._open = True
        elif s.startswith("${", self.i):
            end = s.find("}", self.i)
            end = len(s) - 1 if end < 0 else end
            name = s[self.i + 2:end]
            self._open = self._open or name not in self.variables
            out.append(self.variables.get(name, s[self.i:end + 1]))
            self.i = end + 1
        elif c == "$" and (m := _NAME.match(s, self.i + 1)) is not None:
            self._open = self._open or m.group() not in self.variables
            out.append(self.variables.get(m.group(), "$" + m.group()))
            self.i = m.end()
        else:
            if c == "$" and s[self.i + 1:self.i + 2] in _SPECIAL_PARAMETERS:
                self._open = True  # `$1`, `$@`, `$*`, `$?`…: the line's own arguments and state
            self._bare.append(c)
            out.append(c)
            self.i += 1

    def _double(self, out: list[str], subs: list[str], end: str | None) -> None:
        """Inside "…" (or a here-document body when `end` is None)."""
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == end:
                self.i += 1
                return
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                out.append("" if s[self.i + 1] == "\n" else s[self.i + 1])
                self.i += 2
            elif c in "$`":
                self._live(c, out, subs)
            else:
                out.append(c)
                self.i += 1
        if end is not None:
            self.ok = False

    def _ansi_c(self) -> str:
        s, start = self.s, self.i + 2
        end = start
        while end < len(s) and s[end] != "'":
            end += 2 if s[end] == "\\" else 1
        if end >= len(s):
            self.ok = False
        self.i = end + 1
        body = s[start:end].replace("\\'", "'")
        try:
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except UnicodeDecodeError:
            return body

    def _balanced(self) -> str:
        """The code up to the `)` that closes a `$(` or `<(` just read."""
        start, depth = self.i, 1
        if self.nesting >= _MAX_NESTING:
            self.ok, self.i = False, len(self.s)
            return self.s[start:]
        self.nesting += 1
        try:
            return self._close(start, depth)
        finally:
            self.nesting -= 1

    def _close(self, start: int, depth: int) -> str:
        while (token := self.next()) is not None:
            if token.kind == "op" and token.text == "(":
                depth += 1
            elif token.kind == "op" and token.text == ")":
                depth -= 1
                if depth == 0:
                    return self.s[start:self.i - 1]
        self.ok = False
        return self.s[start:]

    def _read_heredocs(self) -> None:
        s = self.s
        for token, strip in self._heredocs:
            lines = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                line, self.i = s[self.i:end], end + 1
                if (line.lstrip("\t") if strip else line) == token.text:
                    break
                lines.append(line)
            token.body = "\n".join(lines)
            if not token.quoted:  # an unquoted delimiter: $(…) in the body runs
                inner = _Lexer(token.body, self.variables)
                subs: list[str] = []
                inner._double([], subs, None)
                token.body_subs = tuple(subs)
        self._heredocs = []


class _Parser:
    def __init__(self, line: str, out: CommandLine, variables: dict[str, str], depth: int) -> None:
        self.lexer = _Lexer(line, variables)
        self.out, self.depth, self.variables = out, depth, variables
        self.words: list[_Token] = []
        self.redirs: list[tuple[str, _Token]] = []
        self.pipeline: list[Command] = []
        self.parens = 0
        self.cases = 0
        self.functions: list[tuple[str, int, int]] = []  # (name, first command, brace depth)
        self.braces = 0
        self.header = False

    def run(self) -> None:
        lexer, pending = self.lexer, ""
        while (token := lexer.next()) is not None:
            if token.kind == "redir":
                if pending:
                    lexer.ok = False
                pending = token.text
            elif token.kind == "word":
                if pending:
                    self.redirs.append((pending, token))
                    pending = ""
                else:
                    self._word(token)
            elif token.text == "(" and len(self.words) == 1 and not self.redirs:
                self._function(self.words.pop().text)
            elif token.text == "(":
                self.parens += 1 if not self.words else 0
            elif token.text in ("|", "|&"):
                self._finish(pipe=True)
            else:
                if token.text == ")":
                    if self.cases and self.parens == 0:
                        self.header = False  # a `case` pattern ended; its command follows
                        self.words = []
                        continue
                    self.parens -= 1
                    lexer.ok = lexer.ok and self.parens >= 0
                self._finish(pipe=False)
        if pending:
            lexer.ok = False
        self._finish(pipe=False)
        self.out.complete = self.out.complete and lexer.ok and self.parens == 0

    def _word(self, token: _Token) -> None:
        text = token.text
        if not self.words and not token.quoted:
            if text in _HEADERS:  # `for x in …`, `case x in`: data up to the separator (or pattern)
                self.header = True
                self.cases += text == "case"
                return
            if text == "esac":
                self.cases = max(0, self.cases - 1)
            elif text == "{":
                self.braces += 1
            elif text == "}":
                self._close_brace()
            if text in _RESERVED:
                return
        self.words.append(token)

    def _function(self, name: str) -> None:
        closing = self.lexer.next()
        if closing is None or closing.text != ")":
            self.lexer.ok = False
        self.functions.append((name, len(self.out.commands), self.braces))

    def _close_brace(self) -> None:
        self.braces -= 1
        while self.functions and self.functions[-1][2] == self.braces:
            name, first, _ = self.functions.pop()
            self.out.functions[name] = self.out.commands[first:]

    def _finish(self, *, pipe: bool) -> None:
        words, redirs = self.words, self.redirs
        self.words, self.redirs = [], []
        header, self.header = self.header, self.header and pipe
        nested = [sub for token in words for sub in token.subs]
        nested += [sub for _, token in redirs for sub in (*token.subs, *token.body_subs)]
        for code in nested:
            self.out.extend(parse_structure(code, depth=self.depth + 1, variables=self.variables))
        assigned: list[str] = []
        while words and _ASSIGN.fullmatch(words[0].text) and words[0].text.index("=") <= words[0].plain:
            if len(words) == 1 and not header:  # `X=v` alone sets X for the rest of the line
                name, _, value = words[0].text.partition("=")
                self.variables[name.rstrip("+")] = value
            if not header:
                assigned.append(words[0].text)
            words = words[1:]
        argv = [t.text for t in words]
        if header or (not argv and not redirs):
            self.out.assignments += assigned
            if not pipe:
                self._end_pipeline()
            return
        redirects = tuple(Redirect(op, t.text, t.body if op in ("<<", "<<-") else (t.text if op == "<<<" else ""))
                          for op, t in redirs)
        command = Command(tuple(argv), redirects, substitutions=tuple(nested), assignments=tuple(assigned),
                          open_words=tuple(i for i, t in enumerate(words) if t.open))
        self.out.commands.append(command)
        self.pipeline.append(command)
        if not pipe:
            self._end_pipeline()

    def _end_pipeline(self) -> None:
        if self.pipeline:
            self.out.pipelines.append(self.pipeline)
        self.pipeline = []
