"""Experiments that produce records (JSON-able dicts), and plots drawn from records only."""

from ._report import highlights, load_warning, write_report
from ._runner import Experiment, Method, machine, machine_load, run_experiment, timed
from .approx import DEFAULT_MAPS, plot_approx, run_approx_experiment
from .experiments import EXPERIMENTS, build_experiment, check_experiment_data

__all__ = [
    "DEFAULT_MAPS", "EXPERIMENTS", "Experiment", "Method", "build_experiment",
    "check_experiment_data", "highlights", "load_warning", "machine_load",
    "machine",
    "plot_approx", "run_approx_experiment", "run_experiment", "timed", "write_report",
]
