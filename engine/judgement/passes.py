"""Commands a final answer says pass (docs/architecture.md invariants 6 and 9; the file claims are in `claims.py`).

A command is claimed only when it is in backticks, starts with a known runner (or is a local
script, `./run_tests.sh`), and sits in a sentence that says it passed, close to the words that say
so: "`pytest -q` passes", "all tests pass with `make test`", "Everything passes: `make lint`,
`make test`". A sentence in doubt (negated, conditional, future, imperative) or that also reports
a failure or a partial pass claims nothing.
"""

from __future__ import annotations

import re

from arreio.engine.core.prose import blank_code, lines, paths_in, sentences
from arreio.engine.judgement.claims import DOUBT, writing_head

__all__ = ["RUNNERS", "command_claims", "is_command"]

RUNNERS = {
    "pytest",
    "py.test",
    "python",
    "python3",
    "uv",
    "poetry",
    "pdm",
    "hatch",
    "tox",
    "nox",
    "ruff",
    "mypy",
    "pyright",
    "flake8",
    "black",
    "pylint",
    "isort",
    "make",
    "just",
    "npm",
    "yarn",
    "pnpm",
    "npx",
    "bun",
    "deno",
    "node",
    "jest",
    "vitest",
    "tsc",
    "eslint",
    "prettier",
    "cargo",
    "go",
    "mvn",
    "gradle",
    "./gradlew",
    "dotnet",
    "bundle",
    "rake",
    "rspec",
    "phpunit",
    "composer",
    "bash",
    "sh",
    "ctest",
    "cmake",
    "ninja",
    "swift",
    "mix",
    "stack",
    "cabal",
    "pre-commit",
    "shellcheck",
    "terraform",
    "docker",
    "helm",
    "kubectl",
    "zig",
    "gcc",
    "clang",
    "javac",
    "java",
    "pip",
    "coverage",
    "bazel",
    "meson",
    "sbt",
    "lein",
    "elixir",
    "dart",
    "flutter",
    "R",
    "Rscript",
    "julia",
}
_PASS = re.compile(
    r"\bpass(?:es|ed|ing)?\b(?!\s*(?:`|the\b|a\b|an\b|it\b|them\b|through\b|along\b|to\b|on\b|as\b|via\b|into\b|"
    r"over\b|down\b|back\b|-))"
    r"|\bsucceed(?:s|ed)?\b|\bsuccessful(?:ly)?\b|\bgreen\b|\bcleanly\b"
    r"|\b(?:is|are|was|were|comes back|came back|runs?|ran)\s+clean\b"
    r"|\bexit(?:s|ed)?\s+(?:with\s+)?(?:code\s+|status\s+)?0\b|\bexit code 0\b|\breturn(?:s|ed)?\s+0\b"
    r"|\bno (?:errors?|failures?|issues?|problems?)\b",
    re.IGNORECASE,
)
# A sentence that also reports a failure, a partial pass or an earlier state is no pass claim.
_NOT_ALL = re.compile(
    r"\bfail(?:s|ed|ing|ures?)?\b|\b(?<!no )errors?\b|\bbroken\b|\bflaky\b|\bxfail\w*\b|\bexcept\b|\bapart from\b|"
    r"\bother than\b|\baside from\b|\bbut\b|\bmostly\b|\balmost\b|\bpartially\b|\bpartly\b|\bsome\b|\bmost\b|"
    r"\bstill\b|\bunrelated\b|\bto pass\b|\btimed? ?out\b|\bred\b|\bregressions?\b|\bused to\b",
    re.IGNORECASE,
)
_ENV = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")
_TICKED = re.compile(r"`([^`\n]+)`")


def command_claims(text: str) -> list[str]:
    """Commands the answer says pass, in order, each once ("Ran `make test` and it passes" → make test;
    "`pytest` should pass" → nothing; "`test_login` passes" → nothing: not a command)."""
    found: list[str] = []
    for line in lines(text, writing_head):
        for sentence in sentences(line.text):
            plain = blank_code(sentence)
            if DOUBT.search(plain) or _NOT_ALL.search(plain) or not _PASS.search(plain):
                continue
            marks = [(m.start(), m.end()) for m in _PASS.finditer(plain)]
            spans = [(m.start(), m.end(), m.group(1).strip().removeprefix("$ ")) for m in _TICKED.finditer(sentence)]
            spans = [span for span in spans if is_command(span[2])]
            for start, end, command in spans:
                if command not in found and _said_to_pass(plain, start, end, marks, spans):
                    found.append(command)
    return found


_ENGLISH_WORD = re.compile(r"[A-Za-z]+")
_JOINERS = {"and", "both", "all", "as", "well", "plus", "now", "also"}
_BEFORE_COMMAND = {"with", "using", "via", "running", "under", "in", "on", "by", "and", "for"}


def _said_to_pass(
    plain: str, start: int, end: int, marks: list[tuple[int, int]], commands: list[tuple[int, int, str]]
) -> bool:
    """The command is what passed: the pass words follow it closely ("`pytest -q` now passes", "Ran
    `make test` and it passes") or it follows them ("all tests pass with `make test`", "Everything
    passes: `make lint`, `make test`") — not a command merely mentioned in the sentence ("Added
    `pytest` to the dev dependencies so `make test` passes" claims `make test` only)."""
    for at, to in marks:
        words = _ENGLISH_WORD.findall(plain[end:at]) if at >= end else None
        another = any(end <= s < at for s, _, _ in commands)  # then only a list joins them: "`a` and `b` pass"
        if words is not None and len(words) <= 5 and (not another or all(w.lower() in _JOINERS for w in words)):
            return True
        between = _ENGLISH_WORD.findall(plain[to:start]) if to <= start else None
        if between is not None and (not between or len(between) == 1 and between[0].lower() in _BEFORE_COMMAND):
            return True
    return False


def is_command(text: str) -> bool:
    """A shell command a test or build runner runs: its first word (after `VAR=x`) is a known runner or
    a local script (`./run_tests.sh`); a path alone is a file, not a command."""
    words = _ENV.sub("", text).split()
    if not words:
        return False
    if words[0] in RUNNERS and len(words) > 1:
        return True  # `python3 a.py` is a runner and its script, not a file named "python3 a.py"
    if paths_in(f"`{text}`") == [(1, text)]:
        return False
    return words[0] in RUNNERS or words[0].startswith("./")
