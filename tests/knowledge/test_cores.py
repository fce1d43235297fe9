"""How many cores a search may use now (cores.idle_cores) and in all (cores.usable_cores), and how a
hybrid search uses two idle ones: the query embedded on two threads, the keyword pass after it
beside the scan, and the same hits whatever the count."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from arreio.memory.knowledge import passes
from arreio.memory.knowledge.cores import cgroup_quota, cpu_flags, idle_cores, runnable_now, usable_cores
from arreio.memory.knowledge.embedders import HashingEmbedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.query_threads import QueryThreads
from arreio.memory.knowledge.sqlite_backend import SqliteBackend


def loadavg(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "loadavg"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("running", "usable", "limit", "expected"),
    [
        (1, 2, 3, 2),  # only the caller runs: both cores idle
        (1, 8, 3, 3),  # capped by the limit
        (2, 2, 3, 1),  # one other task on a 2-core machine
        (3, 4, 3, 2),
        (9, 4, 3, 1),  # oversubscribed: never below 1
        (1, 1, 3, 1),
    ],
)
def test_idle_cores_counts_the_cores_no_other_task_runs_on(
    tmp_path: Path, running: int, usable: int, limit: int, expected: int
) -> None:
    path = loadavg(tmp_path, f"0.52 0.61 0.70 {running}/311 40213\n")
    assert runnable_now(path) == running
    assert idle_cores(limit, usable=usable, runnable=lambda: runnable_now(path)) == expected


@pytest.mark.parametrize("text", ["", "0.1 0.2 0.3", "0.1 0.2 0.3 x/12 5", "garbage"])
def test_an_unreadable_loadavg_means_one_core(tmp_path: Path, text: str) -> None:
    path = loadavg(tmp_path, text)
    assert runnable_now(path) is None and runnable_now(tmp_path / "missing") is None
    assert idle_cores(3, usable=8, runnable=lambda: runnable_now(path)) == 1


@pytest.mark.parametrize(
    ("counts", "expected", "looked"),
    [
        ([3, 1], 2, 2),  # someone ran for a moment: gone at the second look
        ([2, 2, 1], 2, 3),
        ([2, 2, 2], 1, 3),  # there at every look: a job that keeps a core busy
        ([3, 2, 2], 1, 3),
        ([1, 3], 2, 1),  # idle at once: one look
    ],
)
def test_a_task_seen_for_a_moment_does_not_count(counts: list[int], expected: int, looked: int) -> None:
    seen = iter(counts)
    taken: list[int] = []

    def runnable() -> int:
        taken.append(next(seen))
        return taken[-1]

    assert idle_cores(3, usable=2, runnable=runnable) == expected
    assert taken == counts[:looked]


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="Linux only")
def test_busy_neighbours_leave_no_idle_core() -> None:
    """Real processes spinning on every usable core: the kernel's runnable count sees them."""
    spin = "import time\nend = time.time() + 20\nwhile time.time() < end: pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(usable_cores())]
    try:
        deadline = time.monotonic() + 10
        seen = idle_cores(8)
        while seen != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
            seen = idle_cores(8)
        assert seen == 1
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def cgroup_tree(tmp_path: Path, own: str, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    own_path = tmp_path / "self-cgroup"
    own_path.write_text(own)
    return root, own_path


@pytest.mark.parametrize(
    ("own", "files", "expected"),
    [
        ("0::/job\n", {"job/cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: rounded up
        ("0::/job\n", {"job/cpu.max": "100000 100000\n"}, 1),
        ("0::/job\n", {"job/cpu.max": "max 100000\n"}, None),
        ("0::/\n", {}, None),  # no cpu.max at the root
        (
            "4:memory:/m\n3:cpu,cpuacct:/box\n0::/\n",
            {"cpu,cpuacct/box/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/box/cpu.cfs_period_us": "100000\n"},
            3,
        ),
        (
            "3:cpu,cpuacct:/box\n",
            {"cpu,cpuacct/box/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/box/cpu.cfs_period_us": "100000\n"},
            None,
        ),
        ("0::/job\n", {"job/cpu.max": "lots 0\n"}, None),
        ("not a cgroup line\n", {}, None),
    ],
)
def test_a_cgroup_quota_caps_the_cores(tmp_path: Path, own: str, files: dict[str, str], expected: int | None) -> None:
    root, own_path = cgroup_tree(tmp_path, own, files)
    assert cgroup_quota(root, own_path) == expected


def test_usable_cores_is_within_the_affinity() -> None:
    assert 1 <= usable_cores() <= len(os.sched_getaffinity(0))


class RecordingEmbedder(HashingEmbedder):
    """Records the threads each query was embedded with, and when, beside the backend's log."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log
        self.threads: list[int] = []

    def embed_query(self, text: str, threads: int = 1):
        self.threads.append(threads)
        self.log.append("embed start")
        time.sleep(0.05)  # long enough that a keyword pass started alongside would show in the log
        vector = super().embed_query(text)
        self.log.append("embed end")
        return vector


class LoggingBackend(SqliteBackend):
    def __init__(self, path: Path, log: list[str]) -> None:
        super().__init__(path)
        self.log = log
        self.lock = threading.Lock()

    keyword_delay = 0.0

    def keyword_search(self, query: str, n: int):
        with self.lock:
            self.log.append("keyword")
        time.sleep(self.keyword_delay)
        return super().keyword_search(query, n)


@pytest.fixture
def logged(tmp_path: Path, docs: Path):
    log: list[str] = []
    backend = LoggingBackend(tmp_path / "state" / "knowledge.sqlite", log)
    embedder = RecordingEmbedder(log)
    kb = KnowledgeBase(backend, embedder)
    kb.add(["."], docs)
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kb-keyword")
    yield backend, embedder, worker, log
    worker.shutdown()
    kb.close()


def search(logged, query: str, **how) -> passes.Rankings:
    """One hybrid ranking through `logged`'s backend, embedder and worker."""
    backend, embedder, worker, _ = logged
    return passes.rank(
        backend, query, 20, keyword=True, embedder=embedder, sentences=True, pool=500, worker=worker, **how
    )


@pytest.mark.parametrize(("idle", "threads", "keyword_alongside"), [(1, 1, True), (2, 2, False), (3, 2, True)])
def test_idle_cores_decide_the_query_threads_and_when_the_keyword_pass_starts(
    logged, idle: int, threads: int, keyword_alongside: bool
) -> None:
    _, embedder, _, log = logged
    found = search(logged, "compost green material", idle=idle)
    assert embedder.threads == [threads]
    assert found.keyword  # the keyword pass ran either way
    if keyword_alongside:
        assert log.index("keyword") < log.index("embed end")
    else:
        assert log.index("keyword") > log.index("embed end")


def test_the_hits_do_not_depend_on_the_idle_cores(logged) -> None:
    for query in ("compost", "how do I water tomatoes", "retry with exponential backoff", "platypus"):
        rankings = [search(logged, query, idle=idle) for idle in (1, 2, 3)]
        assert rankings[0] == rankings[1] == rankings[2]


def test_a_search_uses_one_thread_when_two_have_been_slower(logged) -> None:
    _, embedder, _, log = logged
    choice = QueryThreads(explore_every=1000)
    for _ in range(2):  # the first of each is a warm-up
        choice.record(2, 2, 0.045, "compost")  # two threads waited on a core the host took
        choice.record(1, 2, 0.021, "compost")
    search(logged, "compost", idle=2, query_threads=choice)
    assert embedder.threads == [1]
    assert log.index("keyword") < log.index("embed end")  # one thread: the keyword pass alongside
    assert choice.costs()[1] != 0.021 / (len("compost") + 24)  # this search's time was kept too


@pytest.mark.parametrize(("keyword_s", "counts"), [(0.0, [1, 2, 2]), (0.25, [1, 1, 1])])
def test_two_threads_only_after_a_quick_keyword_pass(logged, keyword_s: float, counts: list[int]) -> None:
    """The first search embeds on one thread with the keyword pass alongside; later ones on two,
    unless the keyword pass was slow (FTS5 ranking a new index state)."""
    backend, embedder, _, _ = logged
    backend.keyword_delay = keyword_s
    choice = QueryThreads(explore_every=1000, quick_keyword_s=0.1)  # a margin for a loaded machine
    for _ in counts:
        search(logged, "compost", idle=2, query_threads=choice)
    assert embedder.threads == counts


ZEN4 = "flags\t\t: fpu vme avx2 avx512f avx512_bf16 avx512_vnni\n"
SAPPHIRE_RAPIDS = "flags\t\t: fpu avx512f avx512_bf16 amx_bf16 amx_tile amx_int8\n"


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        (f"processor\t: 0\nvendor_id\t: AuthenticAMD\n{ZEN4}\nprocessor\t: 1\n{SAPPHIRE_RAPIDS}", {"avx512_bf16"}),
        (SAPPHIRE_RAPIDS, {"amx_bf16", "avx512_bf16"}),
        ("processor\t: 0\nFeatures\t: fp asimd bf16 sve\n", {"bf16", "asimd"}),
        ("processor\t: 0\nmodel name\t: flags: amx_bf16 in a name\n", set()),
        ("", set()),
        ("\xff\xfe garbage \x00\n", set()),
    ],
)
def test_cpu_flags_are_the_first_processor_s(tmp_path, text: str, flags: set[str]) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_bytes(text.encode("latin-1"))
    found = cpu_flags(cpuinfo)
    assert flags <= found
    assert ("amx_bf16" in found) == ("amx_bf16" in flags)
