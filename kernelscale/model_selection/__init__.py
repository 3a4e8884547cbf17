"""Model selection: the best kernel model for the data, by one search that shares its work.

``KernelClassifierCV`` / ``KernelRegressorCV`` run one optimizer: a searcher that
proposes configurations (:mod:`._searcher`), one evaluator that fits and scores them
(:mod:`._evaluator`: the families' shared-work grids are its batch form), one cost
model (:mod:`._cost`), one clock (:mod:`._schedule`), and ensemble selection over
the out-of-fold predictions (:mod:`._ensemble`).
"""

from ..models.metric import KernelMetric, KernelWidths, learn_widths
from ._choice import choose_families
from ._classifier import KernelClassifierCV
from ._families import CLASSIFIER_FAMILIES, FAMILIES, REGRESSOR_FAMILIES
from ._regressor import KernelRegressorCV
from ._run import SearchTimeError

#: what the layers above (the command line, the root) use, the searches and their error;
#: the grids, byte counts and defaults stay in their modules (tests/test_layers.py checks
#: that nothing here goes unused above)
__all__ = ["KernelClassifierCV", "KernelRegressorCV", "SearchTimeError", "KernelWidths",
           "KernelMetric", "learn_widths", "choose_families", "CLASSIFIER_FAMILIES",
           "REGRESSOR_FAMILIES", "FAMILIES"]
