"""`arreio kb`: index the user's documents and search them (the knowledge base).

Only typer, rich and the standard library load with this module; the knowledge base (and numpy, and
the embedding model) load inside the command that needs them.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from arreio.cli.inert import shown as escape  # markup-safe and inert
from arreio.engine.core.ports import process_env

app = typer.Typer(
    help="The knowledge base: index your documents, then search them (the agent can too).", no_args_is_help=True
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def _open():

    from arreio.engine.core.config import config_sources, load_settings
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.core.paths import state_dir
    from arreio.memory.knowledge.index import open_knowledge_base
    from arreio.memory.knowledge.settings import parse_knowledge

    section = load_settings().knowledge  # (its errors name their file already)
    try:  # a config mistake fails before any file is made, naming the file to fix
        settings = parse_knowledge(section)
    except ConfigError as error:
        raise ConfigError(f"{error.message} (in {config_sources(Path.cwd(), process_env())})") from None
    return open_knowledge_base(state_dir(), settings=settings)


def _existing():
    """The knowledge base of this folder for commands that only look, sync or remove: without one,
    say so instead of leaving an empty database behind (only `kb add` creates one)."""
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.paths import state_dir
    from arreio.memory.knowledge.embedders import default_embedder
    from arreio.memory.knowledge.index import DB_NAME

    default_embedder()  # a bad ARREIO_KB_EMBEDDER is a config error wherever you are
    if not (state_dir() / DB_NAME).exists():
        raise UsageError("there is no knowledge base here yet: add documents with `arreio kb add PATH...`")
    return _open()


def _display(path: str) -> str:
    from arreio.engine.core.paths import display_path

    return display_path(Path(path))


def _print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")


def _notices(notices: list[str]) -> None:
    err = _console(stderr=True)
    for notice in notices:
        err.print(f"[yellow]note:[/] {escape(notice, one_line=True)}")  # a file name in it cannot start a line


def _with_progress(action, quiet: bool):
    """Run `action(progress_callback)` under a rich progress bar (files, then embedding)."""
    if quiet:
        return action(lambda phase, done, total: None)
    console = _console(stderr=True)
    if not console.is_terminal:  # rich draws nothing off a terminal: plain lines every few seconds instead
        from arreio.cli.progress_lines import ProgressLines

        return action(ProgressLines(lambda line: console.print(escape(line, one_line=True))))
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from arreio.cli.progress_lines import RateFromFirstResults, time_left

    # The time left is read from the pace since the first results (progress_lines.py), not rich's
    # own from the phase's start, which counts the workers' start-up as the pace of the work.
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[left]}"))
    with Progress(*columns, console=console, transient=True) as progress:
        tasks: dict[str, Any] = {}
        rates: dict[str, RateFromFirstResults] = {}
        labels = {"files": "files ", "embed": "chunks"}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = progress.add_task(labels.get(phase, phase), total=total, left="")
                rates[phase] = RateFromFirstResults()
            now = time.monotonic()
            rates[phase].see(now, done)
            left = time_left(rates[phase].per_second(), done, total)
            progress.update(tasks[phase], completed=done, total=total, left=left)

        return action(update)


def _interrupted(kb, again: str) -> None:
    """`again`: the command that finishes the job (files not read yet are only found by `kb add`)."""
    pending = kb.backend.count_pending_vectors() if kb.embedder else 0
    more = f"; {pending} chunks still need vectors" if pending else ""
    _console(stderr=True).print(
        f"arreio: interrupted — the index is usable{more}; run `{again}` again to finish (files already "
        "indexed are skipped)"
    )
    if any(t.name == "arreio-embed" and t.is_alive() for t in threading.enumerate()):
        # The embedding thread is inside the model runtime's native call: an ordinary interpreter exit
        # would destroy that runtime's running threads and abort (SIGABRT). What is indexed is committed.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    raise typer.Exit(130)


@app.command()
def add(
    paths: Annotated[list[str], typer.Argument(help="Files, folders or globs (quote globs: 'docs/**/*.md').")],
    json_: JsonOption = False,
) -> None:
    """Index files incrementally: unchanged files are skipped, changed ones re-indexed."""
    import shlex

    from arreio.cli.interrupts import sigterm_interrupts
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.paths import make_state_dir, state_dir
    from arreio.memory.knowledge.sources import expand

    if any(not p.strip() for p in paths):  # Path("") is ".": the whole folder, which nobody typed
        raise UsageError("an empty path names no file; to index this folder, say `.`")
    files, notices = expand(paths, Path.cwd())
    if not files:  # before the database exists: a mistyped path must not leave an empty one behind
        _notices(notices)
        raise UsageError("nothing to index: no readable text file among " + " ".join(paths))
    make_state_dir(state_dir())  # a folder made here keeps itself out of git (paths.STATE_GITIGNORE)
    kb = _open()
    try:
        with sigterm_interrupts():  # SIGTERM stops it as Ctrl-C does: what is indexed stays, exit 130
            report = _with_progress(lambda progress: kb.add_files(files, notices, progress), quiet=json_)
    except KeyboardInterrupt:
        _interrupted(kb, "arreio kb add " + " ".join(shlex.quote(p) for p in paths))
    finally:
        kb.close()
    if not (report.added or report.updated or report.unchanged):
        _notices(report.notices)
        raise UsageError("nothing to index: no readable text file among " + " ".join(paths))
    if json_:
        _print_json(report.__dict__)
        return
    _notices(report.notices)
    line = f"added {report.added}, updated {report.updated}, unchanged {report.unchanged} files"
    line += f"; {report.chunks} new chunks"
    if report.embedded:
        line += f", {report.embedded} embedded"
    _console().print(line)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", "--top", min=1, max=100, help="How many hits.")] = 10,
    mode: Annotated[str, typer.Option(metavar="hybrid|keyword|vector", help="Which passes rank the hits.")] = "hybrid",
    json_: JsonOption = False,
) -> None:
    """Print the best passages for a query: path, line range, score (how well it matches, 0..1), a snippet.
    Passages scoring below `knowledge.min_score` are left out, so a query about nothing indexed finds nothing."""
    from arreio.cli.arguments import text
    from arreio.engine.core.errors import UsageError

    text(query, "the query")
    if not query.strip():  # nothing to look for: a usage error, not "no matches" (exit 0 read as an answer)
        raise UsageError('the query is empty: give some words to look for (`arreio kb search "retry backoff"`)')
    if mode not in ("hybrid", "keyword", "vector"):
        raise UsageError(f"--mode must be hybrid, keyword or vector (got {mode!r})")
    kb = _existing()
    try:
        notice = kb.notice()
        if mode == "vector" and not kb.vectors_ready(complete=False):
            raise UsageError(f"no vectors to search: {notice or 'run `arreio kb sync`'}")
        hits = kb.search(query, k=k, mode=mode)  # type: ignore[arg-type]
        floor = kb.fusion.min_score
    finally:
        kb.close()
    if notice and mode == "hybrid":  # what was searched, said once (stderr: --json stays clean)
        _notices([notice])
    if json_:
        _print_json(
            [
                {
                    "path": _display(h.path),
                    "start_line": h.start_line,
                    "end_line": h.end_line,
                    "score": round(h.score, 4),
                    "similarity": _rounded(h.similarity),
                    "coverage": _rounded(h.coverage),
                    "text": h.text,
                }
                for h in hits
            ]
        )
        return
    out = _console()
    if not hits:  # nothing matched, or nothing well enough: the same answer (the floor is in the docs)
        out.print(f"no good match (no passage scores {floor:.2f} or more)" if floor > 0 else "no matches")
        return
    from arreio.memory.knowledge.snippet import around_match

    for number, hit in enumerate(hits, start=1):
        snippet = around_match(" ".join(hit.text.split()), query, 240)
        where = (
            f"{escape(_display(hit.path), one_line=True)}:{hit.start_line}-{hit.end_line}"  # a name cannot fake a hit
        )
        out.print(f"[bold]{number:>2}. {where}[/]  [dim]{hit.score:.3f}[/]")
        out.print(f"    {escape(snippet)}")
    if any(a.score < b.score for a, b in zip(hits, hits[1:])):
        # Ranking by score instead lost nDCG@10 on the retrieval bench (ja 0.793 → 0.769): the order
        # stays the fused one, and says so where the numbers do not follow it.
        out.print(f"[dim]{OUT_OF_ORDER}[/]")


OUT_OF_ORDER = (
    "ranked by words and meaning together; a score is that passage's own match strength (0..1), "
    "so a lower one may rank higher"
)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@app.command()
def stats(json_: JsonOption = False) -> None:
    """Documents, chunks, vectors, the embedding model, size on disk."""
    from arreio.engine.core.paths import state_dir
    from arreio.memory.knowledge.index import DB_NAME

    if not (state_dir() / DB_NAME).exists():  # looking must not create an empty database
        if json_:
            _print_json(
                {"documents": 0, "chunks": 0, "vectors": 0, "embedder": None, "notice": "no knowledge base yet"}
            )
        else:
            _console().print("the knowledge base is empty: add documents with `arreio kb add PATH...`")
        return
    kb = _open()
    try:
        info = kb.stats()
    finally:
        kb.close()
    payload = {**info.backend.__dict__, "embedder": info.embedder, "notice": info.notice}
    if json_:
        _print_json(payload)
        return
    out = _console()
    b = info.backend
    out.print(f"documents  {b.documents}\nchunks     {b.chunks}\nvectors    {b.vectors}")
    out.print(f"model      {b.vector_model or '-'}\nsize       {b.size_bytes / 1_048_576:.1f} MiB")
    if info.notice:
        _notices([info.notice])


@app.command()
def remove(
    path: Annotated[str, typer.Argument(help="A file, or a folder: every document under it.")],
    json_: JsonOption = False,
) -> None:
    """Drop a document (or a folder's documents) from the index; the files are not touched."""
    from arreio.engine.core.errors import UsageError

    if not path.strip():
        raise UsageError("an empty path names no document; to drop every document under this folder, say `.`")
    kb = _existing()
    try:
        removed = kb.remove(path, Path.cwd())
    finally:
        kb.close()
    if not removed:
        raise UsageError(f"{path} is not in the knowledge base (see `arreio kb stats`)")
    if json_:
        _print_json({"removed": [_display(p) for p in removed]})
        return
    _console().print(f"removed {len(removed)} document{'s' if len(removed) != 1 else ''}")


@app.command()
def sync(json_: JsonOption = False) -> None:
    """Re-check indexed files: drop removed ones, re-index changed ones, finish embedding."""
    from arreio.cli.interrupts import sigterm_interrupts

    kb = _existing()
    try:
        with sigterm_interrupts():
            report = _with_progress(lambda progress: kb.sync(progress), quiet=json_)
    except KeyboardInterrupt:
        _interrupted(kb, "arreio kb sync")
    finally:
        kb.close()
    if json_:
        _print_json(report.__dict__)
        return
    _notices(report.notices)
    _console().print(
        f"removed {report.removed}, re-indexed {report.updated}, unchanged {report.unchanged} files; "
        f"{report.embedded} chunks embedded"
    )
