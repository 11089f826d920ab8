"""The package's structure: no import cycles, imports only from a module's layer and the layers below
(``docs/architecture.md``), ``importlib`` in two places, and one definition each of the model
names, the record columns, the data path, the limiter names and the unit conversion factors.

The import graph is built from the source with ``ast`` (every ``import`` and ``from ... import``,
module-level, inside functions and under ``TYPE_CHECKING``), over the modules of ``warpspeed/``
and ``pystencils_plugin/``. An edge goes to the module an import names: ``from a.b import c``
goes to ``a.b.c`` when that is a module, else to ``a.b``. Importing a module also runs its
packages' ``__init__``; those implicit edges are not counted (every package would otherwise
depend on its children and they on it).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

PACKAGES = ("warpspeed", "pystencils_plugin")
#: The modules that may import from ``importlib``: the plugin catalog (entry points, installed
#: versions) and the one module that reads package resources (``docs/architecture.md``).
IMPORTLIB_MODULES = {"warpspeed.kernel.catalog", "warpspeed.files.stored"}


def _modules() -> dict[str, Path]:
    out = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _known(name: str) -> str:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str, tree: ast.Module) -> set[str]:
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(_known(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                target = f"{source}.{alias.name}"
                out.add(target if target in MODULES else _known(source))
    out.discard("")
    out.discard(module)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports (see the module docstring)."""
    return {name: _imports(name, tree) for name, tree in TREES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_and_type_checking_imports():
    """A cycle made only of an import inside a function and one under TYPE_CHECKING is found."""
    a = ast.parse("def f():\n    from warpspeed.predict import Predictor\n")
    b = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from warpspeed.rank import RankRow\n")
    graph = {"warpspeed.rank": _imports("warpspeed.rank", a), "warpspeed.predict": _imports("warpspeed.predict", b)}
    assert graph == {"warpspeed.rank": {"warpspeed.predict"}, "warpspeed.predict": {"warpspeed.rank"}}
    assert cycles(graph) == [["warpspeed.predict", "warpspeed.rank"]]


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


#: The layers of ``docs/architecture.md``, lowest first: a module imports only from its own layer
#: and the layers below it. A module belongs to the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("warpspeed", "warpspeed.errors", "warpspeed.lazy", "warpspeed.memo", "warpspeed.units", "warpspeed.files",
     "warpspeed.kernel", "warpspeed.hardware"),
    ("warpspeed.measured",),
    ("warpspeed.launch",),
    ("warpspeed.memory", "warpspeed.incore"),
    ("warpspeed.levels", "warpspeed.prediction", "warpspeed.predict"),
    ("warpspeed.trace", "warpspeed.sass"),
    ("warpspeed.model_protocol", "warpspeed.roofline", "warpspeed.overlap", "warpspeed.interval",
     "warpspeed.pipeline", "warpspeed.power"),
    ("warpspeed.models",),
    ("warpspeed.rank", "warpspeed.compare", "warpspeed.summary", "warpspeed.plots", "warpspeed.studies",
     "warpspeed.validation", "warpspeed.calibration", "warpspeed.tune"),
    ("warpspeed.cli",),
)


def _layer(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (best is None or len(name) > best[1]):
                best = (index, len(name))
    return None if best is None else best[0]


def test_every_core_module_has_a_layer():
    assert [m for m in MODULES if m.startswith("warpspeed") and _layer(m) is None] == []


#: Imports from a lower layer up to a higher one, and why each is the design (at most one).
UPWARD_IMPORTS = {
    # The predictor resolves the time model whose rate its predictions report (by default the
    # registry's default), so that Prediction.lups_per_s is the rate predict and rank report.
    ("warpspeed.predict", "warpspeed.models"),
}


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, import) for every import of a core module from a higher layer."""
    return sorted((m, d) for m, deps in graph.items() if m.startswith("warpspeed.")
                  for d in deps if d.startswith("warpspeed") and _layer(d) > _layer(m))


def test_modules_import_only_from_their_layer_and_below():
    upward = [edge for edge in upward_imports(import_graph()) if edge not in UPWARD_IMPORTS]
    assert not upward, "imports from a higher layer: " + "; ".join(f"{m} -> {d}" for m, d in upward)


def test_at_most_one_import_runs_upward_and_it_still_does():
    assert len(UPWARD_IMPORTS) <= 1
    assert set(upward_imports(import_graph())) == UPWARD_IMPORTS


def test_the_layer_check_sees_an_upward_import():
    """The memory model importing the ranking would be refused."""
    tree = ast.parse("def f():\n    from warpspeed.rank import RankRow\n")
    deps = _imports("warpspeed.memory.l1", tree)
    assert deps == {"warpspeed.rank"} and _layer("warpspeed.rank") > _layer("warpspeed.memory.l1")


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def calibration_users_below(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, calibration module it imports) for every core module in a layer below calibration's."""
    top = _layer("warpspeed.calibration")
    return sorted((m, d) for m, deps in graph.items() if m.startswith("warpspeed.") and _layer(m) < top
                  for d in deps if _inside(d, "warpspeed.calibration"))


def measured_imports_from_above(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, import) for every module of the stored figures that imports from the predictor's
    layer or above (the predictor, the models, validation, calibration, the command line)."""
    limit = _layer("warpspeed.predict")
    return sorted((m, d) for m, deps in graph.items() if _inside(m, "warpspeed.measured")
                  for d in deps if d.startswith("warpspeed") and _layer(d) >= limit)


def test_calibration_is_imported_only_from_the_top():
    found = calibration_users_below(import_graph())
    assert not found, "calibration imported from below: " + "; ".join(f"{m} -> {d}" for m, d in found)


def test_the_stored_figures_import_no_model_predictor_validation_or_calibration():
    assert _layer("warpspeed.predict") < _layer("warpspeed.model_protocol") < _layer("warpspeed.calibration")
    assert _layer("warpspeed.measured") < _layer("warpspeed.predict")
    found = measured_imports_from_above(import_graph())
    assert not found, "stored figures importing from above: " + "; ".join(f"{m} -> {d}" for m, d in found)


def test_the_direction_checks_see_a_wrong_import():
    """A model importing a fit, and a reader of the stored figures importing a model or a fit, are found."""
    graph = {"warpspeed.overlap.combine": _imports("warpspeed.overlap.combine",
                                                 ast.parse("from warpspeed.calibration.overlap_fit import fit_overlap")),
             "warpspeed.measured.sustained": _imports("warpspeed.measured.sustained", ast.parse(
                 "def f():\n    from warpspeed.calibration.launch import fit_launch\n"
                 "    from warpspeed.interval.cpi_stack import IntervalModel\n"))}
    assert calibration_users_below(graph) == [("warpspeed.measured.sustained", "warpspeed.calibration.launch"),
                                              ("warpspeed.overlap.combine", "warpspeed.calibration.overlap_fit")]
    assert measured_imports_from_above(graph) == [("warpspeed.measured.sustained", "warpspeed.calibration.launch"),
                                                  ("warpspeed.measured.sustained", "warpspeed.interval.cpi_stack")]


def _package(module: str) -> str | None:
    """The package of ``warpspeed`` a module is part of: ``warpspeed.<name>`` (a subpackage or a
    top-level module); None for ``warpspeed`` itself (it re-exports the API) and other top packages."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "warpspeed" and len(parts) > 1 else None


def mutual_packages(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(package a, package b), a < b, -> the module imports both ways, for every two packages of
    ``warpspeed`` that import each other."""
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for m, deps in graph.items():
        for d in deps:
            a, b = _package(m), _package(d)
            if a and b and a != b:
                edges.setdefault((a, b), []).append((m, d))
    return {(a, b): sorted(edges[(a, b)] + edges[(b, a)]) for a, b in edges if a < b and (b, a) in edges}


#: Packages that import each other, and why that is the design rather than a cycle to break.
MUTUAL_PACKAGES: set[tuple[str, str]] = set()


def test_no_two_packages_import_each_other():
    found = {pair: edges for pair, edges in mutual_packages(import_graph()).items() if pair not in MUTUAL_PACKAGES}
    assert not found, "packages importing each other: " + "; ".join(
        f"{a} <-> {b} ({', '.join(f'{m} -> {d}' for m, d in edges)})" for (a, b), edges in found.items())


def test_every_allowed_pair_still_imports_both_ways():
    assert MUTUAL_PACKAGES <= set(mutual_packages(import_graph()))
    assert MUTUAL_PACKAGES == set()  # none: every two packages import each other one way at most


def test_the_package_check_sees_two_packages_importing_each_other():
    """A fit importing a validation report while a validation report imports the fit is found,
    however far apart the two modules are inside their packages."""
    graph = {"warpspeed.calibration.overlap_fit": _imports("warpspeed.calibration.overlap_fit", ast.parse(
                 "from warpspeed.validation.accuracy import accuracy_report")),
             "warpspeed.validation.public_models": _imports("warpspeed.validation.public_models", ast.parse(
                 "def f():\n    from warpspeed.calibration.launch import measured_rows\n")),
             "warpspeed": _imports("warpspeed", ast.parse("from warpspeed.predict import Predictor"))}
    assert mutual_packages(graph) == {("warpspeed.calibration", "warpspeed.validation"): [
        ("warpspeed.calibration.overlap_fit", "warpspeed.validation.accuracy"),
        ("warpspeed.validation.public_models", "warpspeed.calibration.launch")]}


def test_importlib_only_in_the_catalog_and_the_resources_module():
    users = set()
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "importlib" or n.startswith("importlib.") for n in names):
                users.add(name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
                users.add(name)
    assert users == IMPORTLIB_MODULES


def _string_collections(tree: ast.Module):
    """Every tuple, list or set literal of string constants, and the string keys of every dict literal."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            values = node.elts
        elif isinstance(node, ast.Dict):
            values = [k for k in node.keys if k is not None]
        else:
            continue
        strings = {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
        if strings:
            yield strings


def _modules_listing(names: set[str], least: int) -> set[str]:
    return {module for module, tree in TREES.items()
            if any(len(strings & names) >= least for strings in _string_collections(tree))}


def test_model_names_are_defined_once():
    """The registry lists the model objects; each model names itself once; no other module lists
    the models by hand (three or more of their names in one literal; a table keyed by a dataset
    and one model is not a list of models)."""
    from warpspeed.models import ENERGY, MODELS

    names = {*MODELS, ENERGY.name}
    assert _modules_listing(names, 3) == set()
    declared: dict[str, list[str]] = {}
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if (isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "name"
                                                                  for t in statement.targets)
                            and isinstance(statement.value, ast.Constant) and statement.value.value in names):
                        declared.setdefault(statement.value.value, []).append(module)
    assert {n: len(m) for n, m in declared.items()} == dict.fromkeys(names, 1)


#: The registry's model objects, each defined in its model's package.
MODEL_OBJECTS = frozenset({"OVERLAP", "ROOFLINE", "INTERVAL", "PIPELINE"})
#: The modules that may name a specific time model: the registry and the model packages.
MODEL_HOMES = ("warpspeed.models", "warpspeed.overlap", "warpspeed.roofline", "warpspeed.interval",
               "warpspeed.pipeline")


def _at_home(module: str) -> bool:
    return any(module == home or module.startswith(home + ".") for home in MODEL_HOMES)


def _model_mentions(tree: ast.Module, names: set[str]) -> list[str]:
    """Where ``tree`` names a specific time model: imports or reads one of :data:`MODEL_OBJECTS`,
    or branches on a model's name (compares a model with a name, ``==``, ``!=``, ``in``: an
    operand whose name says ``model`` against a literal model name). Tables keyed by a dataset
    and a model, and device tables that share a model's name (``[interval]``), are data, not
    branches."""
    def is_name(node: ast.AST) -> bool:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(is_name(e) for e in node.elts)
        return isinstance(node, ast.Constant) and node.value in names

    def is_model(node: ast.AST) -> bool:
        text = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        return "model" in text.lower()

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"imports {a.name}" for a in node.names if a.name in MODEL_OBJECTS]
        elif isinstance(node, ast.Attribute) and node.attr in MODEL_OBJECTS:
            found.append(f"reads .{node.attr}")
        elif isinstance(node, ast.Compare):
            operands = (node.left, *node.comparators)
            if any(is_name(n) for n in operands) and any(is_model(n) for n in operands):
                found.append(f"branches on a model name (line {node.lineno})")
    return found


def test_only_the_registry_and_the_model_packages_name_a_model():
    """Rank, the command line, provenance and every other module reach the models through the
    registry (``MODELS``, ``time_model(name)``) and what each model declares: none imports a model
    object or branches on a model's name."""
    from warpspeed.models import MODELS

    names = set(MODELS)
    offenders = {module: found for module, tree in TREES.items()
                 if not _at_home(module) and (found := _model_mentions(tree, names))}
    assert offenders == {}


def test_only_the_registry_and_the_roofline_package_name_the_roofline_model():
    """No module outside the registry and the roofline package names the roofline model by its
    registry constant (``ROOFLINE_MODEL``) or its object: the roofline is an ordinary entry."""
    names = {"ROOFLINE_MODEL", "roofline_estimate"}  # the object itself: test_only_the_registry_and_the_model_packages_name_a_model
    users = {module for module, tree in TREES.items() for node in ast.walk(tree)
             if (isinstance(node, ast.Name) and node.id in names)
             or (isinstance(node, ast.alias) and node.name in names)
             or (isinstance(node, ast.Attribute) and node.attr in names)}
    assert {m for m in users if not m.startswith(("warpspeed.models", "warpspeed.roofline"))} == set()


@pytest.mark.parametrize("source", [
    "from warpspeed.interval.time_model import INTERVAL\nBEFORE = {INTERVAL.name: print}\n",
    "import warpspeed.overlap.time_model as t\nx = t.OVERLAP\n",
    "def f(model):\n    return 1 if model == 'pipeline' else 2\n",
    "def f(model):\n    return model in ('roofline',)\n",
    "def f(estimate):\n    if estimate.model != 'interval':\n        return 0\n",
])
def test_the_model_check_sees_a_named_model(source):
    """The check refuses a module that imports a model object, reads one or branches on a model's
    name; the registry's own lookups and a device table that shares a model's name pass."""
    names = {"overlap", "roofline", "interval", "pipeline"}
    assert _model_mentions(ast.parse(source), names)
    assert not _model_mentions(ast.parse("from warpspeed.models import MODELS, time_model\n"
                                         "def f(model):\n    return time_model(model).tables\n"), names)
    assert not _model_mentions(ast.parse("def f(table, data):\n    return table in ('interval', 'power')\n"), names)
    assert _at_home("warpspeed.models") and _at_home("warpspeed.pipeline.time_model")
    assert not _at_home("warpspeed.cli.model_render") and not _at_home("warpspeed.calibration.provenance")


def test_record_columns_come_from_the_dataclass_fields():
    """The ranking's CSV columns and JSON keys are derived from RankRow's fields; no module writes the
    ranking's columns by hand (half of them or more in one literal; a model's own figures reuse a
    few of the names)."""
    from dataclasses import fields

    from warpspeed.files.records import csv_columns
    from warpspeed.launch.space import CONFIG_COLUMNS, Config
    from warpspeed.rank import RANK_COLUMNS, RankRow

    assert RANK_COLUMNS == csv_columns(RankRow) and CONFIG_COLUMNS == csv_columns(Config)
    assert {f.name for f in fields(RankRow)} >= {"lups_per_s", "limiter", "l1_cycles_per_lup", "registers"}
    assert _modules_listing(set(RANK_COLUMNS), len(RANK_COLUMNS) // 2) == set()


def test_the_data_path_is_defined_once():
    """Only warpspeed/files/stored.py names the package of the stored data."""
    holders = {module for module, tree in TREES.items() for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and node.value == "warpspeed.fits"}
    assert holders == {"warpspeed.files.stored"}


def test_limiter_names_are_defined_once():
    """The four limiters are listed in warpspeed/levels.py only; everything else uses LIMITERS."""
    from warpspeed.levels import LIMITERS

    assert _modules_listing(set(LIMITERS), len(LIMITERS)) == {"warpspeed.levels"}


@pytest.mark.parametrize("name", ["Predictor", "Prediction", "Kernel", "load_device", "time_estimate"])
def test_the_package_exports_the_prediction_api(name):
    import warpspeed

    assert name in warpspeed.__all__ and getattr(warpspeed, name) is not None


#: Values that are unit conversion factors: only :mod:`warpspeed.units` names them.
UNIT_FACTORS = (1e9, 1e-9, 1e6, 1e-6)
#: Module-level constants of those values that are no unit conversion: tolerances and a cap.
NOT_UNIT_FACTORS = {("warpspeed.pipeline.simulate", "_EPS"), ("warpspeed.power.dvfs", "TIE"),
                    ("warpspeed.calibration.power", "V_MIN_TIE"),
                    ("warpspeed.memory.capacity.curves", "MAX_OVERSUBSCRIPTION")}


def unit_factor_constants(trees: dict[str, ast.Module]) -> set[tuple[str, str]]:
    """(module, name) of every module-level assignment of a number in :data:`UNIT_FACTORS`, also
    inside a tuple assignment (``a, b = 1e-9, 1e9``) or an annotated one."""
    found = set()
    for module, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value)]
            else:
                continue
            while any(isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) for t, v in pairs):
                pairs = [p for t, v in pairs
                         for p in (zip(t.elts, v.elts) if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple)
                                   else [(t, v)])]
            for target, value in pairs:
                if (isinstance(target, ast.Name) and isinstance(value, ast.Constant)
                        and isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
                        and value.value in UNIT_FACTORS):
                    found.add((module, target.id))
    return found


def test_unit_factors_are_defined_once():
    """1e9, 1e-9, 1e6 and 1e-6 as module constants live in warpspeed/units.py only; every other
    module imports GIGA, NANO, MEGA, MICRO from there."""
    assert unit_factor_constants(TREES) - NOT_UNIT_FACTORS == {("warpspeed.units", "GIGA"),
                                                              ("warpspeed.units", "NANO"),
                                                              ("warpspeed.units", "MEGA"),
                                                              ("warpspeed.units", "MICRO")}
    assert NOT_UNIT_FACTORS <= unit_factor_constants(TREES)


def test_the_unit_check_sees_a_local_factor():
    """A GHz conversion of its own, a tuple of two and an annotated one are found; a factor inside a
    function, another number and an imported name are not."""
    tree = ast.parse("from warpspeed.units import GIGA\nGHZ = 1e9\nNS, MEGA = 1e-9, 1e6\nUS: float = 1e-6\n"
                     "KB = 1e3\nX = GIGA\ndef f():\n    y = 1e9\n")
    assert unit_factor_constants({"warpspeed.example": tree}) == {
        ("warpspeed.example", n) for n in ("GHZ", "NS", "MEGA", "US")}


def test_the_sector_bytes_and_the_warp_width_are_defined_once():
    """32-byte sectors and 32-thread warps are named in warpspeed/units.py only; every other module
    imports them (a module-level name bound to the literal 32 that says sector or warp lanes)."""
    holders = set()
    for module, tree in TREES.items():
        for node in tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value == 32
                    and any(isinstance(t, ast.Name) and ("SECTOR" in t.id or "WARP" in t.id) for t in node.targets)):
                holders.add(module)
    assert holders == {"warpspeed.units"}
