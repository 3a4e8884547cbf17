"""scikit-learn's own test modules, run with ``kernelscale.patch_sklearn()`` on.

As scikit-learn-intelex proves its patch: the modules of the classes the patch routes
run unchanged in this process after the patch. For each module this prints (and
writes to ``results/sklearn_tests.json``) the tests passed / run with no deselection,
the failures, and how many fits of the routed classes ran on kernelscale and how many
fell back to scikit-learn's code, overall and within the deselected tests.

``sklearn_deselected.txt`` (beside this script) lists the tests expected to fail,
one per line, ``node id  # reason``; ``--check`` exits non-zero on a failure not
listed there or when a module passes fewer than 95% of its tests with none deselected
(what ``tests/test_patch_sklearn.py`` runs in the slow set); ``--update`` rewrites the
counts at the head of that file.

Usage::

    python benchmarks/sklearn_tests.py                 # every module, no deselection
    python benchmarks/sklearn_tests.py --check         # the deselection file applied
    python benchmarks/sklearn_tests.py --update        # refresh the file's counts
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DESELECTED = HERE / "sklearn_deselected.txt"
MODULES = ["sklearn.svm.tests.test_svm", "sklearn.svm.tests.test_sparse",
           "sklearn.tests.test_kernel_approximation", "sklearn.tests.test_kernel_ridge"]
#: the share of a module's tests that must pass with no deselection
PASS_GOAL = 0.95


def read_deselected():
    """``{node id: reason}`` from the deselection file."""
    found = {}
    if DESELECTED.exists():
        for line in DESELECTED.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                node, _, reason = line.partition("#")
                found[node.strip()] = reason.strip()
    return found


def short_id(nodeid, module):
    """``sklearn/.../test_x.py::test`` whatever path pytest gives the installed file (it
    varies with the directory the run starts in, and may be empty)."""
    return module.replace(".", "/") + ".py::" + nodeid.split("::", 1)[-1]


class _Outcomes:
    """A pytest plugin: each test's outcome and the patched fits it made."""

    def __init__(self, counts, reset, module):
        self.counts, self.reset, self.module = counts, reset, module
        self.outcomes, self.fits = {}, {}

    def pytest_runtest_setup(self, item):
        self.reset()

    def pytest_runtest_logreport(self, report):
        node = short_id(report.nodeid, self.module)
        if report.when == "call" or report.outcome != "passed":
            if report.outcome == "failed" or node not in self.outcomes:
                self.outcomes[node] = report.outcome
        if report.when == "teardown":
            fits = {"kernelscale": 0, "scikit-learn": 0}
            for per_class in self.counts().values():
                for where, count in per_class.items():
                    fits[where] += count
            self.fits[node] = fits


def run_module(module):
    import pytest

    import kernelscale.patch as patch

    plugin = _Outcomes(patch.fit_counts, patch.reset_fit_counts, module)
    with tempfile.TemporaryDirectory() as empty:
        ini = Path(empty) / "pytest.ini"
        ini.write_text("[pytest]\n")  # none of this repository's options (markers, -m)
        args = ["--pyargs", module, "-q", "-p", "no:cacheprovider", "-c", str(ini),
                "--rootdir", empty, "-W", "ignore::FutureWarning", "--no-header",
                "-o", "console_output_style=classic", "-rN"]
        code = pytest.main(args, plugins=[plugin])
    return code, plugin


def summarise(module, plugin, listed):
    ran = [n for n in plugin.outcomes if plugin.outcomes[n] != "skipped"]
    passed = [n for n in ran if plugin.outcomes[n] == "passed"]
    failed = sorted(n for n in ran if plugin.outcomes[n] == "failed")
    total = {"kernelscale": 0, "scikit-learn": 0}
    for fits in plugin.fits.values():
        for where in total:
            total[where] += fits[where]
    return {"module": module, "passed": len(passed), "run": len(ran),
            "share": len(passed) / max(len(ran), 1), "failed": failed,
            "fits": total, "listed": sorted(listed),
            "listed_passing": sorted(n for n in listed if plugin.outcomes.get(n) == "passed"),
            "fits_per_test": plugin.fits}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=MODULES)
    parser.add_argument("--check", action="store_true",
                        help="deselect the listed tests; fail on any other failure")
    parser.add_argument("--update", action="store_true",
                        help="rewrite the counts at the head of the deselection file")
    parser.add_argument("--out", default=str(HERE / "results" / "sklearn_tests.json"))
    args = parser.parse_args(argv)

    import kernelscale

    kernelscale.patch_sklearn()
    deselected = read_deselected()
    rows, problems = [], []
    for module in args.modules:
        prefix = module.replace(".", "/") + ".py::"
        mine = [n for n in deselected if n.startswith(prefix)]
        _, plugin = run_module(module)
        row = summarise(module, plugin, mine)
        rows.append(row)
        if row["share"] < PASS_GOAL:
            problems.append(f"{module}: {row['passed']} / {row['run']} passed "
                            f"(< {PASS_GOAL:.0%})")
        unexpected = [n for n in row["failed"] if n not in deselected]
        if args.check and unexpected:
            problems.append(f"{module}: failures not in the deselection file: {unexpected}")
    kernelscale.unpatch_sklearn()
    print()
    print(f"{'module':44s} {'passed / run':>13s} {'share':>7s} {'fits: kernelscale':>18s} "
          f"{'scikit-learn':>13s}")
    for row in rows:
        print(f"{row['module']:44s} {row['passed']:>6d} / {row['run']:<5d} {row['share']:7.1%} "
              f"{row['fits']['kernelscale']:>18d} {row['fits']['scikit-learn']:>13d}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(
        {"check": args.check, "command": "python benchmarks/" + " ".join(
            [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
         "modules": [{k: v for k, v in r.items() if k != "fits_per_test"} for r in rows]},
        indent=1))
    if args.update:
        update_counts(rows, deselected)
    for problem in problems:
        print("FAIL:", problem)
    return 1 if problems else 0


def update_counts(rows, deselected):
    """Rewrite the head of the deselection file: per module, passed / run and the fits."""
    body = [line for line in DESELECTED.read_text().splitlines()
            if not line.startswith("#:")] if DESELECTED.exists() else []
    head = ["#: counts written by `python benchmarks/sklearn_tests.py --update` (no "
            "deselection):"]
    for row in rows:
        listed = row["listed"]
        inside = {"kernelscale": 0, "scikit-learn": 0}
        for node, fits in row["fits_per_test"].items():
            if node in listed:
                for where in inside:
                    inside[where] += fits[where]
        head.append(
            f"#: {row['module']}: {row['passed']} / {row['run']} passed "
            f"({row['share']:.1%}); patched fits on kernelscale {row['fits']['kernelscale']}, "
            f"on scikit-learn's code {row['fits']['scikit-learn']}; within the "
            f"{len(listed)} tests listed here: {inside['kernelscale']} and "
            f"{inside['scikit-learn']}")
    DESELECTED.write_text("\n".join(head + body) + "\n")


if __name__ == "__main__":
    sys.exit(main())
