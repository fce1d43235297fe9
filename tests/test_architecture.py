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
