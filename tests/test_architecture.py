"""The house rules that hold the rooms apart (docs/architecture.md sections 1 and 8), checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ROOMS = ("cli", "engine", "memory", "learning", "curator", "api")
LAYERS_ABOVE_ENGINE = ("arreio.memory", "arreio.learning", "arreio.curator", "arreio.cli", "arreio.api")
MAX_LINES = 400
MAX_RUNNER_LINES = 250


def modules(room: str) -> list[Path]:
    return sorted(p for p in (REPO / room).rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path) -> list[str]:
    """Every module an import names, at any depth (function-level imports included)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_the_engine_imports_nothing_from_the_layers_above_it() -> None:
    found = [(p.relative_to(REPO).as_posix(), name) for p in modules("engine") for name in imported(p)
             if name.startswith(LAYERS_ABOVE_ENGINE)]
    assert found == []


def test_code_imports_the_namespace_package_never_the_folders() -> None:
    bare = ("engine", "memory", "learning", "curator", "cli", "api")
    found = [(p.relative_to(REPO).as_posix(), name) for room in ROOMS for p in modules(room) for name in imported(p)
             if name.split(".")[0] in bare]
    assert found == []


@pytest.mark.parametrize("room", ROOMS)
def test_no_module_is_over_400_lines(room: str) -> None:
    long = {p.relative_to(REPO).as_posix(): n for p in modules(room)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_runner_stays_short() -> None:
    assert len((REPO / "engine/conveyor/runner.py").read_text(encoding="utf-8").splitlines()) <= MAX_RUNNER_LINES


def test_every_provider_comes_from_the_one_factory() -> None:
    """Only the registry builds providers; everything else asks the run's `provider_factory`."""
    calls = []
    for room in ROOMS:
        for path in modules(room):
            if path == REPO / "engine/providers/registry.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    if name in ("make_provider", "_vendor_provider"):
                        calls.append(path.relative_to(REPO).as_posix())
    assert calls == []


def test_the_listed_subpackages_are_every_package_on_disk() -> None:
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {"arreio." + ".".join(p.parent.relative_to(REPO).parts) for room in ROOMS
               for p in (REPO / room).rglob("__init__.py")}
    assert on_disk <= listed, sorted(on_disk - listed)


def test_no_test_uses_unittest_mock() -> None:
    users = [p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("*.py")
             if any(name.startswith("unittest.mock") or name == "unittest" for name in imported(p))]
    assert users == []


# Where logic may read the wall clock or the process environment (docs/architecture.md section 8: time and
# environment are injected). Each entry names what it may use, and why nothing can hand it in instead.
EDGES: dict[str, set[str]] = {
    # The port implementations: `SystemClock` (the real `Clock`) and `process_env` (the real `Env`).
    "engine/ports.py": {"datetime.now", "os.environ"},
    # litellm reads LITELLM_LOCAL_MODEL_COST_MAP / LITELLM_OFFLINE_MODE only from the process environment,
    # at import and on later calls (its cost map, its offline checks), and takes no parameter for them.
    "engine/providers/litellm.py": {"os.environ"},
    # libgomp, loaded by the embedding model's C engine, reads its wait policy with getenv() when it loads:
    # no API sets it; the settings are put in for the load and taken out after (a command gets `ctx.env`).
    "memory/knowledge/embedders.py": {"os.environ"},
}
_OS_ENV = {"environ", "getenv", "putenv", "unsetenv", "environb", "getenvb"}


def _clock_and_env_uses(tree: ast.AST) -> set[str]:
    """`datetime.now(`, `time.time(` and any touch of the process environment (`os.environ`,
    `os.getenv`, `from os import environ`, …) in a parsed module."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr in _OS_ENV:
                found.add("os.environ")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(alias.name in _OS_ENV for alias in node.names):
                found.add("os.environ")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            owner_name = getattr(owner, "id", None) or getattr(owner, "attr", "")
            if node.func.attr in ("now", "utcnow", "today") and owner_name == "datetime":
                found.add("datetime.now")
            elif node.func.attr == "time" and owner_name == "time":
                found.add("time.time")
    return found


def test_time_and_the_environment_are_read_only_at_the_edges() -> None:
    uses = {}
    for room in ROOMS:
        for path in modules(room):
            rel = path.relative_to(REPO).as_posix()
            found = _clock_and_env_uses(ast.parse(path.read_text(encoding="utf-8")))
            if extra := found - EDGES.get(rel, set()):
                uses[rel] = sorted(extra)
    assert uses == {}, "read the clock through `Clock`, the environment through an `Env` handed in"


def test_every_edge_in_the_list_still_needs_its_entry() -> None:
    stale = {rel: sorted(allowed - _clock_and_env_uses(ast.parse((REPO / rel).read_text(encoding="utf-8"))))
             for rel, allowed in EDGES.items()}
    assert {rel: names for rel, names in stale.items() if names} == {}


def test_the_check_sees_each_form() -> None:
    source = ("import os, time\nfrom datetime import datetime\nfrom os import getenv\n"
              "a = os.environ.get('X')\nos.environ['Y'] = '1'\nb = datetime.now()\nc = time.time()\n")
    assert _clock_and_env_uses(ast.parse(source)) == {"os.environ", "datetime.now", "time.time"}
    assert _clock_and_env_uses(ast.parse("import time\nt = time.monotonic()\nenv = {}\n")) == set()
