"""Shell expansions whose insides bash evaluates, read for the code they run: `${…}` parameter
expansions, `$((…))` and `$[…]` arithmetic, array subscripts, and the words bash itself reads as
arithmetic or as a variable name (`test -v 'a[…]'`, `[[ X -eq Y ]]`, `let`, `unset 'a[…]'`).

Code hides in all of them: `${x:-$(cmd)}`, `${x/$(cmd)/y}`, `${x:-`cmd`}`, `$(( $(cmd) ))`,
`${a[$(cmd)]}`; and since arithmetic evaluates a variable's value as an expression — subscripts and
their `$(…)` included — `x='a[$(cmd)]'; echo $((x))` and `test -v 'a[$(cmd)]'` run `cmd` too.
`ExpansionReader` (the half of the lexer that reads expansions) collects every such `$(…)` as a
substitution of its word, like one spelled plainly, so deny rules see the command and no allow rule
covers the line. Where what runs cannot be known from the line it clears `ok` (the line is not
understood, and no allow rule covers it): `${!x}` (the value names another variable, subscript and
all), `${x@P}` (prompt expansion runs the `$(…)` in the value), an operator it does not know, and
arithmetic that reads a variable the line sets to text not known before it runs (`for x in $(…)`,
`${x:=…}`). A variable the line sets to known text is read as arithmetic itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from arreio.engine.walls.work_budget import spend

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SPECIAL_PARAMETERS = frozenset("@*#?$!-0123456789")
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!-]")
# Vocabulary, kept filled as written: the formatter would put one word to a line.
# fmt: off
_WORD_OPERATORS = (":-", ":=", ":?", ":+", "-", "=", "?", "+", "##", "#", "%%", "%", "//", "/#", "/%", "/",
                   "^^", "^", ",,", ",")
# fmt: on
_TRANSFORMS = frozenset("QEAaKkUuL")  # `${x@Q}`…; not `@P`: prompt expansion runs the `$(…)` in the value
_INTEGER = re.compile(r"\s*[-+]?\d+\s*")
_LOOPED = re.compile(r"\b(?:for|select)\s+([A-Za-z_]\w*)")
_DEFAULTED = re.compile(r"\$\{([A-Za-z_]\w*):?=")
_SUBSCRIPTED = re.compile(r"[A-Za-z_]\w*\[")
_COMPARISONS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# Vocabulary, kept filled as written: the formatter would put one word to a line.
# fmt: off
_NAMES_READ = frozenset({"unset", "read", "declare", "typeset", "local", "export", "readonly", "mapfile",
                         "readarray", "printf", "wait", "getopts", "test", "[", "[["})
# fmt: on
MAX_NESTING = 64  # `$( $( … ) )`, `${x:-${…}}`, `$(( $(( … )) ))` levels read; deeper is not understood


class Variables(dict[str, str]):
    """What a line sets, as far as reading it needs: NAME → value for `NAME=value` (a later `$NAME`
    takes it); a `for`/`select` variable's values when its list is literal (`candidates`); names set to
    text not known before the line runs (`unknown`: `${x:=…}`, a loop over `$(…)` or a glob); and every
    name a loop sets (`looped`, found before parsing), unknown until its header has been read."""

    def __init__(self, known: dict[str, str] | None = None, line: str = "") -> None:
        super().__init__(known or {})
        self.looped = set(_LOOPED.findall(line))
        self.unknown = set(_DEFAULTED.findall(line))
        self.candidates: dict[str, tuple[str, ...]] = {}

    def assign(self, name: str, value: str) -> None:
        self[name] = value
        self.candidates.pop(name, None)

    def loop(self, name: str, values: tuple[str, ...] | None) -> None:
        """`for NAME in VALUES`: None when a value is only known when the line runs."""
        self.pop(name, None)
        if values is None:
            self.unknown.add(name)
        else:
            self.candidates[name] = values

    def possible(self, name: str) -> tuple[str, ...] | None:
        """The values `name` may hold, () for one the line does not set, None when not known."""
        if name in self.unknown:
            return None
        if name in self.candidates:
            return self.candidates[name]
        if name in self.looped:
            return None
        return (self[name],) if name in self else ()


def evaluated_operands(argv: Sequence[str]) -> list[str]:
    """The words of a command that bash reads as arithmetic or as a variable name whose subscript it
    evaluates: `test -v W`, `[[ A -eq B ]]`, `let EXPR…`, `unset 'a[…]'`, `read 'a[…]'`…"""
    program = argv[0] if argv else ""
    out: list[str] = []
    if program in ("test", "[", "[["):
        out += [argv[k + 1] for k, word in enumerate(argv[:-1]) if word in ("-v", "-R")]
    if program == "[[" or argv[-1:] in (["]]"], ("]]",)):  # `&&` inside `[[ … ]]` splits it in two
        out += [
            argv[k + d]
            for k, word in enumerate(argv)
            if word in _COMPARISONS
            for d in (-1, 1)
            if 0 <= k + d < len(argv)
        ]
    if program == "let":
        out += argv[1:]
    if program in _NAMES_READ:
        out += [word for word in argv[1:] if _SUBSCRIPTED.match(word)]
    return out


class ExpansionReader:
    """The half of the shell lexer that reads expansions (module docstring). It works on the lexer's
    text `s` at position `i`, clears `ok` on what it does not understand, and marks the word being read
    `_open` (only known when it runs)."""

    s: str
    i: int
    ok: bool
    nesting: int
    variables: Variables
    _open: bool
    _bare: list[str]
    _names: list[str] | None  # while an arithmetic expression is read: the variables it reads
    _in_double: bool  # inside "…" or a here-document body: single quotes are text there
    _evaluated: set[tuple[str, str]]  # (name, value) pairs read as arithmetic once already

    # the lexer's own readers
    def _double(self, out: list[str], subs: list[str], end: str | None) -> None: ...
    def _balanced(self) -> str: ...
    def _ansi_c(self) -> str: ...
    def _sublexer(self, text: str) -> ExpansionReader: ...

    def _live(self, c: str, out: list[str], subs: list[str]) -> None:
        """One character outside single quotes: `$…` and backticks expand, the rest is literal."""
        s = self.s
        if c == "`":
            end = self.i + 1
            while end < len(s) and s[end] != "`":
                end += 2 if s[end] == "\\" else 1
            if end >= len(s):
                self.ok = False
            inner = s[self.i + 1 : end].replace("\\`", "`")
            subs.append(inner)
            out.append(f"`{inner}`")
            self.i = end + 1
            self._open = True
        elif s.startswith("$((", self.i) and self._arithmetic_expansion(out, subs):
            self._open = True
        elif s.startswith("$[", self.i):  # the old spelling of $((…))
            start, self.i, self._open = self.i, self.i + 2, True
            if self._arithmetic(subs, "]") == "]":
                self.i += 1
            out.append(s[start : self.i])
        elif s.startswith("$(", self.i):
            self.i += 2
            inner = self._balanced()
            subs.append(inner)
            out.append(f"$({inner})")
            self._open = True
        elif s.startswith("${", self.i):
            self._parameter(out, subs)
        elif c == "$" and (m := NAME.match(s, self.i + 1)) is not None:
            self._read(m.group())
            self._open = self._open or m.group() not in self.variables
            out.append(self.variables.get(m.group(), "$" + m.group()))
            self.i = m.end()
        else:
            if c == "$" and s[self.i + 1 : self.i + 2] in SPECIAL_PARAMETERS:
                self._open = True  # `$1`, `$@`, `$*`, `$?`…: the line's own arguments and state
            self._bare.append(c)
            out.append(c)
            self.i += 1

    def _read(self, name: str) -> None:
        if self._names is not None:
            self._names.append(name)

    # -- arithmetic ------------------------------------------------------------------------------
    def _arithmetic_expansion(self, out: list[str], subs: list[str]) -> bool:
        """`$((…))` at `i`; False (nothing read) when it is not arithmetic: bash reads `$((cmd) …)`
        as `$( (cmd) …)`, a command substitution."""
        start, ok, found = self.i, self.ok, []
        self.i += 3
        stop = self._arithmetic(found, ")")
        if stop == ")" and not self.s.startswith("))", self.i):
            # read again as code: what was read counts against the budget (nested, it would double per level)
            read, self.i, self.ok = self.i - start, start, ok and spend(self.i - start)
            if not self.ok:
                self.i += read
            return not self.ok
        self.i += 2 if stop else 0
        self.ok = self.ok and bool(stop)
        subs += found
        out.append(self.s[start : self.i])
        return True

    def _arithmetic(self, subs: list[str], stops: str) -> str:
        """Reads an arithmetic expression from `i` up to the first of `stops` outside parentheses and
        brackets (not consumed) and returns it ("" at the end of the text); every `$(…)` in it goes to
        `subs`, and every variable it reads is read as arithmetic in turn (`_evaluate`)."""
        if self.nesting >= MAX_NESTING:
            self.ok, self.i = False, len(self.s)
            return ""
        self.nesting += 1
        outer, self._names = self._names, []
        try:
            stop = self._expression(subs, stops)
            for name in dict.fromkeys(self._names):
                self._evaluate(name, subs)
            return stop
        finally:
            self._names = outer
            self.nesting -= 1

    def _expression(self, subs: list[str], stops: str) -> str:
        s, depth, scratch = self.s, 0, []
        while self.i < len(s):
            c = s[self.i]
            if depth == 0 and c in stops:
                return c
            if c in "([":
                depth += 1
            elif c in ")]":
                depth = max(0, depth - 1)
            elif c == "\\":
                self.i += 1
            elif c == '"':
                self.i += 1
                self._double(scratch, subs, '"')
                continue
            elif c == "'":  # not arithmetic, but the `$(…)` in it runs before bash says so
                self._quoted_text(subs)
                continue
            elif c in "$`":
                self._live(c, scratch, subs)
                continue
            elif c.isdigit():  # `10`, `0x1f`, `2#101`: a number, not a name
                while self.i < len(s) and (s[self.i].isalnum() or s[self.i] in "#_@"):
                    self.i += 1
                continue
            elif (m := NAME.match(s, self.i)) is not None:
                self._read(m.group())
                self.i = m.end()
                continue
            self.i += 1
        return ""

    def _evaluate(self, name: str, subs: list[str]) -> None:
        """Arithmetic reads `name`'s value as an expression: `x='a[$(cmd)]'; echo $((x))` runs cmd."""
        values = self.variables.possible(name)
        if values is None:
            self.ok = False
            return
        for value in values:
            if _INTEGER.fullmatch(value) or (name, value) in self._evaluated:
                continue
            self._evaluated.add((name, value))
            if not spend(len(value)):
                self.ok = False
                return
            inner = self._sublexer(value)
            inner._arithmetic(subs, "")
            self.ok = self.ok and inner.ok

    def _quoted_text(self, subs: list[str]) -> None:
        """Single quotes at `i` where they do not quote (`"${x:-'…'}"`, arithmetic): the `$(…)` in them runs."""
        end = self.s.find("'", self.i + 1)
        if end < 0:
            self.ok, end = False, len(self.s)
        inner = self._sublexer(self.s[self.i + 1 : end])
        inner._double([], subs, None)
        self.ok = self.ok and inner.ok
        self.i = end + 1

    # -- ${…} -----------------------------------------------------------------------------------
    def _parameter(self, out: list[str], subs: list[str]) -> None:
        """`${…}` at `i`: a plain `${NAME}` set on the line takes its value; any other is open."""
        start = self.i
        if self.nesting >= MAX_NESTING:
            self.ok, self.i = False, len(self.s)
        else:
            self.nesting += 1
            try:
                name = self._parameter_body(subs)
            finally:
                self.nesting -= 1
            if name is not None and name in self.variables:
                out.append(self.variables[name])
                return
        self._open = True
        out.append(self.s[start : self.i])

    def _parameter_body(self, subs: list[str]) -> str | None:
        """Reads `${…}` from `i` past its `}`; the name when it is a plain `${NAME}`, else None."""
        s = self.s
        self.i += 2
        if s[self.i : self.i + 1] in (" ", "\t", "\n", "|"):  # `${ cmd; }`, `${| cmd; }`: code (bash 5.3)
            subs.append(self._braced_code())
            return None
        prefix = s[self.i] if s[self.i : self.i + 1] in ("#", "!") else ""
        m = _PARAMETER.match(s, self.i + len(prefix))
        if prefix and m is None:  # `${#}`, `${!}`: the parameter itself
            prefix, m = "", _PARAMETER.match(s, self.i)
        if m is None:
            self.ok = False
            return self._to_close(subs)
        name, self.i = m.group(), m.end()
        self._read(name)
        subscript = ""
        if s.startswith("[", self.i) and NAME.fullmatch(name):
            at = self.i + 1
            self.i = at
            if self._arithmetic(subs, "]") != "]":
                self.ok = False
                return None
            subscript, self.i = s[at : self.i], self.i + 1
        if prefix == "!":
            listing = (subscript in ("@", "*") and s.startswith("}", self.i)) or (
                not subscript and s[self.i : self.i + 2] in ("*}", "@}")
            )
            if not listing:
                self.ok = False  # indirection: the value names another variable, subscript and all
            return self._to_close(subs)
        if s.startswith("}", self.i):
            self.i += 1
            return None if prefix or subscript else name
        if prefix:
            self.ok = False  # `${#x…}` with more than a name is not bash
            return self._to_close(subs)
        if s.startswith(":", self.i) and s[self.i + 1 : self.i + 2] not in ("-", "=", "?", "+"):  # `${x:off:len}`
            self.i += 1
            if self._arithmetic(subs, ":}") == ":":
                self.i += 1
                self._arithmetic(subs, "}")
            return self._to_close(subs)
        if s.startswith("@", self.i) and s[self.i + 2 : self.i + 3] == "}":
            if s[self.i + 1] not in _TRANSFORMS:
                self.ok = False
            self.i += 3
            return None
        operator = next((op for op in _WORD_OPERATORS if s.startswith(op, self.i)), None)
        if operator is None:
            self.ok = False
        else:
            self.i += len(operator)
            if operator in (":=", "="):
                self.variables.unknown.add(name)
        return self._to_close(subs)

    def _to_close(self, subs: list[str]) -> None:
        """Reads the word of a `${…}` up to the `}` that closes it (quotes and expansions skipped whole,
        their code collected); None, for `_parameter_body`."""
        s, scratch = self.s, []
        while self.i < len(s):
            c = s[self.i]
            if c == "}":
                self.i += 1
                return None
            if c == "\\":
                self.i += 2
            elif c == "'" and self._in_double:
                self._quoted_text(subs)
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.ok, end = False, len(s)
                self.i = end + 1
            elif c == '"':
                self.i += 1
                self._double(scratch, subs, '"')
            elif s.startswith("$'", self.i) and not self._in_double:
                self._ansi_c()
            elif c in "$`":
                self._live(c, scratch, subs)
            else:
                self.i += 1
        self.ok = False
        return None

    def _braced_code(self) -> str:
        """The code of `${ cmd; }` up to its closing `}` word."""
        if self.s.startswith("|", self.i):
            self.i += 1
        start, depth = self.i, 0
        while (token := self.next()) is not None:  # type: ignore[attr-defined]
            if token.kind == "word" and not token.quoted and token.text in ("{", "}"):
                if token.text == "}" and depth == 0:
                    return self.s[start : self.i - 1]
                depth += 1 if token.text == "{" else -1
        self.ok = False
        return self.s[start:]
