"""The package's imports keep the layer order the README states, and form no cycle.

Every ``import`` in ``kernelscale/`` (module level and inside functions) is
parsed. A module may import its own layer, the base modules (``_config``,
``_validation``, ``_constraints``, ``_progress``, ``_clock``, the package root) and the
layers below it, and from another layer only its package (``..kernels``) and
public names, never a private module (``..kernels._base``) or a ``_name``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kernelscale"
BASE = {"kernelscale", "kernelscale._config", "kernelscale._validation",
        "kernelscale._constraints", "kernelscale._progress", "kernelscale._parallel",
        "kernelscale._planner", "kernelscale._clock"}


def layer_order():
    """The layers, lowest first, as the README's "data flows one way" line lists them."""
    text = (ROOT / "README.md").read_text()
    line = re.search(r"`(datasets( -> \w+)+)`", text)
    assert line, "README.md must state the layer order as `datasets -> ... -> cli`"
    return line.group(1).split(" -> ")


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path):
    """``(line, imported module, [names])`` for every import statement of ``path``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names
                      if alias.name.startswith("kernelscale")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("kernelscale"):
                found.append((node.lineno, target, [a.name for a in node.names]))
    return found


def layer_of(module, order):
    if module in BASE:
        return "base"
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in order:
        return parts[1]
    raise AssertionError(f"{module} belongs to no layer of the README's order {order}")


def modules():
    return sorted(PACKAGE.rglob("*.py"))


def is_module(dotted):
    path = PACKAGE.parent / dotted.replace(".", "/")
    return path.is_dir() or path.with_suffix(".py").is_file()


def edges():
    """``(path, line, importer, imported module, names, layer order)`` for every import."""
    order = layer_order()
    for path in modules():
        source = module_name(path)
        for line, target, names in imports(path):
            submodules = [n for n in names if is_module(f"{target}.{n}")]
            for sub in submodules:  # "from . import fit" imports the module fit
                yield path, line, source, f"{target}.{sub}", [], order
            rest = [n for n in names if n not in submodules]
            if rest or not names:
                yield path, line, source, target, rest, order


def test_the_readme_names_every_layer():
    order = layer_order()
    assert order[0] == "datasets" and order[-1] == "cli"
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")}
    missing = folders - set(order)
    assert not missing, f"folders missing from the README's layers: {missing}"


def test_no_import_runs_against_the_layer_order():
    problems = []
    for path, line, source, target, names, order in edges():
        rank = {name: k for k, name in enumerate(order)}
        rank["base"] = -1
        src, dst = layer_of(source, order), layer_of(target, order)
        where = f"{path.relative_to(ROOT)}:{line}"
        if rank[dst] > rank[src]:
            problems.append(f"{where}: {src} imports the higher layer {dst} ({target})")
        if src != dst and dst != "base":
            package = f"kernelscale.{dst}"
            if target != package and not target.startswith(package + "."):
                continue
            private = [p for p in target[len(package):].split(".") if p.startswith("_")]
            if private:
                problems.append(f"{where}: imports {target}, a private module of {dst}")
            hidden = [n for n in names if n.startswith("_")]
            if hidden:
                problems.append(f"{where}: imports private names {hidden} of {dst}")
    assert not problems, "\n".join(problems)


def test_no_import_cycles():
    graph = {}
    for _path, _line, source, target, _names, _order in edges():
        if target != source:
            graph.setdefault(source, set()).add(target)
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)


#: A file holds one concern, small enough to hold in one's head: past this many lines
#: the test warns (look whether it holds two concerns; do not split a single one by count)
FILE_LINES_HINT = 500
#: ... and past this it fails: no single concern needs that much
FILE_LINES_MAX = 900


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_files_stay_small(path):
    lines = len(path.read_text().splitlines())
    where = path.relative_to(ROOT)
    assert lines <= FILE_LINES_MAX, f"{where} has {lines} lines: it holds several concerns"
    if lines > FILE_LINES_HINT:
        import warnings

        warnings.warn(f"{where} has {lines} lines (past the ~{FILE_LINES_HINT}-line hint): "
                      "does it hold more than one concern?", UserWarning, stacklevel=1)


def test_import_kernelscale_imports_nothing_heavy():
    import subprocess
    import sys

    code = ("import sys, kernelscale, kernelscale.cli; "
            "heavy = [m for m in ('sklearn', 'numba', 'scipy', 'dask', 'torch', 'matplotlib') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import kernelscale loaded {out.stdout.strip()}"


FAMILIES = sorted(p.name for p in (PACKAGE / "models").iterdir()
                  if p.is_dir() and not p.name.startswith("_") and (p / "__init__.py").exists())


def family_of(module):
    """The estimator family (``kernelscale.models.<family>``) a module belongs to, or None."""
    parts = module.split(".")
    if len(parts) > 2 and parts[:2] == ["kernelscale", "models"] and parts[2] in FAMILIES:
        return parts[2]
    return None


def test_estimator_modules_keep_out_of_other_families_private_names():
    # a family may use what another family publishes (its package's names), never its
    # private modules or _names: the shared bases live in models/ itself
    assert FAMILIES == ["linear", "metric", "ridge", "svm", "unsupervised"]
    problems = []
    for path, line, source, target, names, _order in edges():
        mine, theirs = family_of(source), family_of(target)
        if theirs is None or theirs == mine:
            continue
        where = f"{path.relative_to(ROOT)}:{line}"
        package = f"kernelscale.models.{theirs}"
        if any(p.startswith("_") for p in target[len(package):].split(".")):
            problems.append(f"{where}: imports {target}, a private module of the {theirs} "
                            "family")
        hidden = [n for n in names if n.startswith("_")]
        if hidden:
            problems.append(f"{where}: imports private names {hidden} of the {theirs} family")
    assert not problems, "\n".join(problems)


def test_the_models_package_lists_estimators_only():
    import inspect

    from sklearn.base import BaseEstimator

    import kernelscale.models as models

    for name in models.__all__:
        obj = getattr(models, name)
        assert inspect.isclass(obj) and issubclass(obj, BaseEstimator) and hasattr(obj, "fit"), \
            f"kernelscale.models.__all__ lists {name}, which is not an estimator"
    # every estimator of every family is listed
    for family in FAMILIES:
        package = __import__(f"kernelscale.models.{family}", fromlist=["*"])
        for name in package.__all__:
            obj = getattr(package, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                assert name in models.__all__, f"{family}.{name} is missing from models.__all__"


def test_the_models_package_keeps_no_shims_of_moved_names():
    # the names kernelscale 0.1 published here moved a release ago; a shim of them pointed
    # at names that no longer existed (it warned, then raised AttributeError)
    import kernelscale.models as models

    assert not hasattr(models, "_MOVED")
    with pytest.raises(AttributeError, match="has no attribute 'solve_svm_path'"):
        models.solve_svm_path  # noqa: B018


def _names_imported_from(package):
    """Names that modules outside ``package`` (a layer) import from it by its front."""
    found = set()
    for _path, _line, source, target, names, _order in edges():
        if target == package and not source.startswith(package + ".") and source != package:
            found.update(names)
    return found


@pytest.mark.parametrize("package", ["kernelscale.solvers", "kernelscale.model_selection"])
def test_a_layers_front_exports_only_what_other_layers_import(package):
    """A name only a layer's own modules (or tests) use stays private: the front must not
    grow past what the layers above import (the root's lazy names count as imports)."""
    import importlib

    import kernelscale

    front = importlib.import_module(package)
    used = _names_imported_from(package)
    used |= {name for name, where in kernelscale._NAMES.items()
             if where == "." + package.split(".", 1)[1]}
    unused = sorted(set(front.__all__) - used)
    assert not unused, f"{package}.__all__ exports names no other layer imports: {unused}"


def test_every_module_a_model_file_of_an_older_version_names_resolves():
    import importlib

    from kernelscale.persistence import MOVED_MODULES

    for old, homes in MOVED_MODULES.items():
        for home in homes:
            assert importlib.import_module(home), (old, home)


def _rows_types():
    """Every class of the SMO package that holds or gives kernel rows, by its name."""
    import importlib
    import inspect

    # (the attribute kernelscale.solvers.smo is the function smo: import the package by name)
    smo = importlib.import_module("kernelscale.solvers.smo")
    protocols = {"KernelRowSource", "ComputedRows", "RowStore", "ComputingRowStore"}
    return {name: obj for name, obj in vars(smo).items() if inspect.isclass(obj)
            and name not in protocols and (name.endswith("Rows") or name.endswith("Cache"))}


def test_every_rows_type_implements_the_rows_protocol():
    import numpy as np

    from kernelscale.kernels import make_kernel
    from kernelscale.solvers import KernelRows
    from kernelscale.solvers.smo import (
        ComputedRows,
        ComputingRowStore,
        KernelRowSource,
        MatrixCache,
        MatrixRows,
        PairedRows,
        RowCache,
        RowStore,
    )

    X = np.random.default_rng(0).normal(size=(30, 3))
    rows = KernelRows(X, make_kernel("rbf", X), 2**20)
    matrix = MatrixRows(np.eye(30, dtype=np.float32), 60, 2**20)
    made = {"KernelRows": rows, "PairedRows": PairedRows(rows), "MatrixRows": matrix,
            "RowCache": RowCache(rows, 2**20), "MatrixCache": MatrixCache(matrix)}
    # a new rows type must be added here, and so checked
    assert set(made) == set(_rows_types())
    for name, obj in made.items():
        if name.endswith("Rows"):
            assert isinstance(obj, KernelRowSource), f"{name} is not a KernelRowSource"
        else:
            assert isinstance(obj, RowStore), f"{name} is not a RowStore"
    # the ones that compute rows, and the store that compacts them
    assert isinstance(made["KernelRows"], ComputedRows)
    assert isinstance(made["PairedRows"], ComputedRows)
    assert isinstance(made["RowCache"], ComputingRowStore)
    # the matrix is read, never computed or compacted
    assert not isinstance(matrix, ComputedRows)
    assert not isinstance(made["MatrixCache"], ComputingRowStore)


def test_solver_constants_come_from_one_settings_object_per_solver():
    # issue 37: SMO's and FALKON's tuning constants were scattered over their modules;
    # each module now reads them from its solver's settings
    import importlib

    from kernelscale.solvers.falkon import FALKON_SETTINGS
    from kernelscale.solvers.smo import SMO_SETTINGS

    smo = {name: importlib.import_module(f"kernelscale.solvers.smo.{name}")
           for name in ("_compiled", "_dense", "_dense_compiled", "_rows", "_solver")}
    assert smo["_compiled"].TAU == SMO_SETTINGS.tau
    assert smo["_dense"]._PARALLEL_GATHER == SMO_SETTINGS.parallel_gather
    assert smo["_dense"]._PROGRESS_PAIRS == SMO_SETTINGS.progress_pairs
    assert smo["_dense_compiled"].COMPACT_KEEP == SMO_SETTINGS.compact_keep
    assert smo["_dense_compiled"]._COPY_COST == SMO_SETTINGS.copy_cost
    assert smo["_rows"]._CHUNK_BYTES == SMO_SETTINGS.batch_bytes
    assert smo["_rows"]._BLOCK_MAX_FEATURES == SMO_SETTINGS.block_max_features
    assert smo["_solver"]._SHRINK_FRACTION == SMO_SETTINGS.shrink_fraction
    falkon = importlib.import_module("kernelscale.solvers.falkon._products")
    assert falkon._FLUSH_ROWS == FALKON_SETTINGS.flush_rows
    # the planner counts the batch SMO computes
    from kernelscale._planner import SMO_BATCH_BYTES

    assert SMO_SETTINGS.batch_bytes == SMO_BATCH_BYTES
    # and no module of either solver defines a tuning constant of its own
    source = "\n".join(p.read_text() for p in (PACKAGE / "solvers" / "smo").glob("*.py")
                       if p.name != "_settings.py")
    for literal in ("= 0.2\n", "= 0.8\n", "= 4.0\n", "= 1e-12", "= 2**24", "= 1 << 18"):
        assert literal not in source, f"a constant {literal.strip()} outside _settings.py"


def test_smo_has_one_pair_solver_and_one_set_of_rules():
    # issue 37: the pair step, the second-order pair selection, the violation and the
    # shrinking rule were written once per engine (the working-set block solver, the
    # whole-matrix solver); every working set now goes through the one pair solver
    import re

    smo_dir = PACKAGE / "solvers" / "smo"
    sources = {p.name: p.read_text() for p in smo_dir.glob("*.py")}

    def sites(pattern):
        return sorted(name for name, text in sources.items()
                      for _ in re.finditer(pattern, text))

    assert sites(r"(?<!def )pair_step\(") == ["_dense_compiled.py"]  # its one call
    assert sites(r"gain = -diff \* diff") == ["_dense_compiled.py"]
    assert sites(r"def (solve_pairs|solve_block|shrink_marks|violation_bounds)\b") == [
        "_dense_compiled.py"] * 3
    # the decompositions (working sets, the whole matrix, the C paths, explicit features)
    # call that solver; none carries a loop of pair updates of its own
    for name in ("_solver.py", "_dense.py", "_path_compiled.py", "_linear.py"):
        assert "solve_pairs(" in sources[name], name
    assert "shrink_marks(" in sources["_solver.py"]


def _code_strings(path):
    """String constants of ``path``'s code (not its docstrings)."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def test_a_family_is_named_in_its_registry_only():
    """The search's families are objects in one registry (model_selection/_families.py):
    no other module of the search, nor the command line, spells a family's name."""
    from kernelscale.model_selection import FAMILIES

    registry = PACKAGE / "model_selection" / "_families.py"
    problems = []
    for path in sorted((PACKAGE / "model_selection").glob("*.py")) + \
            sorted((PACKAGE / "cli").glob("*.py")):
        if path == registry:
            continue
        in_cli = path.parent.name == "cli"
        for line, value in _code_strings(path):
            # the command line's --model falkon is a model's name, not the family's
            if value in FAMILIES and not (in_cli and value == "falkon"):
                problems.append(f"{path.relative_to(ROOT)}:{line}: {value!r}")
    assert not problems, "family names outside the registry:\n" + "\n".join(problems)


def _byte_formulas(path):
    """Module-level functions of ``path`` named ``*_bytes`` whose body computes bytes (a
    size times a number: ``4 * n``): the planner's formulas. (A kernel's or a row store's
    own temporaries, methods of their classes, are theirs to say.)"""
    def sized(n):
        sides = (n.left, n.right)
        number = [isinstance(side, ast.Constant) and isinstance(side.value, (int, float))
                  for side in sides]
        return any(number) and not all(number)
    found = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name.endswith("_bytes"):
            if any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Pow))
                   and sized(n) for n in ast.walk(node)):
                found.append((node.lineno, node.name))
    return found


def test_every_byte_formula_is_in_the_planner_and_plans_are_built_there():
    """The planner's docstring says its formulas live there: no other module defines a byte
    formula, builds a MemoryPlan or edits one after it is built."""
    planner = PACKAGE / "_planner.py"
    problems = []
    for path in modules():
        if path == planner:
            continue
        where = path.relative_to(ROOT)
        problems += [f"{where}:{line}: byte formula {name}" for line, name in _byte_formulas(path)]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "MemoryPlan":
                problems.append(f"{where}:{node.lineno}: builds a MemoryPlan")
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                base = target.value if isinstance(target, (ast.Attribute, ast.Subscript)) \
                    else None
                while isinstance(base, (ast.Attribute, ast.Subscript)):
                    base = base.value
                if isinstance(base, ast.Name) and base.id == "plan" and \
                        isinstance(target, (ast.Attribute, ast.Subscript)):
                    problems.append(f"{where}:{node.lineno}: edits a plan after it is built")
    assert not problems, "\n".join(problems)


#: calls that solve a binary SVM problem (LIBSVM's Solver::Solve level) ...
_SOLVE_CALLS = {"smo", "smo_dense", "smo_dense_path", "smo_regression", "smo_one_class",
                "kernel_subgradient_svm", "solve_problem_path"}
#: ... and the one module that loops over binary problems calling them (svm_train's level)
_SVM_DRIVER = "kernelscale/solvers/_svm_path.py"


def _call_name(node):
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _loops_solving_problems(tree):
    """Loops over something named ``*problems*`` whose body solves (calls a solver, or a
    ``*solve*`` helper)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)):
            over = ast.unparse(node.iter)
            body = node.body if isinstance(node, ast.For) else []
            calls = [_call_name(c) for part in body for c in ast.walk(part)
                     if isinstance(c, ast.Call)]
            if "problems" in over and any(name in _SOLVE_CALLS or "solve" in name
                                          for name in calls):
                found.append(getattr(node, "lineno", getattr(node.iter, "lineno", 0)))
    return found


def test_one_module_loops_over_binary_svm_problems():
    looping = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = _loops_solving_problems(ast.parse(path.read_text()))
        if lines:
            looping[str(path.relative_to(ROOT))] = lines
    assert set(looping) == {_SVM_DRIVER}, (
        f"binary SVM problems are looped over and solved in {looping}: the SVM training "
        f"driver ({_SVM_DRIVER}: solve_svm_path, solve_rows_path, path_units) is the one place")


def test_the_svm_driver_check_sees_a_loop_outside_the_driver():
    code = ("def fit(problems, rows, cache):\n"
            "    for members, y_pm, c in problems:\n"
            "        self._solve(rows, cache, y_pm, c)\n")
    assert _loops_solving_problems(ast.parse(code)) == [2]
    assert _loops_solving_problems(ast.parse("for p in problems:\n    print(p)\n")) == []


#: what a thread scheduler is made of: the search's one runner holds them
_SCHEDULING = {"ThreadPoolExecutor", "Thread", "Semaphore", "BoundedSemaphore", "Event",
               "run_with_stop"}
_RUNNER = "kernelscale/model_selection/_runner.py"


def _grid_loops(tree):
    """``(line, what)`` of a search module's own scheduling: threads, pools, semaphores,
    events, and grid functions over gamma ``factors`` that neither hand their units to
    ``run_units`` nor to a grid of the module that does."""
    found, grids = [], {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in _SCHEDULING:
                found.append((node.lineno, name))
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_grid") and \
                "factors" in [a.arg for a in node.args.args + node.args.kwonlyargs]:
            grids[node.name] = (node.lineno, {_call_name(c) for c in ast.walk(node)
                                              if isinstance(c, ast.Call)})
    handing = {"run_units"}
    while True:
        more = {name for name, (_, calls) in grids.items() if calls & handing} - handing
        if not more:
            break
        handing |= more
    found += [(line, f"{name} loops over its gammas itself")
              for name, (line, _) in grids.items() if name not in handing]
    return found


def test_the_search_has_one_loop_over_grid_units():
    """Every family's grid hands its gammas to one runner (the deadline, the threads, the
    kernel slots, a failed unit's warning): no other module of the search schedules."""
    problems = []
    for path in sorted((PACKAGE / "model_selection").glob("*.py")):
        where = str(path.relative_to(ROOT))
        if where != _RUNNER:
            problems += [f"{where}:{line}: {what}"
                         for line, what in _grid_loops(ast.parse(path.read_text()))]
    assert not problems, "scheduling outside the runner:\n" + "\n".join(problems)


def test_the_grid_loop_check_sees_a_scheduler_outside_the_runner():
    code = ("def svm_grid(X, *, factors):\n"
            "    slots = threading.BoundedSemaphore(2)\n"
            "    return [fit(f) for f in factors]\n")
    assert sorted(_grid_loops(ast.parse(code))) == [
        (1, "svm_grid loops over its gammas itself"), (2, "BoundedSemaphore")]
    ok = ("def svm_grid(X, *, factors):\n    return _shared_grid(X, factors=factors)\n"
          "def _shared_grid(X, *, factors):\n    return run_units(factors, fit)\n")
    assert _grid_loops(ast.parse(ok)) == []


#: the names the search's data, grid and settings travel under
_SEARCH_INPUTS = {"data", "space", "settings", "part", "fold_settings"}


def _inputs_by_key(tree):
    """Lines where the search's data, grid or settings are read or written by a string key
    (``data["X"]``): they are dataclasses read by name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                isinstance(node.slice.value, str):
            base = node.value
            name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            if name in _SEARCH_INPUTS:
                found.append(node.lineno)
        if isinstance(node, ast.Dict) and any(
                key is None and getattr(value, "attr", getattr(value, "id", None))
                in _SEARCH_INPUTS for key, value in zip(node.keys, node.values)):
            found.append(node.lineno)  # {**space, ...}: a copy as a dict
    return found


def test_the_search_reads_its_data_space_and_settings_by_name():
    problems = []
    for path in sorted((PACKAGE / "model_selection").glob("*.py")):
        problems += [f"{path.relative_to(ROOT)}:{line}"
                     for line in _inputs_by_key(ast.parse(path.read_text()))]
    assert not problems, "search inputs indexed by string keys:\n" + "\n".join(problems)
    assert _inputs_by_key(ast.parse('x = state.data["X"]\ny = {**space, "factors": f}\n')) \
        == [1, 2]


# ------------------------------------------------------------------ the search's structure
# (issue 62: one evaluator, one clock, few tuning constants)

#: the search's modules that fit and score configurations: the evaluator, and the
#: families' shared-work grids it runs as its batch form
_EVALUATOR = {"_evaluator.py", "_families.py", "_exact.py", "_exact_rows.py", "_features.py",
              "_least_squares.py"}
#: what only those modules may call: a grid, a family's run, a fit, a scorer
_GRIDS = {"falkon_grid", "exact_svm_grid", "exact_svm_rows_grid", "nystrom_svm_grid",
          "rff_svm_grid", "fit_linear_svm", "get_scorer"}


def _fits_and_scores(tree):
    """``(line, what)`` of each fit-and-score call in ``tree``: an estimator's ``fit``
    (but a table encoder's), a family's ``run``, a grid function, a scorer."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in _GRIDS:
            found.append((node.lineno, func.id))
        elif isinstance(func, ast.Attribute):
            receiver = func.value
            encoder = isinstance(receiver, ast.Call) and \
                getattr(receiver.func, "id", None) == "TabularEncoder"
            # the evaluator's own methods are its calls
            evaluator = getattr(receiver, "id", getattr(receiver, "attr", None)) in \
                ("ev", "evaluator")
            if func.attr in ("fit", "fit_transform") and not (encoder or evaluator):
                found.append((node.lineno, f".{func.attr}()"))
            elif func.attr == "run" and (getattr(receiver, "id", "") in ("family", "FAMILIES")
                                         or isinstance(receiver, ast.Subscript)):
                found.append((node.lineno, "a family's run"))
    return found


def test_every_fit_and_score_of_the_search_goes_through_the_evaluator():
    problems = []
    for path in sorted((PACKAGE / "model_selection").glob("*.py")):
        if path.name in _EVALUATOR:
            continue
        problems += [f"{path.relative_to(ROOT)}:{line}: {what}"
                     for line, what in _fits_and_scores(ast.parse(path.read_text()))]
    assert not problems, "fits and scores outside the evaluator:\n" + "\n".join(problems)


def test_the_evaluator_check_sees_a_fit_outside_it():
    code = ("model.fit(X, y)\nTabularEncoder().fit(X)\nFAMILIES[name].run(task)\n"
            "falkon_grid(X, Y)\nself.ev.fit(record, rows)\n")
    assert _fits_and_scores(ast.parse(code)) == [(1, ".fit()"), (3, "a family's run"),
                                                (4, "falkon_grid")]


def _clock_reads(tree):
    """``(line, what)`` of each import of a clock: ``now`` (kernelscale's), ``time``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("_clock"):
            found += [(node.lineno, a.name) for a in node.names if a.name in ("now", "_now")]
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            found.append((node.lineno, "time"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name == "time"]
    return found


def test_only_the_scheduler_reads_the_clock():
    problems = []
    for path in sorted((PACKAGE / "model_selection").glob("*.py")):
        if path.name == "_schedule.py":
            continue
        problems += [f"{path.relative_to(ROOT)}:{line}: {what}"
                     for line, what in _clock_reads(ast.parse(path.read_text()))]
    assert not problems, "the clock read outside the scheduler:\n" + "\n".join(problems)
    assert _clock_reads(ast.parse("from .._clock import now, checkpoint\nimport time\n")) == \
        [(1, "now"), (2, "time")]


def _numeric(node):
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_numeric(e) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return _numeric(node.left) and _numeric(node.right)
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    return False


def _tuning_constants(source):
    """``(line, names, commented)`` of each module-level numeric constant of ``source``:
    commented where a comment line stands right above it."""
    lines = source.splitlines()
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and _numeric(node.value):
            names = [n.id for t in node.targets
                     for n in ([t] if isinstance(t, ast.Name) else getattr(t, "elts", []))]
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            found.append((node.lineno, names, above.startswith("#")))
    return found


def test_the_search_has_at_most_twenty_commented_tuning_constants():
    constants, uncommented = [], []
    for path in sorted((PACKAGE / "model_selection").glob("*.py")):
        for line, names, commented in _tuning_constants(path.read_text()):
            constants += names
            if not commented:
                uncommented.append(f"{path.relative_to(ROOT)}:{line}: {', '.join(names)}")
    assert len(constants) <= 20, constants
    assert not uncommented, "constants without a comment saying what measured them:\n" + \
        "\n".join(uncommented)
    assert _tuning_constants("#: measured\nA = 3\nB, C = 1, 2.0\nD = 'x'\n") == [
        (2, ["A"], True), (3, ["B", "C"], False)]
