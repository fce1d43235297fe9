"""The phrasing table the offline model reads a goal with: which words make a named file an input,
an output, a file to extend, or a file it must leave alone.

This is data, not code, so a new phrasing is one row here and one row in
`tests/providers/test_offline_policy.py`. It is a Python table rather than a YAML file beside this
module: a data file would have to be declared as package data to ship in a wheel (pyproject.toml),
the offline model is imported on every `--offline` start (a parse at import is a cost for nothing),
and a typo here fails `ruff`/import at once instead of at the first run.

Roles a file can get (see `offline_goal.py` for how they are combined):
  read    read it, never write it
  write   create it (only when it did not exist before the run)
  append  add a marked section at its end (create it when absent); what was there is never rewritten
  change  the goal asks to edit, rewrite, move or delete it: the offline model cannot do that
          honestly, so it reads the file and says it left it as it was
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Role = Literal["read", "write", "append", "change"]


class Verb(NamedTuple):
    """What a verb does to the file that is its object, and to a file after a destination word
    (`to`, `into`, `as`, `in`, …) it governs. A file after a source word (`of`, `from`, …) is read."""

    object: Role
    destination: Role


_READING = Verb("read", "read")
_MAKING = Verb("write", "write")  # write b.md, save it as b.md
_TURNING = Verb("read", "write")  # summarise a.md into b.md: the object is the source
_APPENDING = Verb("read", "append")  # append a.md to b.md: the object is what is added
_ADDING = Verb("write", "append")  # add docs/new.md · add a section to b.md
_EXTENDING = Verb("append", "append")  # update b.md · extend the table in b.md
_CHANGING = Verb("change", "change")  # edit, rewrite, move or delete: never done offline

# lemma → role. Inflections (writes, writing, written, …) come from `inflections`.
# Vocabulary, kept filled as written: the formatter would put one word to a line.
# fmt: off
VERBS: dict[str, Verb] = {
    **dict.fromkeys(
        ("read", "review", "check", "inspect", "study", "examine", "scan", "parse", "analyse", "analyze",
         "consider", "compare", "skim", "browse", "see", "use", "consult", "view", "load", "audit", "survey",
         "understand", "find", "search", "grep", "count", "open", "answer", "tell", "explain", "leave", "keep",
         "preserve", "protect", "ignore", "skip"),
        _READING,
    ),
    **dict.fromkeys(
        ("write", "save", "create", "produce", "generate", "output", "put", "place", "store", "record", "make",
         "draft", "compose", "prepare", "build", "emit", "deliver", "start"),
        _MAKING,
    ),
    **dict.fromkeys(
        ("summarise", "summarize", "convert", "translate", "turn", "condense", "distil", "distill", "extract",
         "collect", "gather", "compile", "copy", "list", "tabulate", "document", "describe", "outline",
         "digest", "merge", "combine", "concatenate", "export", "dump", "render", "report", "go", "note",
         "jot", "sum", "transcribe", "paraphrase"),
        _TURNING,
    ),
    **dict.fromkeys(("append", "insert", "attach"), _APPENDING),
    **dict.fromkeys(("add",), _ADDING),
    **dict.fromkeys(("update", "extend", "amend", "expand", "augment", "enrich", "continue"), _EXTENDING),
    **dict.fromkeys(
        ("edit", "modify", "change", "fix", "refactor", "rewrite", "replace", "overwrite", "delete", "remove",
         "rename", "move", "clean", "reformat", "truncate", "wipe", "prepend", "patch",
         "correct", "tidy", "touch", "alter", "erase", "reorder", "sort", "restructure", "revise", "redo"),
        _CHANGING,
    ),
}

# Several words acting as one verb, matched before single words.
PHRASES: dict[str, Verb] = {
    "go through": _READING, "goes through": _READING, "going through": _READING, "go over": _READING,
    "look at": _READING, "look into": _READING, "look over": _READING, "look through": _READING,
    "read through": _READING, "take a look at": _READING, "have a look at": _READING, "read up on": _READING,
    "leave alone": _READING, "fill in": _CHANGING, "clean up": _CHANGING, "get rid of": _CHANGING,
    "write down": _MAKING, "write up": _MAKING, "write out": _MAKING, "set up": _MAKING,
}

# Inflections regular rules get wrong. Each maps to its lemma.
IRREGULAR: dict[str, str] = {
    "wrote": "write", "written": "write", "writing": "write", "made": "make", "built": "build",
    "putting": "put", "kept": "keep", "left": "leave", "went": "go", "gone": "go", "goes": "go", "found": "find",
    "saw": "see", "seen": "see", "told": "tell", "emitted": "emit", "emitting": "emit", "jotted": "jot",
    "summed": "sum", "summing": "sum", "redone": "redo",
}

# Past participles that are not the -ed form: "b.md should be written", "it is read".
PARTICIPLES = frozenset({"written", "made", "built", "kept", "left", "gone", "found", "seen", "told", "put", "read",
                         "redone", "emitted", "jotted", "summed"})

# A destination word puts the file in the governing verb's `destination` role. `in` is weak: "the TODOs
# in notes.md" names a place to read, so a weak destination yields to a strong one of the same verb.
DESTINATIONS: dict[str, bool] = {"to": True, "into": True, "as": True, "onto": True, "at": True, "in": False,
                                 "inside": False, "within": False, "under": False}

# A source word makes the file after it an input, whatever the verb.
SOURCES = ("of", "from", "with", "using", "about", "on", "for", "than", "against", "via", "by", "out of",
           "based on", "according to", "such as", "as well as", "like", "per", "across", "between")

# Before a verb (within three words) or a file: what follows is not to be written.
NEGATIONS = ("not", "never", "without", "nor", "no", "n't", "except", "but not", "rather than", "instead of")

# "b.md should be created": the file before an auxiliary + participle is the verb's object.
AUXILIARIES = ("is", "are", "be", "been", "being", "was", "were", "get", "gets", "got")

# A verb form right after one of these is a noun ("a list", "the output", "its summary").
DETERMINERS = ("a", "an", "the", "this", "that", "these", "those", "its", "their", "our", "your", "my",
               "his", "her", "each", "every", "some", "any", "another", "one", "which", "what")

# A line label ("Outputs:", "## Deliverables", "**Input files**") gives the files under it a role when
# their own sentence has no verb. A heading keeps it until the next heading; a "Label:" line keeps it
# over the bullet lines that follow.
LABELS: dict[str, Role] = {
    **dict.fromkeys(("output", "outputs", "output file", "output files", "deliverable", "deliverables",
                     "target", "targets", "target file", "target files", "write", "write to", "save to",
                     "files to write", "files to create", "create", "produce", "result file", "results file",
                     "new files", "new file"), "write"),
    **dict.fromkeys(("input", "inputs", "input file", "input files", "source", "sources", "source files",
                     "read", "files to read", "context", "reference", "references", "see also", "background",
                     "files", "given"), "read"),
    **dict.fromkeys(("append to", "files to update", "update", "updates", "extend"), "append"),
    **dict.fromkeys(("do not touch", "don't touch", "read-only", "read only", "leave alone", "keep as is",
                     "protected", "never change"), "read"),
}
# fmt: on

# Existing files the offline model may extend with a marked section: text documents, where an added
# section cannot break what was there. Code and data files are never extended.
APPENDABLE_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".rst", ".adoc", ".org", ".log"})


def inflections(lemma: str) -> set[str]:
    """The regular forms of a lemma (its -s, -ed and -ing forms) plus the irregular ones listed above."""
    forms = {lemma}
    if lemma.endswith("e"):
        forms |= {lemma + "s", lemma + "d", lemma[:-1] + "ing"}
    elif lemma.endswith("y") and lemma[-2:-1] not in "aeiou":
        forms |= {lemma[:-1] + "ies", lemma[:-1] + "ied", lemma + "ing"}
    elif lemma.endswith(("s", "x", "sh", "ch", "z")):
        forms |= {lemma + "es", lemma + "ed", lemma + "ing"}
    else:
        forms |= {lemma + "s", lemma + "ed", lemma + "ing"}
    return forms | {form for form, base in IRREGULAR.items() if base == lemma}


def verb_forms() -> dict[str, tuple[str, Verb]]:
    """Every surface form (single words and phrases) → (lemma, verb). Phrases of several words are
    inflected on their first word ("goes through", "looked at")."""
    table: dict[str, tuple[str, Verb]] = {}
    for lemma, verb in VERBS.items():
        for form in inflections(lemma):
            table.setdefault(form, (lemma, verb))
    for phrase, verb in PHRASES.items():
        head, _, rest = phrase.partition(" ")
        for form in inflections(head):
            table.setdefault(f"{form} {rest}", (phrase, verb))
    return table
