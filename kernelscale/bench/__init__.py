"""Experiments that produce records (JSON-able dicts), and plots drawn from records only."""

from .approx import DEFAULT_MAPS, plot_approx, run_approx_experiment

__all__ = ["DEFAULT_MAPS", "plot_approx", "run_approx_experiment"]
