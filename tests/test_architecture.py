"""The house rules that hold the rooms apart (docs/architecture.md sections 1 and 8), checked on the source.

The layer table below is the one direction of imports: a module may import its own room, the rooms of
its own layer, and the layers under it — never a layer above, not even for type checking only."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ROOMS = ("cli", "engine", "memory", "learning", "curator", "api")
LAYERS_ABOVE_ENGINE = ("arreio.memory", "arreio.learning", "arreio.curator", "arreio.cli", "arreio.api")
MAX_LINES = 400

# Bottom to top. A room imports only from its own layer and the layers listed before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("engine.core",),  # events, messages, errors, ports, paths, config, ids
    ("engine.walls",),  # the rules of the agent's room: policy, redaction, protected paths
    ("engine.session", "engine.providers", "engine.checkpoints"),  # what is kept, who answers, what can be undone
    ("engine.tools",),  # what the agent can do, and the run context tools see
    ("engine.loop",),  # the runner: model call, tool round, reply, hooks
    ("engine.context", "engine.governance", "engine.judgement"),  # hooks on the loop; verdicts on its answers
    ("engine.features",),  # tool families and tracing plugged into a run
    ("engine.run",),  # one run: prepare, units, gates, report
    ("engine.batch",),  # many runs
    ("memory",),
    ("learning", "curator"),
    ("api",),  # the library's entry and composition root
    ("cli",),
)
RANK = {room: rank for rank, rooms in enumerate(LAYERS) for room in rooms}
MAX_RUNNER_LINES = 310  # as ruff formats it: the loop and its few helpers; past this, split by noun


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process (every check walks every module; none changes a tree)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def modules(room: str) -> list[Path]:
    return sorted(p for p in (REPO / room).rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path) -> list[str]:
    """Every module an import names, at any depth (function-level imports included)."""
    names: list[str] = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def room_of(module: str) -> str | None:
    """`arreio.engine.loop.runner` → `engine.loop`; `arreio.cli.app` → `cli`; anything else → None."""
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "arreio":
        return None
    if parts[1] == "engine":
        return f"engine.{parts[2]}" if len(parts) > 2 else "engine"
    return parts[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return "arreio." + ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_edges(path: Path) -> list[str]:
    """The arreio modules a file imports; `from arreio.engine import x` names `arreio.engine.x`."""
    names: list[str] = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            parent = node.module
            names += [f"{parent}.{a.name}" for a in node.names] if parent in ("arreio", "arreio.engine") else [parent]
    return [n for n in names if n.startswith("arreio.")]


def upward_edges(paths: list[Path]) -> list[tuple[str, str]]:
    found = []
    for path in paths:
        mine = room_of(module_name(path))
        for name in import_edges(path):
            theirs = room_of(name)
            if mine in RANK and theirs in RANK and RANK[theirs] > RANK[mine]:
                found.append((module_name(path), name))
    return sorted(set(found))


def test_every_room_is_in_the_layer_table() -> None:
    rooms = {room_of(module_name(p)) for room in ROOMS for p in modules(room)} - {"engine"}
    assert rooms - set(RANK) == set()


def test_the_engine_has_no_module_outside_a_room() -> None:
    assert [p.name for p in (REPO / "engine").glob("*.py") if p.name != "__init__.py"] == []


def test_no_import_points_up_the_layer_table() -> None:
    """Function-level and `TYPE_CHECKING` imports included: a type from above is a dependency too."""
    assert upward_edges([p for room in ROOMS for p in modules(room)]) == []


@pytest.mark.parametrize(
    ("source", "wrong"),
    [
        ("from arreio.engine.loop.runner import Runner\n", "arreio.engine.tools.run_context"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from arreio.engine.run.plan import Plan\n",
            "arreio.engine.judgement.gates",
        ),
        (
            "def f():\n    from arreio.engine.context.compaction import prepare_compaction\n",
            "arreio.engine.providers.offline.model",
        ),
        ("from arreio.engine import loop\n", "arreio.engine.core.events"),
        ("from arreio.cli.deps import pipeline_deps\n", "arreio.api.running"),
    ],
)
def test_the_layer_check_sees_an_upward_import(tmp_path: Path, source: str, wrong: str) -> None:
    """The check itself: each kind of upward import, planted in a copy of a module's path, is found."""
    parts = wrong.split(".")[1:]
    path = REPO.joinpath(*parts[:-1], f"_planted_{parts[-1]}.py")
    path.write_text(source, encoding="utf-8")
    try:
        assert upward_edges([path]), source
    finally:
        path.unlink()


def test_the_engine_imports_nothing_from_the_layers_above_it() -> None:
    found = [
        (p.relative_to(REPO).as_posix(), name)
        for p in modules("engine")
        for name in imported(p)
        if name.startswith(LAYERS_ABOVE_ENGINE)
    ]
    assert found == []


def test_code_imports_the_namespace_package_never_the_folders() -> None:
    bare = ("engine", "memory", "learning", "curator", "cli", "api")
    found = [
        (p.relative_to(REPO).as_posix(), name)
        for room in ROOMS
        for p in modules(room)
        for name in imported(p)
        if name.split(".")[0] in bare
    ]
    assert found == []


@pytest.mark.parametrize("room", ROOMS)
def test_no_module_is_over_400_lines(room: str) -> None:
    long = {
        p.relative_to(REPO).as_posix(): n
        for p in modules(room)
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_runner_stays_short() -> None:
    assert len((REPO / "engine/loop/runner.py").read_text(encoding="utf-8").splitlines()) <= MAX_RUNNER_LINES


def test_every_provider_comes_from_the_one_factory() -> None:
    """Only the registry builds providers; everything else asks the run's `provider_factory`."""
    calls = []
    for room in ROOMS:
        for path in modules(room):
            if path == REPO / "engine/providers/registry.py":
                continue
            for node in ast.walk(parsed(path)):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    if name in ("make_provider", "_vendor_provider"):
                        calls.append(path.relative_to(REPO).as_posix())
    assert calls == []


def test_the_listed_subpackages_are_every_package_on_disk() -> None:
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        "arreio." + ".".join(p.parent.relative_to(REPO).parts)
        for room in ROOMS
        for p in (REPO / room).rglob("__init__.py")
    }
    assert on_disk <= listed, sorted(on_disk - listed)


def test_no_test_uses_unittest_mock() -> None:
    # An import names its module in the source, so a file without the word cannot import it: only the
    # few with it are parsed (parsing every test file was nearly all of this test's seconds).
    users = [
        p.relative_to(REPO).as_posix()
        for p in (REPO / "tests").rglob("*.py")
        if "unittest" in p.read_text(encoding="utf-8")
        and any(name.startswith("unittest.mock") or name == "unittest" for name in imported(p))
    ]
    assert users == []


def feature_probes(tree: ast.AST) -> list[int]:
    """Lines that look a feature's extension point up by name (`getattr(feature, "…")`) instead of
    calling a method the `Feature` contract declares."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            target = node.args[0] if node.args else None
            if isinstance(target, ast.Name) and "feature" in target.id.lower():
                lines.append(node.lineno)
    return lines


def test_features_are_called_through_their_contract_never_probed_by_name() -> None:
    found = {
        p.relative_to(REPO).as_posix(): lines
        for room in ROOMS
        for p in modules(room)
        if (lines := feature_probes(parsed(p)))
    }
    assert found == {}


def test_the_feature_probe_check_sees_one() -> None:
    assert feature_probes(ast.parse('for feature in fs:\n    hook = getattr(feature, "tools_resolved", None)\n')) == [2]


# -- hooks return values, the runner owns its state (docs/architecture.md section 1) ----------------
HOOK_BASES = ("RunHook", "WarningsHook")
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update"})


def _root(node: ast.expr) -> ast.expr:
    """`a` of `a.b[c].d`: what an assignment target's attribute and subscript chain starts from."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def _targets(node: ast.AST) -> list[ast.expr]:
    """What an assignment writes, tuples unpacked (`a.x, a.y = ...`)."""
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        found = [node.target]
    else:
        return []
    flat: list[ast.expr] = []
    while found:
        target = found.pop()
        if isinstance(target, ast.Tuple | ast.List):
            found += target.elts
        else:
            flat.append(target)
    return flat


def _is_runner(node: ast.expr) -> bool:
    """`runner`, `self.runner`, `ctx.runner`, `self._runner`: a runner reached from outside it."""
    return (isinstance(node, ast.Name) and node.id == "runner") or (
        isinstance(node, ast.Attribute) and node.attr in ("runner", "_runner")
    )


# What counts into the run's counters (engine/loop/totals.py): the runner alone calls these.
COUNTERS = frozenset({"add_usage", "count_call", "count_turn", "record_call", "told"})


def _parts(node: ast.expr) -> list[ast.expr]:
    """`a.b[c].d` → [`a.b[c].d`, `a.b[c]`, `a.b`, `a`]: the chain an attribute or item hangs from."""
    chain = [node]
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
        chain.append(node)
    return chain


def _through_runner(node: ast.expr, aliases: set[str], *, session_too: bool = True) -> bool:
    """Whether `node` is reached through a runner: `runner…`, `self.runner…`, a hook's view of one
    (`turn…`, in the aliases unless the module binds `turn` to something else), or a name bound to any
    of those (`r = self.runner`, `totals = runner.totals`). `session_too=False`: not through its
    session, whose own methods (append, rewrite) are its API."""
    for part in _parts(node):
        if not session_too and isinstance(part, ast.Attribute) and part.attr == "session":
            return False
        if _is_runner(part) or (isinstance(part, ast.Name) and part.id in aliases):
            return True
    return False


def _runner_aliases(tree: ast.AST) -> set[str]:
    """Names bound to a runner or to something of it (`r = self.runner`, `a, t = x, runner.totals`)."""
    bound = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    aliases: set[str] = set() if "turn" in bound else {"turn"}  # a hook's view of the runner asking it
    grew = True
    while grew:
        grew = False
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                pairs = (
                    zip(target.elts, node.value.elts, strict=False)
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                    else [(target, node.value)]
                )
                for name, value in pairs:
                    if (
                        isinstance(name, ast.Name)
                        and name.id not in aliases
                        and name.id != "runner"
                        and isinstance(value, ast.Name | ast.Attribute | ast.Subscript)
                        and _through_runner(value, aliases, session_too=False)
                    ):
                        aliases.add(name.id)
                        grew = True
    return aliases


def _scoped(tree: ast.Module, scopes: list[ast.AST]) -> list[tuple[ast.AST, set[str]]]:
    """Each node of the module with the runner aliases of the function it is in (its innermost;
    the module's own statements outside any function get the module's)."""
    out: dict[int, tuple[ast.AST, set[str]]] = {}
    for scope in [tree, *scopes]:  # outer first: an inner function's nodes are given its aliases last
        aliases = _runner_aliases(scope)
        for node in ast.walk(scope):
            out[id(node)] = (node, aliases)
    return list(out.values())


def runner_writes(root: Path) -> list[str]:
    """Writes into a runner anywhere but the module that defines `class Runner`: `runner.<attr> = …`
    and `+=`; a field of something it owns (`runner.totals.retries += 1`, `turn.totals.x = …`);
    the same through a local name (`r = self.runner; r.model = …`); a list or dict of it changed in
    place (`runner.totals.switches.append(…)`); and counting into its counters from outside
    (`turn.totals.add_usage(…)`, `runner.totals.count_call(…)`)."""
    found = []
    for room in ROOMS:
        for path in sorted(p for p in (root / room).rglob("*.py") if "__pycache__" not in p.parts):
            tree = parsed(path)
            if any(isinstance(n, ast.ClassDef) and n.name == "Runner" for n in tree.body):
                continue
            scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            for node, aliases in _scoped(tree, scopes):
                for target in _targets(node):
                    if isinstance(target, ast.Attribute | ast.Subscript) and _through_runner(target.value, aliases):
                        found.append(f"{path.relative_to(root).as_posix()}:{target.lineno}")
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in MUTATORS | COUNTERS
                    and _through_runner(node.func.value, aliases, session_too=False)
                ):
                    found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def _is_hook(node: ast.ClassDef) -> bool:
    named = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases}
    return bool(named & set(HOOK_BASES)) or any(
        isinstance(f, ast.AsyncFunctionDef | ast.FunctionDef) and f.name == "before_model" for f in node.body
    )


def request_writes(root: Path, rooms: tuple[str, ...] = (*ROOMS, "tests")) -> list[str]:
    """In a hook's methods, a write into the `request` they were given: an attribute or item assigned
    (`request.tools = …`, `request.messages[:] = …`) or a list of it changed in place (`.append`)."""
    found = []
    for room in rooms:
        for path in sorted(p for p in (root / room).rglob("*.py") if "__pycache__" not in p.parts):
            for cls in ast.walk(parsed(path)):
                if not (isinstance(cls, ast.ClassDef) and _is_hook(cls)):
                    continue
                for method in cls.body:
                    if not isinstance(method, ast.AsyncFunctionDef | ast.FunctionDef):
                        continue
                    if "request" not in {a.arg for a in method.args.args + method.args.kwonlyargs}:
                        continue
                    for node in ast.walk(method):
                        writes = [t for t in _targets(node) if isinstance(t, ast.Attribute | ast.Subscript)]
                        if (
                            isinstance(node, ast.Call)
                            and isinstance(node.func, ast.Attribute)
                            and node.func.attr in MUTATORS
                        ):
                            writes.append(node.func.value)
                        for target in writes:
                            root_node = _root(target)
                            if (
                                target is not root_node
                                and isinstance(root_node, ast.Name)
                                and root_node.id == "request"
                            ):
                                found.append(
                                    f"{path.relative_to(root).as_posix()}:{node.lineno} {cls.name}.{method.name}"
                                )
    return found


def test_nothing_outside_the_runner_writes_the_runners_attributes() -> None:
    """The runner's state is the runner's: a model call, a tool round, a unit hand back what happened
    (engine/loop/model_call.py yields its `CallState`) and the runner records it."""
    assert runner_writes(REPO) == []


def test_no_hook_changes_the_request_it_is_shown() -> None:
    """Hooks return values (`Rewrite`, `Stop`, `Land`) and the runner applies them: a hook that
    assigned into the request changed what the hooks after it and the runner's records saw."""
    assert request_writes(REPO) == []


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """Both scans on code that breaks the rules (so an empty answer above means something)."""
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "bad.py").write_text(
        "class H(RunHook):\n"
        "    async def before_model(self, turn, request):\n"
        "        request.tools = []\n"
        "        request.messages[:] = []\n"
        "        request.messages.append(1)\n"
        "        self._helper(request)\n"
        "    def _helper(self, request):\n"
        "        request.max_tokens += 1\n"
        "        kept = request.tools\n"
        "def call(runner, state):\n"
        "    runner.model, runner.provider = state\n"
        "    self.runner.last_error = None\n"
        "    runner.totals.retries += 1\n"
        "    runner.totals.switches.append({})\n"
        "    r = self.runner\n"
        "    r.model = None\n"
        "    totals = runner.totals\n"
        "    totals.by_model['m'] = None\n"
        "    self.runner.totals.count_call('x')\n"
        "    runner.session.append(None)\n"  # the session's own API
        "    kept = runner.totals.retries\n"  # a read
        "class Counts(RunHook):\n"
        "    async def after_tool_round(self, turn):\n"
        "        turn.totals.add_usage(None)\n"
        "        turn.tools = []\n"
        "def transcript(messages):\n"
        "    turn = Turn()\n"
        "    turn.entries.append(1)\n",  # a turn of a transcript, no runner's
        encoding="utf-8",
    )
    (tmp_path / "engine" / "runner.py").write_text(
        "class Runner:\n    def f(self, runner):\n        runner.x = 1\n", encoding="utf-8"
    )
    assert request_writes(tmp_path, ("engine",)) == [
        "engine/bad.py:3 H.before_model",
        "engine/bad.py:4 H.before_model",
        "engine/bad.py:5 H.before_model",
        "engine/bad.py:8 H._helper",
    ]
    assert sorted(runner_writes(tmp_path), key=lambda at: int(at.rsplit(":", 1)[1])) == [
        f"engine/bad.py:{n}" for n in (11, 11, 12, 13, 14, 16, 18, 19, 24, 25)
    ]


# Where logic may read the wall clock or the process environment (docs/architecture.md section 8: time and
# environment are injected). Each entry names what it may use, and why nothing can hand it in instead.
EDGES: dict[str, set[str]] = {
    # The port implementations: `SystemClock` (the real `Clock`) and `process_env` (the real `Env`).
    "engine/core/ports.py": {"datetime.now", "os.environ"},
    # litellm reads LITELLM_LOCAL_MODEL_COST_MAP / LITELLM_OFFLINE_MODE only from the process environment,
    # at import and on later calls (its cost map, its offline checks), and takes no parameter for them.
    "engine/providers/litellm.py": {"os.environ"},
    # libgomp, loaded by the embedding model's C engine, reads its wait policy with getenv() when it loads:
    # no API sets it; the settings are put in for the load and taken out after (a command gets `ctx.env`).
    "memory/knowledge/embedders.py": {"os.environ"},
    # multiprocessing's spawn start method gives a worker the parent's environment and takes no other; BLAS
    # reads its thread count from it before any code of ours runs there: set for the pool's start, then taken out.
    "memory/knowledge/embedding.py": {"os.environ"},
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
            found = _clock_and_env_uses(parsed(path))
            if extra := found - EDGES.get(rel, set()):
                uses[rel] = sorted(extra)
    assert uses == {}, "read the clock through `Clock`, the environment through an `Env` handed in"


def test_every_edge_in_the_list_still_needs_its_entry() -> None:
    stale = {rel: sorted(allowed - _clock_and_env_uses(parsed(REPO / rel))) for rel, allowed in EDGES.items()}
    assert {rel: names for rel, names in stale.items() if names} == {}


def test_the_check_sees_each_form() -> None:
    source = (
        "import os, time\nfrom datetime import datetime\nfrom os import getenv\n"
        "a = os.environ.get('X')\nos.environ['Y'] = '1'\nb = datetime.now()\nc = time.time()\n"
    )
    assert _clock_and_env_uses(ast.parse(source)) == {"os.environ", "datetime.now", "time.time"}
    assert _clock_and_env_uses(ast.parse("import time\nt = time.monotonic()\nenv = {}\n")) == set()


# -- the run's report is assembled from the sections features return (engine/loop/report.py) -------------
def _report_names(tree: ast.AST) -> set[str]:
    """The names that hold a RunReport in a module: `report`, a parameter or variable annotated
    `RunReport`, and a name bound to one of those (an alias)."""
    names = {"report"}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            annotation = ast.unparse(node.annotation)
            if "RunReport" in annotation:
                target = node.arg if isinstance(node, ast.arg) else ast.unparse(node.target)
                names.add(target)
    grew = True
    while grew:  # `r = report`, `a = b = report`: the alias writes as well as the name
        grew = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id not in names:
                        names.add(target.id)
                        grew = True
    return names


def _holds(node: ast.expr, names: set[str]) -> bool:
    """Whether `node` is one of `names`, or `self.report` / `self._report`."""
    return (isinstance(node, ast.Name) and node.id in names) or (
        isinstance(node, ast.Attribute) and node.attr in ("report", "_report")
    )


def report_writes(root: Path) -> list[str]:
    """Writes into a RunReport anywhere but the module that defines (and assembles) it: a field
    assigned (`report.x = …`, `report.x += …`, `report.x[k] = …`), a field changed in place
    (`report.warnings.append(…)`), or `setattr(report, …)`. Only modules that name `RunReport` or
    define an `after_run` are read (other reports — a curator's, an index's — are their own business)."""
    found = []
    for room in ROOMS:
        for path in sorted(p for p in (root / room).rglob("*.py") if "__pycache__" not in p.parts):
            source = path.read_text(encoding="utf-8")
            tree = parsed(path)
            if ("RunReport" not in source and "def after_run" not in source) or any(
                isinstance(n, ast.ClassDef) and n.name == "RunReport" for n in tree.body
            ):
                continue
            names = _report_names(tree)
            for node in ast.walk(tree):
                written = [t for t in _targets(node) if isinstance(t, ast.Attribute | ast.Subscript)]
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                    if isinstance(node.func.value, ast.Attribute | ast.Subscript):
                        written.append(node.func.value)
                if isinstance(node, ast.Call) and ast.unparse(node.func) in ("setattr", "object.__setattr__"):
                    written += node.args[:1]
                for target in written:
                    start = target if _holds(target, names) else _root(target)
                    inner = target.value if isinstance(target, ast.Attribute | ast.Subscript) else target
                    if _holds(start, names) or _holds(inner, names) or _holds(_root(inner), names):
                        found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return sorted(set(found))


def test_nothing_writes_into_the_run_report() -> None:
    """Each feature returns its own section (`Feature.after_run` → `Section`) and the run folds them
    into the report; no feature sets a field of it, its own or another's."""
    assert report_writes(REPO) == []


def test_the_report_check_sees_each_form(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "bad.py").write_text(
        "from x import RunReport\n"
        "def after_run(ctx, report):\n"
        "    report.changes = {}\n"
        "    report.warnings.append('w')\n"
        "    report.warnings += ['w']\n"
        "def fill(r: RunReport, data):\n"
        "    r.compactions = 1\n"
        "    r.tools_used['x'] = 1\n"
        "    alias = r\n"
        "    alias.partial_path = 'p'\n"
        "    setattr(r, 'ceiling', None)\n"
        "    self.report.approvals.extend([])\n"
        "    data.items.append(1)\n"
        "    kept = r.warnings\n",
        encoding="utf-8",
    )
    (tmp_path / "engine" / "other.py").write_text("def f(report):\n    report.changes.append(1)\n", encoding="utf-8")
    (tmp_path / "engine" / "traced.py").write_text(
        "class F:\n    def after_run(self, ctx, report: Any):\n        report.warnings.append('w')\n", encoding="utf-8"
    )
    (tmp_path / "engine" / "report.py").write_text(
        "class RunReport:\n    def f(self, report):\n        report.x = 1\n", encoding="utf-8"
    )
    assert report_writes(tmp_path) == sorted(
        [*(f"engine/bad.py:{n}" for n in (3, 4, 5, 7, 8, 10, 11, 12)), "engine/traced.py:3"]
    )


def test_the_report_is_frozen_and_its_sections_do_not_overlap() -> None:
    """The rule at run time too: a field cannot be set on the report, and no two sections own a field."""
    import dataclasses

    from pydantic import ValidationError

    from arreio.engine.loop import report as reports

    report = reports.RunReport(
        run_id="r", session_id="s", model="m", verdict="success", exit_code=0, started_at="", ended_at="", duration_s=0
    )
    with pytest.raises(ValidationError):
        report.changes = {}  # type: ignore[misc]
    owners: dict[str, str] = {}
    for section in (reports.ToolSection, reports.ContextSection, reports.GovernanceSection, reports.CheckpointSection):
        for field in dataclasses.fields(section):
            if field.name == "warnings":
                continue
            assert field.name in reports.RunReport.model_fields, (section.__name__, field.name)
            assert owners.setdefault(field.name, section.__name__) == section.__name__, field.name
    folded = report.with_section(reports.CheckpointSection(changes={"created": ["a"]}, warnings=("w",)))
    assert (folded.changes, folded.warnings, report.changes, report.warnings) == ({"created": ["a"]}, ["w"], None, [])
