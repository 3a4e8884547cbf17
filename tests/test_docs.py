"""The documentation site builds without a warning, and its examples run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.slow
def test_the_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="the docs extra (sphinx, numpydoc) is not installed")
    pytest.importorskip("numpydoc", reason="the docs extra (sphinx, numpydoc) is not installed")
    pytest.importorskip("sphinx_gallery", reason="the docs extra (sphinx-gallery) is not "
                        "installed")
    # autosummary and the gallery write their pages into docs/: build from a copy of it
    import shutil

    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns(
        "_build", "generated", "auto_examples", "sg_execution_times.rst"))
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                          "html", str(docs), str(tmp_path / "html")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    page = (tmp_path / "html" / "generated" / "kernelscale.KernelClassifierCV.html").read_text()
    assert "time_budget" in page and "learn_widths" in page
    # the gallery ran every example and shows its plot
    for example in EXAMPLES:
        html = (tmp_path / "html" / "auto_examples" / f"{example.stem}.html").read_text()
        assert f"sphx_glr_{example.stem}_001.png" in html
        assert "sphx-glr-script-out" in html  # and its printed output
        assert (tmp_path / "html" / "_images" / f"sphx_glr_{example.stem}_001.png").exists()


def _docs_build_runs_the_examples():
    import importlib.util

    return all(importlib.util.find_spec(m) for m in ("sphinx", "numpydoc", "sphinx_gallery"))


@pytest.mark.skipif(_docs_build_runs_the_examples(),
                    reason="the docs build runs every example (test_the_docs_build_...)")
@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_examples_run(example, tmp_path):
    # without the docs extra, the examples still run as the scripts a user runs
    run = subprocess.run([sys.executable, str(example)], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path,
                         env={**os.environ, "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip()
