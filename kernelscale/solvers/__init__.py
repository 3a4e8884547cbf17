"""Solvers: plain functions on arrays, called by the estimators in ``kernelscale.models``."""

from ._blocked import margins, rmatvec, weighted_gram
from ._dual_cd import dual_cd
from ._falkon import conjugate_gradient, falkon, kernel_expansion
from ._logistic import LogisticProblem, fit_logistic
from ._primal import squared_hinge_lbfgs, squared_hinge_newton, squared_hinge_objective
from ._ridge import RidgeStatistics, accumulate, solve_ridge
from ._subgradient import subgradient_descent

__all__ = [
    "LogisticProblem",
    "RidgeStatistics",
    "accumulate",
    "conjugate_gradient",
    "dual_cd",
    "falkon",
    "fit_logistic",
    "kernel_expansion",
    "margins",
    "rmatvec",
    "solve_ridge",
    "squared_hinge_lbfgs",
    "squared_hinge_newton",
    "squared_hinge_objective",
    "subgradient_descent",
    "weighted_gram",
]
