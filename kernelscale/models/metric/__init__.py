"""Learned kernel metrics: per-feature widths (:class:`KernelWidths`) and a full metric by
the Recursive Feature Machine's rounds (:class:`KernelMetric`), each a transformer whose
output an isotropic kernel model with ``gamma=1`` reads as the learned kernel."""

from ._metric import KernelMetric, MetricTimeError
from ._widths import (
    KernelWidths,
    WidthsTimeError,
    is_classification,
    learn_widths,
    learning_rows,
    ridge_targets,
    split_rows,
)

__all__ = ["KernelWidths", "KernelMetric", "WidthsTimeError", "MetricTimeError", "learn_widths",
           "is_classification", "learning_rows", "ridge_targets", "split_rows"]
