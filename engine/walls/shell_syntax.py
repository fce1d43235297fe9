"""Shell syntax: the lexer and parser behind `equivalents.parse` (what the words mean is not here).

`parse_structure(line)` splits a line the way bash does and returns the simple commands it spells
(`commands.CommandLine`), the code inside `$(…)`, backticks and `<(…)` included — also where it hides
inside `${…}`, `$((…))`, array subscripts and words bash evaluates (`shell_expansions.py`). It follows bash's
quoting (shlex's POSIX rules, plus what shlex cannot tell: whether text was quoted, which decides
whether `$(…)` inside it runs), here-documents (their body is data, unless the delimiter is unquoted:
then `$(…)` and `${…}` in it run), `NAME=value` assignments (a later `$NAME` in the line takes the
value), `for`/`case` headers (data; a `for` variable's values are kept for arithmetic that reads it),
`if`/`then`/`do`/`{`/`}`/`!` (skipped to reach the program) and `f() { … }` definitions. It never
raises: what it does not understand clears `complete`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arreio.engine.walls.commands import MAX_DEPTH, Command, CommandLine, Redirect
from arreio.engine.walls.shell_expansions import MAX_NESTING, ExpansionReader, Variables, evaluated_operands
from arreio.engine.walls.work_budget import WORK_FACTOR, WORK_FLOOR, spend, work_budget

__all__ = ["WORK_FACTOR", "WORK_FLOOR", "parse_structure", "work_budget"]

# Vocabulary, kept filled as written: the formatter would put one word to a line.
# fmt: off
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!",
                       "esac", "function"})
_HEADERS = frozenset({"for", "select", "case"})  # their words are data, not a command
_OPS = ("&>>", ";;&", "<<<", "<<-", "&&", "||", ";;", ";&", "|&", "&>", ">>", "<<", ">&", "<&", ">|", "<>",
        "|", "&", ";", "(", ")", "<", ">", "\n")
# fmt: on
_REDIRS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", "<<", ">&", "<&", ">|", "<>", "<", ">"})
_WORD_END = frozenset(" \t\n|&;()<>")
_FD = re.compile(r"\d+(?=[<>])")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)", re.S)
_GLOB = re.compile(r"[*?\[]")  # in a word's unquoted text: the word is only known when it runs
_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")  # brace expansion: `{--output=x,HEAD}` is two words


def parse_structure(line: str, *, depth: int = 0, variables: dict[str, str] | None = None) -> CommandLine:
    """The commands `line` spells, substitutions included, without what they imply (for that use
    `equivalents.parse`). Never raises: what is not understood clears `complete`."""
    out = CommandLine()
    if depth > MAX_DEPTH or not spend(len(line)):
        out.complete = False
        return out
    scope = variables if isinstance(variables, Variables) else Variables(variables, line)
    try:
        _Parser(line, out, scope, depth).run()
    except RecursionError:  # nesting past `MAX_NESTING` in some form we do not count
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


class _Lexer(ExpansionReader):
    """Tokens of a line, one at a time (the parser feeds assignments back into `variables`); the
    expansions in a word are read by `ExpansionReader`."""

    def __init__(self, text: str, variables: Variables) -> None:
        self.s, self.i, self.ok, self.variables = text, 0, True, variables
        self.nesting = 0
        self._open, self._bare = False, []  # of the word being read (`_word`)
        self._names, self._in_double, self._evaluated = None, False, set()
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
            return _Token("word", s[start : self.i], (inner,))
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
        outer = self._open, self._bare, self._names
        self._open, self._bare, self._names = False, [], None  # a word in `$(…)` inside reads its own
        try:
            return self._read_word()
        finally:
            self._open, self._bare, self._names = outer

    def _sublexer(self, text: str) -> _Lexer:
        """A lexer for text read inside this one's (a variable's value, quoted text that does not quote)."""
        inner = _Lexer(text, self.variables)
        inner.nesting, inner._evaluated = self.nesting + 1, self._evaluated
        return inner

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
                out.append(s[self.i + 1 : end])
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

    def _double(self, out: list[str], subs: list[str], end: str | None) -> None:
        """Inside "…" (or a here-document body when `end` is None)."""
        outer, self._in_double = self._in_double, True
        try:
            self._double_text(out, subs, end)
        finally:
            self._in_double = outer

    def _double_text(self, out: list[str], subs: list[str], end: str | None) -> None:
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
        if self.nesting >= MAX_NESTING:
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
                    return self.s[start : self.i - 1]
        self.ok = False
        return self.s[start:]

    def _read_heredocs(self) -> None:
        s = self.s
        for token, strip in self._heredocs:
            lines = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                line, self.i = s[self.i : end], end + 1
                if (line.lstrip("\t") if strip else line) == token.text:
                    break
                lines.append(line)
            token.body = "\n".join(lines)
            if not token.quoted:  # an unquoted delimiter: $(…), ${…} and $((…)) in the body run
                inner = self._sublexer(token.body)
                subs: list[str] = []
                inner._double([], subs, None)
                token.body_subs = tuple(subs)
                self.ok = self.ok and inner.ok
        self._heredocs = []


class _Parser:
    def __init__(self, line: str, out: CommandLine, variables: Variables, depth: int) -> None:
        self.lexer = _Lexer(line, variables)
        self.out, self.depth, self.variables = out, depth, variables
        self.words: list[_Token] = []
        self.redirs: list[tuple[str, _Token]] = []
        self.pipeline: list[Command] = []
        self.parens = 0
        self.cases = 0
        self.functions: list[tuple[str, int, int]] = []  # (name, first command, brace depth)
        self.braces = 0
        self.header = ""  # `for`, `select` or `case` while their words are read

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
                        self.header = ""  # a `case` pattern ended; its command follows
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
                self.header = text
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
        header, self.header = self.header, self.header if pipe else ""
        if header in ("for", "select"):
            self._loop(words)
        nested = [sub for token in words for sub in token.subs]
        nested += [sub for _, token in redirs for sub in (*token.subs, *token.body_subs)]
        if not header:  # `test -v 'a[$(cmd)]'`: the subscript of a name bash reads runs
            for operand in evaluated_operands([t.text for t in words]):
                inner = self.lexer._sublexer(operand)
                inner._arithmetic(nested, "")
                self.lexer.ok = self.lexer.ok and inner.ok
            nested = list(dict.fromkeys(nested))
        for code in nested:
            self.out.extend(parse_structure(code, depth=self.depth + 1, variables=self.variables))
        assigned: list[str] = []
        while words and _ASSIGN.fullmatch(words[0].text) and words[0].text.index("=") <= words[0].plain:
            if len(words) == 1 and not header:  # `X=v` alone sets X for the rest of the line
                name, _, value = words[0].text.partition("=")
                self.variables.assign(name.rstrip("+"), value)
            if not header:
                assigned.append(words[0].text)
            words = words[1:]
        argv = [t.text for t in words]
        if header or (not argv and not redirs):
            self.out.assignments += assigned
            if not pipe:
                self._end_pipeline()
            return
        redirects = tuple(
            Redirect(op, t.text, t.body if op in ("<<", "<<-") else (t.text if op == "<<<" else "")) for op, t in redirs
        )
        command = Command(
            tuple(argv),
            redirects,
            substitutions=tuple(nested),
            assignments=tuple(assigned),
            open_words=tuple(i for i, t in enumerate(words) if t.open),
        )
        self.out.commands.append(command)
        self.pipeline.append(command)
        if not pipe:
            self._end_pipeline()

    def _loop(self, words: list[_Token]) -> None:
        """`for NAME in WORDS`: NAME takes each word (unknown when one is only known when it runs)."""
        if not words or words[0].quoted or not re.fullmatch(r"[A-Za-z_]\w*", words[0].text):
            return
        values = words[2:] if len(words) > 1 and words[1].text == "in" else None
        known = values is not None and not any(t.open or t.subs for t in values)
        self.variables.loop(words[0].text, tuple(t.text for t in values or ()) if known else None)

    def _end_pipeline(self) -> None:
        if self.pipeline:
            self.out.pipelines.append(self.pipeline)
        self.pipeline = []
