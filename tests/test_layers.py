"""The package's imports keep the layer order the README states, and form no cycle.

Every ``import`` in ``kernelscale/`` (module level and inside functions) is
parsed. A module may import its own layer, the base modules (``_config``,
``_validation``, ``_constraints``, ``_progress``, the package root) and the
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
        "kernelscale._planner"}


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
