"""The work log's digest skips the definitions scan for text holding none of its words and
the headings scan for text without `#`; the digest must be what the full scans give, on any text."""

from __future__ import annotations

import random

from arreio.engine.context import pruning
from arreio.engine.core.messages import ToolCallPart

CALL = ToolCallPart(id="t1", name="read_file", arguments={"path": "x.py"})
PIECES = [
    "def",
    "class",
    "fn",
    "func",
    "function",
    "interface",
    "type",
    "struct",
    "async",
    "x",
    "# h",
    "## two",
    "\n",
    " ",
    "\t",
    "1\t",
    "foo",
    "Bar_9",
    "(",
    ":",
    "#",
    "Def",
    "CLASS",
    "    ",
]


def _full(content: str) -> str:
    lines = content.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")[:140]
    parts = [f"ok, {len(lines)} lines / {len(content)} chars"]
    names = list(dict.fromkeys(pruning._DEFS.findall(content)))
    if names:
        parts.append("defines " + ", ".join(names[:25]) + (f" (+{len(names) - 25} more)" if len(names) > 25 else ""))
    heads = pruning._HEADING.findall(content)
    if heads:
        parts.append("headings " + "; ".join(h.strip()[:50] for h in heads[:8]))
    if first:
        parts.append(f"first line: {first}")
    return "; ".join(parts)


def test_the_digest_equals_the_full_scans() -> None:
    rng = random.Random(23)
    texts = [
        "plain text, nothing defined\n" * 40,
        "def handler(event):\n    pass\n# Title\n",
        "struct S {}\nfn main() {}",
    ]
    texts += [
        "".join(rng.choice(PIECES) + rng.choice([" ", "", "\n"]) for _ in range(rng.randint(0, 30)))
        for _ in range(5000)
    ]
    for text in texts:
        assert pruning.digest(CALL, text, False) == _full(text), repr(text)
    assert "defines handler" in pruning.digest(CALL, texts[1], False) and "headings Title" in pruning.digest(
        CALL, texts[1], False
    )
