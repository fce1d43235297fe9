"""What a final answer claims, read from its words (docs/architecture.md invariants 6 and 9).

A false alarm costs more than a miss, so the registry is closed and any doubt backs off:
- a FILE is claimed only as the object of a first-person writing verb — wrote/rewrote/created/
  saved/generated/updated X ("Created a.md and b.md", "Wrote `a.md`, `b.md`", "Files created: a.md"),
  "saved/wrote … to/into/as/in X", or in the passive ("X written", "X was updated", "output saved to
  X"), or as the leading path of a bullet under a writing heading ("Created the following files:");
- a COMMAND is claimed only in backticks, with a known runner first (`pytest`, `make test`, …), in a
  sentence that says it passed (`pytest -q` passes; all tests pass with `make test`).
Nothing else counts: files after from/of/using/based on/with/for/like/next to…, lists of sources or
inputs, negated, conditional, future, placeholder or question clauses, quoted text, code blocks,
tables, "next steps" sections — and any language but English (no claims, so nothing can fail).
`prose.py` turns the answer into clauses and tokens; this module recognises the file shapes and
`passes.py` the command ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arreio.engine.core.prose import Token, blank_code, clauses, lines, paths_in, tokens

__all__ = ["DOUBT", "Claim", "file_claims", "paths_in", "writing_head"]


@dataclass(frozen=True)
class Claim:
    """One claim of the answer, checked: `kind` "file" | "command" | "tool" | "read" | "list" |
    "search" | "web" | "run"; `why` completes the sentence that starts with `subject`."""

    kind: str
    subject: str
    kept: bool
    why: str


# Vocabulary, kept filled as written: the formatter would put one word to a line.
# fmt: off
ACTIVE = {"wrote", "rewrote", "created", "saved", "generated", "updated"}
# Verbs that write into their destination only ("added two lines to TODO.md"): their direct object is
# what went in, not a file ("added `foo.py` to .gitignore" wrote .gitignore, not foo.py).
INTO = {"added", "appended", "inserted"}
PARTICIPLES = {"written", "rewritten", "created", "saved", "generated", "updated"}
_HAVE = {"have", "had", "'ve"}
_PRONOUNS = {"i", "we", "i've", "we've"}
# Between the subject and the verb ("I have now also created"); none of these changes who acted.
_ADVERBS = {"also", "then", "now", "just", "successfully", "finally", "first", "additionally", "quickly",
            "manually", "carefully", "simply", "fully", "properly", "newly", "accordingly", "both", "only"} | _HAVE
# Words that open a clause without being its subject ("Done, wrote a.md", "Next, I created b.md").
_LEADS = {"done", "ok", "okay", "sure", "so", "then", "next", "finally", "first", "also", "additionally",
          "lastly", "afterwards", "now", "here", "summary", "changes", "result", "results", "update", "overall",
          "great", "alright", "all", "and", "outputs", "output", "artifacts", "deliverables", "finished", "complete"}
# A label noun before a participle at the start of a clause makes a heading: "Files created: a.md".
_LABELS = {"file", "files", "output", "outputs", "artifact", "artifacts", "document", "documents", "docs",
           "report", "reports", "deliverable", "deliverables", "new"}
# What may stand between a verb and its direct object ("Created a new file called a.md:").
_OBJECT_FILLER = {
    "a", "an", "the", "new", "file", "files", "called", "named", "both", "two", "three", "four", "five", "several",
    "my", "our", "this", "these", "initial", "basic", "small", "simple", "short", "minimal", "fresh", "single",
    "separate", "dedicated", "helper", "script", "scripts", "module", "modules", "test", "tests", "unit", "config",
    "configuration", "document", "documentation", "doc", "docs", "note", "notes", "report", "summary", "page",
    "markdown", "python", "json", "csv", "yaml", "toml", "text", "html", "output", "release", "draft", "final",
    "changelog", "readme", "plan", "index", "main", "data", "results", "requested", "required", "package", "class",
    "component", "workflow", "template", "fixture", "migration", "stylesheet", "schema", "manifest", "dockerfile",
    "makefile", "guide", "tutorial", "spec", "specification", "license", "entry", "point", "dataset", "chart",
    "diagram", "image", "figure", "table", "spreadsheet", "notebook", "log", "example", "sample", "demo",
}
_HEAD_OBJECT = _OBJECT_FILLER | {"these", "following", "and"}
_DESTINATIONS = {"to", "into", "as", "in", "at", "under", "inside", "onto"}
_DESTINATION_FILLER = {"a", "an", "the", "new", "file", "files", "called", "named", "my", "our", "this"}
# A path after one of these is a source, a comparison or a pointer, never what was written.
_BLOCKERS = {
    "from", "of", "using", "use", "uses", "used", "based", "with", "against", "next", "like", "than", "for", "about",
    "after", "following", "per", "via", "by", "alongside", "beside", "besides", "except", "without", "instead",
    "rather", "other", "apart", "similar", "matching", "mirroring", "compared", "versus", "vs", "cf", "see",
    "referencing", "reference", "references", "referenced", "link", "links", "linked", "linking", "pointing",
    "points", "pointer", "import", "imports", "importing", "imported", "reading", "read", "drawing", "drawn",
    "derived", "extracted", "copied", "copy", "taken", "sourced", "inspired", "modeled", "modelled", "according",
    "since", "because", "while", "when", "where", "whereas", "until", "before", "unlike", "including", "include",
    "includes", "that", "which", "who", "whose", "mention", "mentions", "mentioned", "mentioning", "path", "paths",
    "instructed", "described", "specified", "asked", "shown", "documented", "explained", "defined", "listed",
    "outlined", "suggested", "or", "its", "their", "alias", "symlink", "redirect", "mirror",
}
_SEPARATORS = {",", "&", "/", "+"}
_AND = {"and", "also", "plus"}
# A listed path followed by one of these starts a new clause: it is a subject, not an object.
_SUBJECT_VERBS = {
    "was", "were", "is", "are", "has", "have", "had", "stays", "stayed", "remains", "remained", "got", "gets",
    "looks", "seems", "provides", "provided", "contains", "contained", "lists", "listed", "holds", "held",
    "describes", "shows", "showed", "served", "serves", "says", "said", "does", "did", "still", "already",
    "only", "itself", "keeps", "kept", "needs", "wasn't", "isn't", "didn't", "doesn't",
}
_PASSIVE_AUX = {"was", "were", "been", "got", "'s"}
_POST_AUX = {"was", "were", "has", "have", "been", "now", "also", "successfully", "all", "both", "just", "newly",
             "and", "is", "are"}
_AS_INPUT = {"used", "read", "as", "input", "inputs", "source", "sources", "consulted", "reference"}
_SUBJECT_FILLER = {"the", "file", "files", "new", "both", "output", "outputs", "all", "artifact", "artifacts",
                   "report", "a", "an"}
_DOMAINS = {"com", "org", "net", "io", "dev", "ai", "co", "edu", "gov", "uk", "de", "fr", "info", "biz", "me",
            "us", "eu", "xyz", "cloud", "site", "online", "tech", "app"}
# fmt: on

# Doubt about a whole clause: negation, condition, future or wish, a request being quoted, a file
# that is meant to be empty, or one that was there already. Checked with code and paths blanked.
DOUBT = re.compile(
    r"\b(?:not|never|none|nothing|neither|nor|without|unable|cannot|(?<!\d\s)skipped|omitted|untouched|unchanged|"
    r"unmodified|intact|should|could|would|will|shall|might|may|must|can|need|needs|needed|going to|gonna|"
    r"plans? to|planned to|intend|intends|want|wants|wanted|let me|next steps?|next time|later|todo|to-do|"
    r"follow-?ups?|eventually|soon|to be|yet|if|unless|whether|in case|assuming|provided that|otherwise|once|"
    r"whenever|asked|ask|asks|requested|instructions?|instructed|task|goal|prompt|told|already|previously|"
    r"earlier|before|originally|prior|empty|placeholder|blank|stub|suppose|supposed|"
    r"expected|try|tried|attempt|attempted|hope|hopefully|probably|maybe|perhaps|fail|fails|failed to|"
    r"ensure|make sure|verify|confirm|check that|run|please|remember|ago|yesterday|last|(?:19|20)\d\d)\b"
    r"|\bno\b(?!\s+(?:errors?|failures?|warnings?|issues?|problems?|complaints?|findings?|diagnostics?)\b)"
    r"|n't\b|'ll\b|'d\b|\?",
    re.IGNORECASE,
)
# Headings and list heads that open a section whose paths are not outputs.
_SKIP_SECTION = re.compile(
    r"\b(?:sources?|inputs?|references?|read|consulted|used|based on|context|inspected|reviewed|looked at|"
    r"drew on|drawing on|unchanged|untouched|not modified|not changed|next steps?|todo|to-do|follow-?ups?|"
    r"suggestions?|recommendations?|future|ideas?|open questions?|limitations?|caveats?|known issues?|"
    r"remaining|left to do|not done|out of scope|how to|usage|examples?|instructions|verify|try|run it|"
    r"notes? on|risks?|questions?|options?|alternatives?|untested|skipped)\b",
    re.IGNORECASE,
)


def file_claims(text: str) -> list[str]:
    """Files the answer says it wrote, in order, each once ("read a.md and wrote b.md" → b.md;
    "could not write c.md" → nothing; "Wrote NOTES.md, drawing on CHANGELOG.md" → NOTES.md)."""
    found: list[str] = []
    for line in lines(text, writing_head):
        toks = tokens(line.text)
        if line.head == "write" and line.bullet:  # "Created the following files:" then "- a.md — …"
            first = _skip(toks, 0, _SUBJECT_FILLER)
            if first < len(toks) and toks[first].path and not DOUBT.search(blank_code(line.text)):
                found += _path_list(toks, first, drop_subjects=True)
        for clause in clauses(line.text):
            found += _clause_files(clause)
    return [name for i, name in enumerate(found) if name not in found[:i] and _plausible(name)]


def writing_head(text: str) -> str | None:
    """How a heading or list head bears on the lines under it: "write" (its bullets name outputs),
    "skip" (sources, inputs, next steps, anything in doubt) or None (no bearing)."""
    plain = blank_code(text)
    if DOUBT.search(plain) or _SKIP_SECTION.search(plain):
        return "skip"
    toks = tokens(text)
    start = _lead(toks)
    for i, tok in enumerate(toks):
        if (
            tok.word in ACTIVE
            and _first_person(toks, i, start)
            or tok.word in PARTICIPLES
            and _labelled(toks, i, start)
        ):
            # Only an object still to come may follow ("… the following 2 files:"), not "Created these from:".
            rest = [t for t in toks[i + 1 :] if t.punct != ":"]
            if all(
                t.word in _HEAD_OBJECT or t.word in ACTIVE or t.word in PARTICIPLES or t.word.isdigit() for t in rest
            ):
                return "write"
    return None


def _clause_files(clause: str) -> list[str]:
    plain = blank_code(clause)
    if DOUBT.search(plain) or ":" in plain and _SKIP_SECTION.search(plain.split(":", 1)[0]):
        return []  # in doubt, or a list of sources: "Inputs: the updated schema.json"
    toks = tokens(clause)
    start = _lead(toks)
    found: list[str] = []
    for i, tok in enumerate(toks):
        if tok.word in INTO and _first_person(toks, i, start):
            found += _into(toks, i + 1)
            continue
        if tok.word not in ACTIVE and tok.word not in PARTICIPLES:
            continue
        if i > 0 and toks[i - 1].word in ("to", "be", "being", "the", "a", "an", "newly"):
            continue  # "to write", "to be created", "the updated README.md": not an act this answer reports
        if _active(toks, i, start):
            found += _objects(toks, i + 1)
        elif tok.word in PARTICIPLES and _passive(toks, i, start):
            found += _destination(toks, i + 1, limit=2)
    found += _subject_participle(toks, start)
    return found


def _active(toks: list[Token], i: int, start: int) -> bool:
    """The verb at `i` is the speaker's own act: "I (have) wrote/created…", a clause that opens with
    the verb ("Created a.md"), a verb joined to a clause the speaker opened ("Read a.md and wrote b.md"),
    or a label ("Files created: …")."""
    word = toks[i].word
    if word in ("written", "rewritten"):  # a bare participle needs "have": "I have written", "I've written"
        j = i - 1
        while j >= 0 and toks[j].word in _ADVERBS and toks[j].word not in _HAVE:
            j -= 1
        has_aux = j >= 0 and (toks[j].word in _HAVE or toks[j].word in ("i've", "we've"))
        return has_aux and _first_person(toks, i, start) or _labelled(toks, i, start)
    return _first_person(toks, i, start) or _labelled(toks, i, start)


def _first_person(toks: list[Token], i: int, start: int) -> bool:
    j = i - 1
    while j >= start and toks[j].word in _ADVERBS:
        j -= 1
    if j < start:
        return True
    tok = toks[j]
    if tok.word in _PRONOUNS or tok.punct == ":":
        return True
    if tok.word in ("and", "then") or tok.punct in (",", "&"):
        return _speaker_opens(toks, start)
    return False


def _speaker_opens(toks: list[Token], start: int) -> bool:
    """The clause opens with the speaker ("I …") or with a verb of theirs ("Read a.md, …", "Based on")."""
    if start >= len(toks) or not toks[start].word:
        return False
    word = toks[start].word  # "Using the data in a.csv, created b.png": the speaker's act too
    return word in _PRONOUNS or word in ACTIVE or word in _KNOWN_PAST or word.endswith(("ed", "ing"))


_KNOWN_PAST = {
    "read",
    "ran",
    "made",
    "built",
    "found",
    "kept",
    "left",
    "set",
    "put",
    "got",
    "did",
    "took",
    "wrote",
    "went",
    "began",
    "chose",
    "drew",
    "gave",
    "saw",
    "split",
    "cut",
    "fed",
    "dug",
    "caught",
}


def _labelled(toks: list[Token], i: int, start: int) -> bool:
    return (
        i - 1 == start
        and toks[start].word in _LABELS
        or (i - 2 == start and toks[start].word == "new" and toks[start + 1].word in _LABELS)
    )


def _passive(toks: list[Token], i: int, start: int) -> bool:
    """ "… was saved to X", "Output written to X": an auxiliary before the participle, or a short noun
    phrase opening the clause (no verb of its own, at most three words)."""
    j = i - 1
    while j >= start and toks[j].word in ("now", "also", "successfully", "all", "then", "just"):
        j -= 1
    if j >= start and (toks[j].word in _PASSIVE_AUX or toks[j].word == "been"):
        return True
    before = [t for t in toks[:i] if not t.punct]
    return 0 < len(before) <= 3 and all(
        t.word and t.word not in _BLOCKERS and t.word not in _SUBJECT_VERBS for t in before
    )


def _objects(toks: list[Token], k: int) -> list[str]:
    """The direct object of a writing verb starting at `k`, else a destination ("… the notes to X")."""
    j = k
    while j < len(toks) and (toks[j].word in _OBJECT_FILLER or toks[j].word.isdigit() or toks[j].punct == ":"):
        if toks[j].word == "following" and (j == 0 or toks[j - 1].word != "the"):
            break  # "following STYLE.md" is a source; "the following files:" is not
        j += 1
    if j < len(toks) and toks[j].path:
        return _path_list(toks, j, drop_subjects=True)
    return _destination(toks, k, limit=8)


def _destination(toks: list[Token], k: int, limit: int) -> list[str]:
    """The first to/into/as/in/at … X within `limit` words, when nothing between says X is a source."""
    for j in range(k, min(len(toks), k + limit)):
        tok = toks[j]
        if tok.path or tok.code or tok.punct or tok.word in _BLOCKERS or tok.word in _SUBJECT_VERBS:
            return []
        adjective = j > k and toks[j - 1].word in ("the", "a", "an")  # "the cleaned dataset", "the remaining notes"
        if not adjective and (tok.word.endswith("ing") or tok.word.endswith("ed") and tok.word not in _OBJECT_FILLER):
            return []  # a second verb: what follows belongs to it ("… to match settings.toml")
        if tok.word in _DESTINATIONS:
            m = _skip(toks, j + 1, _DESTINATION_FILLER)
            return _path_list(toks, m, drop_subjects=True) if m < len(toks) and toks[m].path else []
    return []


def _into(toks: list[Token], k: int, limit: int = 10) -> list[str]:
    """Where an INTO verb wrote: the X of "… to/into/onto/in X" within `limit` tokens, past what went
    in (words, code, even paths: "added `- [ ]` lines to TODO.md"); nothing when a source word or the
    end of the clause comes first."""
    for j in range(k, min(len(toks), k + limit)):
        tok = toks[j]
        if tok.word in _BLOCKERS or tok.word in _SUBJECT_VERBS or tok.punct in (".", ";", ":"):
            return []
        if tok.word in _DESTINATIONS:
            m = _skip(toks, j + 1, _DESTINATION_FILLER)
            return _path_list(toks, m, drop_subjects=True) if m < len(toks) and toks[m].path else []
    return []


def _subject_participle(toks: list[Token], start: int) -> list[str]:
    """ "NOTES.md written.", "`a.md` and `b.md` were created", "- NOTES.md — updated with 1.2": paths
    opening the clause, then a participle of the registry (not "… updated by the release bot")."""
    first = _skip(toks, start, _SUBJECT_FILLER)
    if first >= len(toks) or not toks[first].path:
        return []
    names = _path_list(toks, first, drop_subjects=False)
    j = first
    while j < len(toks) and (toks[j].path or toks[j].punct in _SEPARATORS or toks[j].word in _AND):
        j += 1
    if j < len(toks) and toks[j].punct in (":", "—", "–", "-", "("):
        j += 1
    aux_start = j
    while j < len(toks) and toks[j].word in _POST_AUX:
        j += 1
    if any(t.word in ("is", "are") for t in toks[aux_start:j]) and not any(t.word == "now" for t in toks[aux_start:j]):
        return []  # "config.yaml is generated at build time" describes, it does not report
    if j >= len(toks) or toks[j].word not in PARTICIPLES or (j + 1 < len(toks) and toks[j + 1].word == "by"):
        return []
    if any(t.word in _SUBJECT_VERBS or t.word in _AS_INPUT for t in toks[j + 1 :]):
        return []  # "`schema.json` (generated) was used to validate": the participle only describes it
    return names


def _path_list(toks: list[Token], m: int, *, drop_subjects: bool) -> list[str]:
    """The path at `m` and those joined to it ("a.md, b.md and `c.md`"); a parenthesis is skipped;
    a listed path followed by a verb of its own ("and CHANGELOG.md was the source") is dropped."""
    if drop_subjects and m + 1 < len(toks) and toks[m + 1].word in _SUBJECT_VERBS:
        return []  # "Logs written to logs/app.log are rotated": the path is a subject
    names = [toks[m].path]
    j = m + 1
    while j < len(toks):
        if toks[j].punct == "(":
            while j < len(toks) and toks[j].punct != ")":
                j += 1
            j += 1
            continue
        joined = False
        while j < len(toks) and (toks[j].punct in _SEPARATORS or toks[j].word in _AND or _as_well_as(toks, j)):
            j += 3 if _as_well_as(toks, j) else 1
            joined = True
        if not (joined and j < len(toks) and toks[j].path):
            break
        if drop_subjects and j + 1 < len(toks) and toks[j + 1].word in _SUBJECT_VERBS:
            break
        names.append(toks[j].path)
        j += 1
    return names


def _as_well_as(toks: list[Token], j: int) -> bool:
    return [t.word for t in toks[j : j + 3]] == ["as", "well", "as"]


def _skip(toks: list[Token], j: int, words: set[str]) -> int:
    while j < len(toks) and toks[j].word in words:
        j += 1
    return j


def _lead(toks: list[Token]) -> int:
    """Where the clause proper starts, after openers such as "Done:" or "Next," (and a line number a
    pasted tool output starts with: " 1 Successfully created `TODO.md`")."""
    j = 0
    while j < len(toks) and (
        toks[j].word in _LEADS or toks[j].punct in (",", ":", "—", "–", "-") or (j == 0 and toks[j].word.isdigit())
    ):
        j += 1
    return j


def _plausible(name: str) -> bool:
    """A web host is not a file ("published it to example.com")."""
    low = name.lower()
    return "/" in low or low.rsplit(".", 1)[-1] not in _DOMAINS
