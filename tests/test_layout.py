"""The package's layering, read from the source with ``ast``: no import cycles, and what is shipped and
played (``agent/``, ``play/``, ``xp/``, ``reproduce/``) never imports what trains (``training/``); ``agent/``,
``play/`` and ``xp/`` not even through other modules (``config/`` among them): checked on the transitive closure of
the module-level graph, and by importing one module of each in a fresh interpreter and reading ``sys.modules``.

An edge ``a -> b`` is an ``import`` or ``from ... import`` in module ``a`` naming eqc module ``b``
(``from pkg import name`` counts as ``pkg.name`` when that is a module, else ``pkg``). Imports at
module level build the graph that must be acyclic; imports inside functions (optional dependencies,
deferred heavy imports) are collected apart and must not close a cycle either.
Imports under ``if TYPE_CHECKING:`` never run and are not counted.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import eqc

ROOT = Path(eqc.__file__).parent
HANABI = "eqc.domains.hanabi"
TRAINING = f"{HANABI}.training"
#: Packages of the Hanabi domain that must not import ``training``, and the training modules each may import.
NO_TRAINING = {"agent": set(), "play": set(), "xp": set(), "reproduce": {"pool", "config"}}
#: Packages of the Hanabi domain that must not reach ``training`` through any chain of module-level imports.
NEVER_REACH_TRAINING = ("agent", "play", "xp")
#: One module of each of them, imported in a fresh interpreter: none may load a training module.
IMPORTED_ALONE = (f"{HANABI}.agent.policy", f"{HANABI}.play.self_play", f"{HANABI}.xp.pools")


def module_name(path: Path, root: Path = ROOT) -> str:
    """``eqc.a.b`` for ``root/a/b.py`` and for ``root/a/b/__init__.py``."""
    parts = (root.name, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _target(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if not node.level:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_type_checking(node: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_edges(sources: dict[str, tuple[str, bool]]) -> tuple[nx.DiGraph, nx.DiGraph]:
    """The module-level and the function-level import graphs of ``sources`` (module name -> (source text, is a package))."""
    top, inner = nx.DiGraph(), nx.DiGraph()
    top.add_nodes_from(sources)
    for module, (text, is_package) in sources.items():
        tree = ast.parse(text)
        module_level = set(tree.body)
        type_only = {id(n) for block in tree.body if _is_type_checking(block) for n in ast.walk(block)}
        for node in ast.walk(tree):
            if id(node) in type_only:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _target(module, is_package, node)
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in sources else base for a in node.names] if base else []
            else:
                continue
            for name in names:
                while name not in sources and "." in name:  # import a.b.c where only a.b is a module (a name in it)
                    name = name.rsplit(".", 1)[0]
                if name in sources and name != module:
                    (top if node in module_level else inner).add_edge(module, name)
    return top, inner


def eqc_graphs() -> tuple[nx.DiGraph, nx.DiGraph]:
    sources = {module_name(p): (p.read_text(), p.name == "__init__.py") for p in sorted(ROOT.rglob("*.py"))}
    return import_edges(sources)


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Every import cycle of ``graph`` (empty when it layers)."""
    return [sorted(c) for c in nx.simple_cycles(graph)]


def training_imports(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """Edges from a package of ``NO_TRAINING`` into ``training`` that it is not allowed."""
    bad = []
    for a, b in graph.edges:
        if not b.startswith(f"{HANABI}.training"):
            continue
        for package, allowed in NO_TRAINING.items():
            inside = a == f"{HANABI}.{package}" or a.startswith(f"{HANABI}.{package}.")
            if inside and b.removeprefix(f"{HANABI}.training.") not in allowed:
                bad.append((a, b))
    return bad


def is_training(module: str) -> bool:
    """Whether ``module`` is ``training`` or a module under it."""
    return module == TRAINING or module.startswith(f"{TRAINING}.")


def reached_training(graph: nx.DiGraph) -> dict[str, list[str]]:
    """Each module of :data:`NEVER_REACH_TRAINING` that reaches training through ``graph``'s imports, however many
    hops, and the training modules it reaches."""
    reached = {}
    for module in graph:
        if any(module == f"{HANABI}.{p}" or module.startswith(f"{HANABI}.{p}.") for p in NEVER_REACH_TRAINING):
            bad = sorted(m for m in nx.descendants(graph, module) if is_training(m))
            if bad:
                reached[module] = bad
    return reached


def training_loaded_by(module: str) -> list[str]:
    """The training modules in ``sys.modules`` after ``import module`` in a fresh interpreter (this checkout's eqc)."""
    code = ("import importlib, json, sys\n"
            f"importlib.import_module({module!r})\n"
            "print(json.dumps(sorted(sys.modules)))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return [m for m in json.loads(done.stdout.splitlines()[-1]) if is_training(m)]


def test_module_level_imports_have_no_cycle() -> None:
    top, _ = eqc_graphs()
    assert top.number_of_nodes() > 100 and top.number_of_edges() > 200  # the walk found the package
    assert cycles(top) == []


def test_function_level_imports_close_no_cycle() -> None:
    top, inner = eqc_graphs()
    assert cycles(nx.compose(top, inner)) == []


@pytest.mark.parametrize("level", ["module", "function"])
def test_what_is_shipped_and_played_never_imports_training(level: str) -> None:
    top, inner = eqc_graphs()
    assert training_imports(top if level == "module" else inner) == []


def test_the_checks_catch_a_bad_graph() -> None:
    """Negative control: a two-module cycle, a relative-import cycle and an agent importing training are caught."""
    fake = {
        "eqc": ("", True),
        "eqc.a": ("from eqc import b\n", False),
        "eqc.b": ("import eqc.a\n", False),
        f"{HANABI}.agent.policy": (f"from {HANABI}.training.config import TrainConfig\n", False),
        f"{HANABI}.reproduce.run": (f"from {HANABI}.training import pool\nfrom {HANABI}.training.run import train\n", False),
        f"{HANABI}.training.pool": ("", False),
        f"{HANABI}.training.run": ("", False),
        f"{HANABI}.training.config": ("from .run import x\n", False),
        f"{HANABI}.play.hle": ("def f():\n    from ..training import run\n", False),
        "eqc.c": ("from . import d\n", False),
        "eqc.d": ("def f():\n    from eqc import c\n", False),
        "eqc.e": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from eqc import f\n", False),
        "eqc.f": ("from eqc import e\n", False),
    }
    top, inner = import_edges(fake)
    assert cycles(top) == [["eqc.a", "eqc.b"]]
    assert sorted(training_imports(top)) == [(f"{HANABI}.agent.policy", f"{HANABI}.training.config"),
                                             (f"{HANABI}.reproduce.run", f"{HANABI}.training.run")]
    assert training_imports(inner) == [(f"{HANABI}.play.hle", f"{HANABI}.training.run")]
    assert {frozenset(c) for c in cycles(nx.compose(top, inner))} == {frozenset({"eqc.a", "eqc.b"}), frozenset({"eqc.c", "eqc.d"})}
    assert top.has_edge(f"{HANABI}.training.config", f"{HANABI}.training.run")  # relative imports resolve
    assert not top.has_edge("eqc.e", "eqc.f") and not inner.has_edge("eqc.e", "eqc.f")  # type-only imports never run


def test_what_is_played_never_reaches_training_through_other_modules() -> None:
    """Static: no module of ``agent/``, ``play/``, ``xp/`` reaches training through module-level imports, ``config/``
    and every other package included (a direct edge is not needed: ``agent -> config -> training`` counts)."""
    top, _ = eqc_graphs()
    assert any(m.startswith(f"{HANABI}.agent.") for m in top) and any(is_training(m) for m in top)  # the walk found both
    assert reached_training(top) == {}


@pytest.mark.parametrize("module", IMPORTED_ALONE)
def test_importing_what_is_played_loads_no_training_module(module: str) -> None:
    """Dynamic: what the import really loads, whatever the source says (lazy loaders, ``__init__`` files included)."""
    assert training_loaded_by(module) == []


def test_the_transitive_checks_catch_a_violation() -> None:
    """Negative control: an agent module reaching training in two hops (through ``config``) is reported with what it
    reaches, as is a play module importing one directly; reproduce (allowed to train) and a function-level import
    are not; and a fresh interpreter importing a training module reports it."""
    fake = {
        "eqc": ("", True),
        f"{HANABI}.agent.precision": (f"from {HANABI}.config.train import PRECISIONS\n", False),
        f"{HANABI}.config.train": (f"from {HANABI}.training.algorithms import ALGORITHMS\n", False),
        f"{HANABI}.training.algorithms": ("from .pqn import PQN\n", False),
        f"{HANABI}.training.pqn": ("", False),
        f"{HANABI}.play.hle": (f"import {HANABI}.training.pqn\n", False),
        f"{HANABI}.xp.pools": (f"def f():\n    from {HANABI}.training import pqn\n", False),
        f"{HANABI}.reproduce.run": (f"from {HANABI}.training import config\n", False),
        f"{HANABI}.training.config": ("from . import pqn\n", False),
    }
    top, _ = import_edges(fake)
    assert training_imports(top) == [(f"{HANABI}.play.hle", f"{HANABI}.training.pqn")]  # the direct check misses the agent
    assert reached_training(top) == {
        f"{HANABI}.agent.precision": [f"{HANABI}.training.algorithms", f"{HANABI}.training.pqn"],
        f"{HANABI}.play.hle": [f"{HANABI}.training.pqn"],
    }
    assert training_loaded_by(f"{TRAINING}.config") != []  # the dynamic check sees a training import
