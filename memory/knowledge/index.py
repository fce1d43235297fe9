"""The knowledge base: incremental indexing (add / sync / remove) and hybrid search.

Indexing runs in two phases so it can be stopped at any moment: first every new or changed file is
chunked and stored (one transaction per file; its chunks are searchable by keyword at once), then
chunks without a vector are embedded in batches (one transaction per batch). Whatever stops the
process, the index is usable, and the next `add` or `sync` embeds only what is still missing.
Unchanged files are recognised by the SHA-256 of their bytes and skipped. A document's text goes
through the redactor before it is chunked, so no secret it holds (an environment value, a token, a
`password: …` line, a docker `auth`) is stored, searched or embedded; the label stands in its place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from arreio.engine.walls.redact import Redactor
from arreio.memory.knowledge import embedding, passes, relevance
from arreio.memory.knowledge.backend import BackendStats, Hit, KnowledgeBackend
from arreio.memory.knowledge.chunking import ChunkConfig, chunk_text
from arreio.memory.knowledge.database_file import DB_NAME
from arreio.memory.knowledge.embedders import Embedder, default_embedder, no_embedder_notice
from arreio.memory.knowledge.fusion import FusionConfig, fuse
from arreio.memory.knowledge.query_threads import QueryThreads
from arreio.memory.knowledge.sources import SourceText, expand, read_text

if TYPE_CHECKING:
    import numpy as np

    from arreio.memory.knowledge.settings import KnowledgeSettings

EMBED_MAX_CHARS = embedding.EMBED_MAX_CHARS  # (why: embedding.py)
Mode = Literal["hybrid", "keyword", "vector"]
# (phase, done, total): phase "files" while reading and chunking, "embed" while embedding.
ProgressFn = Callable[[str, int, int], None]
Outcome = Literal["added", "updated", "unchanged"]


@dataclass
class AddReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks: int = 0  # chunks written for added or updated files
    embedded: int = 0
    pending: int = 0  # chunks still without a vector (no embedder, or interrupted)
    notices: list[str] = field(default_factory=list)


@dataclass
class SyncReport:
    removed: int = 0
    updated: int = 0
    unchanged: int = 0
    embedded: int = 0
    pending: int = 0
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class KnowledgeStats:
    backend: BackendStats
    embedder: str | None
    notice: str | None  # said once when search is keyword-only


def _noop(phase: str, done: int, total: int) -> None:
    pass


class KnowledgeBase:
    """A backend, an optional embedder (None: keyword search only), and the chunking and fusion
    settings. `sentence_vectors` also embeds each chunk's sentences (sentences.py), which doubles
    embedding time and sharpens ranking for short queries. `batch_size` chunks are stored per
    transaction; `embed_chars` is the most characters of chunks one model call takes (at least
    one chunk); `workers` is how many processes embed (None: one per core, see embedding.py).
    Safe to use from one thread at a time."""

    def __init__(
        self,
        backend: KnowledgeBackend,
        embedder: Embedder | None,
        *,
        chunking: ChunkConfig = ChunkConfig(),
        fusion: FusionConfig = FusionConfig(),
        batch_size: int = 8,
        embed_chars: int = embedding.BATCH_CHARS,
        sentence_vectors: bool = True,
        workers: int | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.backend = backend
        self._redactor = redactor  # None: one for the process's environment, made when first needed
        self.sentence_vectors = sentence_vectors
        self.embedder = embedder
        self.chunking = chunking
        self.fusion = fusion
        self.batch_size = batch_size
        self.embed_chars = embed_chars
        self.workers = workers
        self._keyword_worker: ThreadPoolExecutor | None = None  # see `_keyword_worker_if_concurrent`
        self._query_threads = QueryThreads()

    # -- indexing ---------------------------------------------------------------------------

    def add_text(self, path: str, text: str, sha256: str, size: int | None = None) -> Outcome:
        """Index one document's text under `path` unless a document with that hash is there."""
        self._redact_stored()
        return self._index_one(path, text, sha256, size)[0]

    @property
    def redactor(self) -> Redactor:
        if self._redactor is None:
            from arreio.engine.core.ports import process_env

            self._redactor = Redactor.from_env(process_env())
        return self._redactor

    def _redact_stored(self) -> None:
        """Before a write: redact what an older arreio stored as read (once per knowledge base)."""
        self.backend.redact_stored(self.redactor.text)

    def _index_one(self, path: str, text: str, sha256: str, size: int | None) -> tuple[Outcome, int]:
        existing = self.backend.get_document(path)
        if existing is not None and existing.sha256 == sha256:
            return "unchanged", 0
        chunks = chunk_text(self.redactor.text(text), self.chunking)
        self.backend.replace_document(path, sha256, len(text.encode()) if size is None else size, chunks)
        return ("added" if existing is None else "updated"), len(chunks)

    def _index_files(self, files: list[Path], progress: ProgressFn) -> tuple[Counter[str], list[str]]:
        """Outcome counts (added / updated / unchanged / chunks) and skip notices."""
        counts: Counter[str] = Counter()
        notices: list[str] = []
        self._redact_stored()
        for done, file in enumerate(files, start=1):
            source = read_text(file)
            if isinstance(source, SourceText):
                outcome, chunks = self._index_one(str(source.path), source.text, source.sha256, source.size)
                counts[outcome] += 1
                counts["chunks"] += chunks
            elif self.backend.remove_document(str(file)):  # indexed before: its old text must not answer
                counts["removed"] += 1
                notices.append(f"{source}; its earlier version is no longer in the index")
            else:
                notices.append(source)
            progress("files", done, len(files))
        return counts, notices

    def add(self, arguments: list[str], cwd: Path, progress: ProgressFn = _noop) -> AddReport:
        """Index the files, folders and globs named; then embed whatever lacks a vector."""
        return self.add_files(*expand(arguments, cwd), progress=progress)

    def add_files(self, files: list[Path], notices: list[str], progress: ProgressFn = _noop) -> AddReport:
        """`add` for arguments already expanded (`sources.expand`), with the notices it gave."""
        counts, skipped = self._index_files(files, progress)
        report = AddReport(counts["added"], counts["updated"], counts["unchanged"], counts["chunks"])
        report.notices = notices + skipped
        report.embedded = self.embed_pending(progress)
        report.pending = self.backend.count_pending_vectors() if self.embedder else 0
        if self.embedder is None:
            report.notices.append(no_embedder_notice())
        return report

    @property
    def vector_scheme(self) -> str | None:
        """What the stored vectors must have been made by: the embedder's model, plus whether
        sentences were embedded too. Vectors of another scheme are re-made, never mixed."""
        if self.embedder is None:
            return None
        return f"{self.embedder.name}+sentences" if self.sentence_vectors else self.embedder.name

    def embed_pending(self, progress: ProgressFn = _noop) -> int:
        """Embed chunks that have no vector, one committed batch at a time. Returns how many.
        A chunk's sentences (sentences.py) are embedded with it and stored with it. Progress is
        reported per chunk as it is stored (a model call's chunks come back together)."""
        if self.embedder is None:
            return 0
        scheme = self.vector_scheme
        assert scheme is not None
        model = self.backend.vector_model()
        if model is not None and model != scheme:
            if model == f"{scheme}+sentences":  # sentence vectors switched off: the chunk vectors stay
                self.backend.drop_sentence_vectors(scheme)
            else:  # another model (or sentences switched on): everything is embedded again
                self.backend.reset_vectors(scheme)
        total = self.backend.count_pending_vectors()
        done = 0
        ids: list[int] = []
        vectors: list[np.ndarray] = []
        matrices: list[np.ndarray | None] = []
        if total:
            progress("embed", 0, total)
        results = embedding.run(self.embedder, self._jobs(), total, self.workers, self.embed_chars)
        try:
            for job, embedded in results:
                vector, matrix = embedding.assemble(job, embedded)
                ids.append(job.chunk_id)
                vectors.append(vector)
                matrices.append(matrix)
                if len(ids) >= self.batch_size:
                    done += self._store(scheme, ids, vectors, matrices)
                # Every chunk moves the bar (not every batch): the CLI reads the pace from when
                # they come back, leaving the workers' start-up out of it.
                progress("embed", done + len(ids), max(total, done + len(ids)))
        finally:
            results.close()  # Ctrl-C or an error: stop the workers; the uncommitted batch is dropped
        if ids:
            done += self._store(scheme, ids, vectors, matrices)
        prepare = getattr(self.backend, "prepare_search", None)
        if done and prepare is not None and self.backend.count_pending_vectors() == 0:
            prepare()  # the search matrices are built here, at add time, not by the first search
        return done

    def _jobs(self) -> Iterator[embedding.Job]:
        """One job per chunk without a vector, lowest id first, read a page at a time."""
        after = 0
        while page := self.backend.pending_vectors(256, after=after):
            for chunk_id, text in page:
                yield embedding.plan(chunk_id, text, self.sentence_vectors)
            after = page[-1][0]

    def _store(self, scheme: str, ids: list[int], vectors: list, matrices: list) -> int:
        """Commit one batch (one transaction); empties the lists. Returns how many were stored."""
        import numpy as np

        self.backend.set_vectors(scheme, list(ids), np.stack(vectors), list(matrices))
        count = len(ids)
        for stored in (ids, vectors, matrices):
            stored.clear()
        return count

    def sync(self, progress: ProgressFn = _noop) -> SyncReport:
        """Re-check every indexed file: drop the removed, re-index the changed, finish embedding."""
        report = SyncReport()
        present: list[Path] = []
        for document in self.backend.documents():
            path = Path(document.path)
            if path.is_file():
                present.append(path)
            else:
                self.backend.remove_document(document.path)
                report.removed += 1
        counts, report.notices = self._index_files(present, progress)
        report.removed += counts["removed"]
        report.updated, report.unchanged = counts["updated"] + counts["added"], counts["unchanged"]
        report.embedded = self.embed_pending(progress)
        report.pending = self.backend.count_pending_vectors() if self.embedder else 0
        return report

    def remove(self, argument: str, cwd: Path) -> list[str]:
        """Drop a document, or every document under a folder. Returns the paths removed."""
        target = Path(argument).expanduser()
        target = (target if target.is_absolute() else cwd / target).resolve()
        prefix = str(target).rstrip("/") + "/"
        removed = []
        for document in self.backend.documents():
            if document.path == str(target) or document.path.startswith(prefix):
                if self.backend.remove_document(document.path):
                    removed.append(document.path)
        return removed

    # -- search -----------------------------------------------------------------------------

    def vectors_ready(self, complete: bool = True) -> bool:
        """True when the current embedder's vectors can be searched. With `complete`, also every
        chunk must have one: a vector pass over part of the index would push the rest down the
        fused ranking, so an interrupted index searches by keyword until embedding finishes.
        Vectors made with the other `sentence_vectors` setting still count: chunk vectors are the
        same either way (until `kb sync` brings the sentences in line)."""
        stored = self.backend.vector_model()
        if self.embedder is None or stored is None or stored.split("+")[0] != self.embedder.name:
            return False
        return not complete or self.backend.count_pending_vectors() == 0

    def _stored_sentences(self) -> bool:
        return (self.backend.vector_model() or "").endswith("+sentences")

    def search(self, query: str, k: int = 10, mode: Mode = "hybrid") -> list[Hit]:
        """Top-k hits. `hybrid` fuses the keyword, chunk-vector and sentence passes by RRF
        (keyword only when no vectors of the current embedder exist); `keyword` runs the keyword
        pass alone, `vector` the two vector passes. Each hit's score is how well it matches
        (relevance.py); hits below `fusion.min_score` are left out, so there may be none; with a floor
        and a calibrated embedder, a hybrid search for a query none of whose terms is in the index has
        none (relevance.anchored; `vector`: semantics only, as asked)."""
        if not query.strip() or k < 1:
            return []
        n = max(self.fusion.per_pass, k)
        vectors = mode in ("hybrid", "vector") and self.vectors_ready(complete=mode == "hybrid")
        wanted = mode in ("hybrid", "keyword")
        found = passes.rank(
            self.backend,
            query,
            n,
            keyword=wanted,
            embedder=self.embedder if vectors else None,
            sentences=vectors and self.sentence_vectors and self._stored_sentences(),
            pool=self.fusion.sentence_pool,
            worker=self._keyword_worker_if_concurrent() if wanted and vectors else None,
            query_threads=self._query_threads,
        )
        weighted: list[tuple[list[int], float]] = []
        if found.vector is not None and found.sentence is not None:
            weighted += [(found.vector, self.fusion.vector_weight), (found.sentence, self.fusion.sentence_weight)]
        elif found.vector is not None:
            weighted.append((found.vector, self.fusion.vector_weight + self.fusion.sentence_weight))
        if found.keyword is not None:
            weighted.append((found.keyword, self.fusion.keyword_weight))
        if not weighted:
            return []
        rankings = [ranking for ranking, _ in weighted]
        weights = [weight for _, weight in weighted] if len(weighted) > 1 else [1.0]
        every = sum(len(ranking) for ranking in rankings)  # by chunk id, every candidate, best first
        fused = [chunk_id for chunk_id, _ in fuse(rankings, weights, k=self.fusion.k, top_k=every)]
        scale = relevance.similarity_scale(self.vector_scheme, query) if found.vector is not None else None
        if found.keyword is not None and not relevance.anchored(found.keyword, self.fusion.min_score, scale):
            return []  # no term of the query is anywhere: the vector passes' nearest mean nothing (relevance.py)

        def judge(ids: Sequence[int], texts: Sequence[str]) -> list[relevance.Evidence]:
            # vector mode: semantics only, as asked; a chunk the vector passes did not score is no
            # nearer than the last one they read (`found.bound`)
            coverage = self.backend.term_coverage(query, texts) if wanted else [None] * len(ids)
            similar = found.similarity if found.vector is not None else None
            return [
                relevance.Evidence(None if similar is None else similar.get(i, found.bound), c)
                for i, c in zip(ids, coverage, strict=True)
            ]

        return relevance.pick(self.backend, fused, k, judge, self.fusion.min_score, scale)

    def _keyword_worker_if_concurrent(self) -> ThreadPoolExecutor | None:
        """The thread a hybrid search runs the keyword pass on while the query is embedded and
        the vectors scanned, and that then helps with the vector passes (passes.py); None when the
        backend cannot run it alongside. SQLite and the model (on one thread, embedders.py) both
        leave the GIL, so the two overlap instead of adding up: at 100,000 chunks on 2 cores, p50
        53 -> 36 ms and p95 108 -> 80 ms, and faster with the other core busy too. The hits are
        the same: the passes are independent. The worker starts on first use and lives until
        `close`."""
        if not getattr(self.backend, "concurrent_keyword_search", False):
            return None  # the backend cannot: the keyword pass runs first, on the calling thread
        if self._keyword_worker is None:
            self._keyword_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kb-keyword")
        return self._keyword_worker

    def stats(self) -> KnowledgeStats:
        return KnowledgeStats(self.backend.stats(), self.vector_scheme, self.notice())

    def notice(self) -> str | None:
        """Why a search is not the full hybrid one (or what `kb sync` would change), said once by
        `kb stats`, `kb search` and `kb_search`; None when all is in order. Cheap enough for every
        search: no counting beyond the pending vectors (an index answers that)."""
        if self.embedder is None:
            return no_embedder_notice()
        stored = self.backend.vector_model()
        ours = self.vectors_ready(complete=False)
        if ours and stored != self.vector_scheme:
            made = "with" if stored and stored.endswith("+sentences") else "without"
            return f"the vectors were made {made} sentence vectors: run `arreio kb sync` to match the setting"
        if ours or stored is None:  # ours, or none yet: the chunks without one are pending
            missing = self.backend.count_pending_vectors()
            what = f"{missing} chunks have" if missing else None
        else:  # another model's vectors: every chunk needs a new one
            what = "the chunks have"
        if what is None:
            return None
        return f"{what} no {self.vector_scheme} vectors yet (keyword search only): run `arreio kb sync`"

    def close(self) -> None:
        if self._keyword_worker is not None:
            self._keyword_worker.shutdown()
            self._keyword_worker = None
        self.backend.close()


def open_knowledge_base(
    state_dir: Path,
    embedder: Embedder | None | Literal["auto"] = "auto",
    settings: KnowledgeSettings | None = None,
    **options: Any,
) -> KnowledgeBase:
    """The production knowledge base: `state_dir/knowledge.sqlite`, the default embedder, and the
    fusion and sentence-vector choices of the `knowledge:` config section."""
    from arreio.memory.knowledge.sqlite_backend import SqliteBackend

    if settings is not None:
        options = {"fusion": settings.fusion(), "sentence_vectors": settings.sentence_vectors, **options}
    chosen = default_embedder() if embedder == "auto" else embedder
    return KnowledgeBase(SqliteBackend(state_dir / DB_NAME), chosen, **options)  # `redactor=` among the options
