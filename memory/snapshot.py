"""The frozen memory snapshot: MEMORY.md and USER.md rendered into the system prompt once.

docs/architecture.md invariant 3: the stores enter the system prompt at session start; writes made mid-session
reach disk at once but do not change the prompt, so the provider's prefix cache stays warm. The
block therefore reads the stores the first time it renders and returns that same text for the rest
of its life; a new session builds a new block.

Entries are scanned again at render time: a file edited by hand (or written by an arreio that did not
refuse secrets) can hold anything, and only the scan stands between it and every future prompt. An
entry that fails, or holds a secret the stores' redactor finds, shows as a `[BLOCKED: …]`
placeholder carrying a handle (`blocked:1a2b3c4d`) the `memory` tool accepts as `old_text`, so the
entry stays removable without its text ever reaching the model.
"""

from __future__ import annotations

from arreio.engine.walls.redact import Redactor
from arreio.memory.entries import SEPARATOR, MemoryRefused, blocked_handle
from arreio.memory.scan import scan_text
from arreio.memory.store import MemoryStore, MemoryStores, StoreState

_TITLES = {"memory": ("MEMORY.md", "your own notes"), "user": ("USER.md", "what you know about the user")}


def _why_blocked(entry: str, redactor: Redactor | None) -> str | None:
    finding = scan_text(entry)
    if finding is not None:
        return f"this entry failed the security scan — {finding.describe()}"
    if redactor is not None and redactor.text(entry) != entry:
        return "this entry holds a secret"
    return None


def render_entry(entry: str, redactor: Redactor | None = None) -> str:
    """The entry as the prompt shows it: itself, or a placeholder when it fails the scan or holds a
    secret `redactor` finds."""
    why = _why_blocked(entry, redactor)
    if why is None:
        return entry
    return f'[BLOCKED: {why}; it is not shown. Remove it with the memory tool, old_text "{blocked_handle(entry)}".]'


def _blocked(state: StoreState, redactor: Redactor | None) -> list[str]:
    return [entry for entry in state.entries if _why_blocked(entry, redactor) is not None]


def render_snapshot(
    states: list[StoreState], problems: list[str] | None = None, redactor: Redactor | None = None
) -> str | None:
    """The block text for these store states, or None when every store is empty (and none failed
    to read). `problems` are one-line notes about stores that could not be read."""
    problems = problems or []
    if not any(state.entries for state in states) and not problems:
        return None
    lines = [
        "# Memory (snapshot taken at session start)",
        "Durable notes from earlier sessions. Writes you make with the memory tool are saved at once "
        "but show here only from the next session.",
    ]
    for state in states:
        file_name, meaning = _TITLES[state.target]
        lines.append(f"- {file_name} ({meaning}): {state.summary()}")
    lines.extend(f"- {problem}" for problem in problems)
    for state in states:
        if not state.entries:
            continue
        file_name, meaning = _TITLES[state.target]
        lines.append("")
        lines.append(f"## {file_name} — {meaning}")
        lines.append(f"\n{SEPARATOR}\n".join(render_entry(entry, redactor) for entry in state.entries))
    return "\n".join(lines)


class MemorySnapshotBlock:
    """A `SystemPromptBlockSource` for the memory snapshot. Frozen on first render."""

    name = "memory"
    stable = True

    def __init__(self, stores: MemoryStores) -> None:
        self.stores = stores
        self._frozen = False
        self._text: str | None = None
        self.notices: list[str] = []  # what the user should hear about the stores (shown as warnings)

    def render(self) -> str | None:
        """The snapshot text (None when both stores are empty), identical on every call."""
        if not self._frozen:
            states: list[StoreState] = []
            problems: list[str] = []
            for store in (self.stores.memory, self.stores.user):
                state = _read(store, problems)
                if state is not None:
                    states.append(state)
            redactor = getattr(self.stores, "redactor", None)
            self._text = render_snapshot(states, problems, redactor)
            self.notices = problems + [n for state in states for n in _notices(state, redactor)]
            self._frozen = True
        return self._text


def _notices(state: StoreState, redactor: Redactor | None = None) -> list[str]:
    """A store over its limit or holding blocked entries still loads; the user is told what to fix."""
    file_name, _ = _TITLES[state.target]
    out = []
    if state.chars > state.limit:
        out.append(
            f"{file_name} is over its limit ({state.chars}/{state.limit} chars) and enters every prompt "
            f"whole: consolidate it with `arreio memory replace|remove --target {state.target}`"
        )
    blocked = _blocked(state, redactor)
    if blocked:
        out.append(
            f"{file_name} holds {len(blocked)} entr{'y' if len(blocked) == 1 else 'ies'} the security scan "
            f"blocked (hidden from the model): remove with `arreio memory remove --target {state.target} "
            f"{blocked_handle(blocked[0])}`"
        )
    return out


def _read(store: MemoryStore, problems: list[str]) -> StoreState | None:
    # A broken store file must not stop a session from starting: say so in the block instead.
    try:
        return store.read()
    except (MemoryRefused, OSError) as error:
        reason = error.message if isinstance(error, MemoryRefused) else f"{type(error).__name__}: {error}"
        problems.append(f"{store.path.name} could not be read, so it is left out ({reason})")
        return None
