"""Solvers: plain functions on arrays, called by the estimators in ``kernelscale.models``."""

from ._blocked import margins, rmatvec, weighted_gram
from ._dual_cd import dual_cd
from ._primal import squared_hinge_lbfgs, squared_hinge_newton, squared_hinge_objective
from ._ridge import RidgeStatistics, accumulate, solve_ridge
from ._subgradient import subgradient_descent

__all__ = [
    "RidgeStatistics",
    "accumulate",
    "dual_cd",
    "margins",
    "rmatvec",
    "solve_ridge",
    "squared_hinge_lbfgs",
    "squared_hinge_newton",
    "squared_hinge_objective",
    "subgradient_descent",
    "weighted_gram",
]
