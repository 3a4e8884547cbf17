"""Helpers shared by the benchmark scripts: machine description, timing, output."""

from __future__ import annotations

import gc
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def machine():
    """A short description of the machine and library versions, for every record."""
    import scipy
    import sklearn

    import kernelscale

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            names = (line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
            cpu = next(names)
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__,
        "kernelscale": kernelscale.__version__,
    }


def timed(func, *args, **kwargs):
    """``(result, seconds)`` of one call, after a garbage collection."""
    gc.collect()
    start = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - start


def save(name, payload):
    """Write ``payload`` as ``benchmarks/results/<name>.json`` and return the path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1))
    return path
