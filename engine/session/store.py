"""The folder of sessions (`.arreio/sessions`): listing, id resolution, cheap summaries."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ValidationError

from arreio.engine.core.errors import SessionError
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, UnfitFile, open_regular, read_bytes
from arreio.engine.session.format import SessionHeader, parse_header, upgrade
from arreio.engine.session.healing import MESSAGE_LINE_PREFIX, parse_object


class SessionSummary(BaseModel):
    """One row of `arreio sessions list`. `error` is set (and the rest mostly empty) for a file that
    is not a usable session; `messages` counts message lines on disk, before any healing."""

    id: str
    created_at: str
    model: str
    title: str
    messages: int
    last_run_verdict: str | None
    path: Path
    error: str | None = None
    cost_usd: float | None = None  # the last run's, from its report; None when unknown or there is none


class SessionStore:
    """The folder of sessions (`.arreio/sessions`). Ids are file stems."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _ids(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.jsonl") if p.is_file())

    def path_for(self, session_id: str) -> Path:
        path = self.directory / f"{session_id}.jsonl"
        if not session_id or "/" in session_id or "\\" in session_id or not path.is_file():
            raise SessionError(f"no session '{session_id}' (see `arreio sessions list`)")
        return path

    def resolve(self, prefix: str) -> str:
        """A unique id prefix → the full id. Exact ids always win."""
        ids = self._ids()
        if prefix in ids:
            return prefix
        matches = [i for i in ids if prefix and i.startswith(prefix)]
        if "." not in prefix:  # a sub-agent's session (`<root>.d1`) is named by its full id only
            matches = [i for i in matches if "." not in i] or matches
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SessionError(f"no session '{prefix}' (see `arreio sessions list`)")
        shown = ", ".join(matches[:8]) + (f", … ({len(matches)} in all)" if len(matches) > 8 else "")
        raise SessionError(f"session prefix '{prefix}' is ambiguous: {shown} — give more characters")

    def list(self) -> list[SessionSummary]:
        """Every session, newest first. A damaged file is listed with `error` set, never raised."""
        summaries = [_summarize(self.directory / f"{i}.jsonl") for i in self._ids()]
        return sorted(summaries, key=lambda s: (s.created_at, s.id), reverse=True)

    def latest(self, cwd: Path) -> str | None:
        """The session last worked on in `cwd` (`arreio run --continue`): among the sessions whose header
        names that directory, the one with the newest run marker (its creation time if it has none).
        Sub-agent sessions (`<root>.d1`) are never picked: they end with their task. A file whose
        header cannot be read is passed over (its directory is unknown). None when there is none."""
        here = os.path.realpath(cwd)
        best: tuple[str, str] | None = None
        for session_id in self._ids():
            if "." in session_id:
                continue
            try:
                lines = read_bytes(self.directory / f"{session_id}.jsonl", limit=Limit.SESSION).split(b"\n")
            except OSError:  # unreadable, a pipe, a device, past the limit: passed over
                continue
            header = parse_object(lines[0])
            if not header or header.get("type") != "header" or header.get("parent") or not header.get("cwd"):
                continue
            if os.path.realpath(str(header["cwd"])) != here:
                continue
            last = str(header.get("created_at") or "")
            for line in reversed(lines):  # markers are appended: the last one is the newest
                if line.startswith(b'{"type":"run"'):
                    record = parse_object(line)
                    if record is not None and isinstance(record.get("at"), str):
                        last = max(last, record["at"])
                        break
            if best is None or (last, session_id) > best:
                best = (last, session_id)
        return best[1] if best else None

    def unreadable_since(self, session_id: str | None) -> list[str]:
        """Session files whose header cannot be read, written after `session_id`'s file (any, when
        None): `latest` passed them over, and `--continue` says so rather than go on silently with
        an older session when the newest one is damaged (`arreio sessions doctor ID` repairs it)."""
        try:
            since = (self.directory / f"{session_id}.jsonl").stat().st_mtime_ns if session_id else -1
        except OSError:
            since = -1
        out = []
        for sid in self._ids():
            path = self.directory / f"{sid}.jsonl"
            try:
                if "." in sid or path.stat().st_mtime_ns <= since:
                    continue
                header = parse_object(_first_line(path))
            except OSError:
                continue
            if not header or header.get("type") != "header":
                out.append(sid)
        return sorted(out)

    def passed_over(self, session_id: str | None) -> str | None:
        """What `--continue` says when it passed over newer damaged sessions (None: it did not)."""
        damaged = self.unreadable_since(session_id)
        if not damaged:
            return None
        named = ", ".join(damaged[:3]) + (f" and {len(damaged) - 3} more" if len(damaged) > 3 else "")
        return (
            f"--continue passed over {named}: newer, but the first line is not a session header "
            f"(`arreio sessions doctor {damaged[0]}` looks at it)"
        )


def _summarize(path: Path) -> SessionSummary:
    """A cheap scan (no message validation) so listing many long sessions stays fast."""
    empty = SessionSummary(
        id=path.stem, created_at="", model="", title="", messages=0, last_run_verdict=None, path=path
    )
    try:
        data = read_bytes(path, limit=Limit.SESSION)
        lines = data.split(b"\n")
        header = parse_header(path, lines[0])
        upgrade(path, header, [])
        parsed = SessionHeader.model_validate({k: v for k, v in header.items() if k != "type"})
    except SessionError as error:
        return empty.model_copy(update={"error": error.message})
    except UnfitFile as error:
        return empty.model_copy(update={"error": error.because("the session file")})
    except (OSError, ValidationError) as error:
        return empty.model_copy(update={"error": f"unreadable session header: {type(error).__name__}"})
    count, verdict, last_run = 0, None, None
    for line in lines[1:]:
        if line.startswith(MESSAGE_LINE_PREFIX):
            count += line.endswith(b"}")  # a torn line is not a message
        elif line.startswith(b'{"type":"run"'):
            record = parse_object(line)
            if record is not None and record.get("event") == "end":
                verdict, last_run = record.get("verdict"), record.get("run_id")
    return SessionSummary(
        id=path.stem,
        created_at=parsed.created_at,
        model=parsed.model,
        title=parsed.title,
        messages=count,
        last_run_verdict=verdict,
        path=path,
        cost_usd=_run_cost(path.parent.parent / "runs", last_run),
    )


def _first_line(path: Path) -> bytes:
    """The first line of a session file (its header: at most 1 MB of it is read), opened without
    waiting on a pipe."""
    fd, _ = open_regular(path)
    try:
        with open(fd, "rb", closefd=False) as handle:
            return handle.readline(1024 * 1024).rstrip(b"\n")
    finally:
        os.close(fd)


def _run_cost(runs: Path, run_id: object) -> float | None:
    """A run's `cost_usd` from its report (`.arreio/runs/<id>/report.json`); None if it cannot be read."""
    if not isinstance(run_id, str) or not run_id or "/" in run_id or "\\" in run_id:
        return None
    try:
        cost = json_loads(read_bytes(runs / run_id / "report.json", limit=Limit.RECORD)).get("cost_usd")
    except (OSError, ValueError, AttributeError):
        return None
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
