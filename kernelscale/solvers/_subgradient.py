"""Heavy-ball subgradient descent on the primal SVM (seed 003's method, corrected).

Kept **for comparison only**: it needs many passes and never reaches the accuracy
of dual coordinate descent or Newton. Two errors of the seed are fixed: the hinge
subgradient uses the indicator ``1[y_i m_i < 1]`` (the seed multiplied by the
margin), and the bias sits inside the label product ``y_i (w . x_i + b)``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._blocked import margins, rmatvec

__all__ = ["kernel_subgradient_descent", "kernel_subgradient_svm", "subgradient_descent"]


def _objective_and_subgradient(Z, y, C, w, bias, loss, memory_budget):
    m = margins(Z, w, bias, memory_budget)
    slack = np.maximum(1.0 - y * m, 0.0)
    if loss == "hinge":
        value = 0.5 * float(w @ w) + float(np.sum(C * slack))
        coef = C * y * (slack > 0)
    else:
        value = 0.5 * float(w @ w) + float(np.sum(C * slack**2))
        coef = 2.0 * C * y * slack
    return value, w - rmatvec(Z, coef, bias, memory_budget)


def subgradient_descent(
    Z, y, C, *, loss="hinge", bias=1.0, max_iter=1000, momentum=0.9, tol=1e-4,
    memory_budget, callback=None,
):
    """Minimise ``1/2 ||w||^2 + sum_i C_i loss_i`` by heavy-ball subgradient steps.

    The objective is 1-strongly convex, so the step ``(1 - momentum) / t`` at pass
    ``t`` (Pegasos' rate, damped for the momentum) converges. As in Pegasos, each
    iterate is projected onto the ball ``||w||^2 <= 2 sum_i C_i`` that contains the
    minimiser (``P(w*) <= P(0)``), which tames the huge early steps. The best
    iterate seen is returned: subgradient steps do not decrease ``P`` monotonically.

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
    n_iter : int
    converged : bool
        True when the best objective improved by less than ``tol`` (relative) over
        the last 20 passes.
    """
    n, d = Z.shape
    w = np.zeros(d + 1)
    previous = w.copy()
    radius = np.sqrt(2.0 * float(np.sum(C)))
    best_w, best_value, best_history = w.copy(), np.inf, []
    for t in range(1, max_iter + 1):
        value, sub = _objective_and_subgradient(Z, y, C, w, bias, loss, memory_budget)
        if value < best_value:
            best_w, best_value = w.copy(), value
        best_history.append(best_value)
        if callback is not None:
            callback(t, {"objective": value})
        # "converged" only once the method has left w = 0 and then stalled
        if (t > 20 and best_value < best_history[0]
                and best_history[-21] - best_value <= tol * abs(best_value)):
            return best_w, t, True
        # Momentum acts on the projected iterates (w_t - w_{t-1}), not on an
        # unprojected velocity: a velocity that the projection does not see keeps
        # pushing against the ball and stalls the method.
        step = w - (1.0 - momentum) / t * sub + momentum * (w - previous)
        norm = np.linalg.norm(step)
        if norm > radius:
            step *= radius / norm
        previous, w = w, step
    return best_w, max_iter, False


def kernel_subgradient_descent(
    matvec, y, C, *, max_iter=1000, momentum=0.9, tol=1e-4, callback=None,
):
    """Heavy-ball subgradient descent on the kernel SVM in representer form.

    With ``f = sum_j beta_j k'(x_j, .)`` and ``k' = k + 1`` (the intercept as a
    regularized constant feature, as in LIBLINEAR), minimise
    ``1/2 ||f||^2 + sum_i C_i max(0, 1 - y_i f(x_i))``. The step is the
    functional subgradient ``f - sum_i C_i y_i 1[y_i f(x_i) < 1] k'(x_i, .)``,
    i.e. ``beta - c`` in coefficients, with the same rate, momentum and
    projection as :func:`subgradient_descent`. For comparison only: every pass
    costs a product with the n x n kernel matrix and thousands are needed.

    Parameters
    ----------
    matvec : callable
        ``matvec(v)`` returns ``K' v`` for a vector of length n.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    C : ndarray of shape (n_samples,)
    max_iter, momentum, tol, callback
        As in :func:`subgradient_descent`.

    Returns
    -------
    beta : ndarray of shape (n_samples,)
        Coefficients of ``k'``: the decision function is
        ``sum_j beta_j k(x_j, x) + sum_j beta_j``.
    n_iter : int
    converged : bool
    """
    n = y.size
    beta = np.zeros(n)
    previous = beta.copy()
    radius2 = 2.0 * float(np.sum(C))
    best_beta, best_value, best_history = beta.copy(), np.inf, []
    for t in range(1, max_iter + 1):
        f = matvec(beta)
        slack = np.maximum(1.0 - y * f, 0.0)
        value = 0.5 * float(beta @ f) + float(np.sum(C * slack))
        if value < best_value:
            best_beta, best_value = beta.copy(), value
        best_history.append(best_value)
        if callback is not None:
            callback(t, {"objective": value})
        if (t > 20 and best_value < best_history[0]
                and best_history[-21] - best_value <= tol * abs(best_value)):
            return best_beta, t, True
        sub = beta - C * y * (slack > 0)
        step = beta - (1.0 - momentum) / t * sub + momentum * (beta - previous)
        norm2 = float(step @ matvec(step))
        if norm2 > radius2:
            step *= np.sqrt(radius2 / norm2)
        previous, beta = beta, step
    return best_beta, max_iter, False


def kernel_subgradient_svm(rows, y, C, *, max_iter, tol, memory_budget):
    """One binary kernel SVM by :func:`kernel_subgradient_descent`, in :func:`smo`'s result form.

    ``rows`` (:class:`KernelRows`) gives the kernel: held whole when ``4 n^2``
    bytes fit ``memory_budget``, otherwise multiplied block by block. Warns
    when the passes run out (the method is offered for comparison only).
    """
    n = y.size
    everything = np.arange(n)
    if 4 * n * n <= memory_budget:
        K = np.empty((n, n), dtype=np.float32)
        rows.compute(everything, K)

        def matvec(v):
            return K @ v.astype(np.float32) + v.sum()
    else:
        def matvec(v):
            return rows.cross(everything, everything, v) + v.sum()
    beta, n_iter, converged = kernel_subgradient_descent(
        matvec, y, C, max_iter=1000 if max_iter < 0 else max_iter, tol=tol)
    if not converged:
        warnings.warn(f"The subgradient solver did not converge in {n_iter} passes; it is "
                      "offered for comparison only, use solver='smo'.", ConvergenceWarning,
                      stacklevel=5)
    # the decision function is sum_j beta_j k(x_j, x) + sum_j beta_j
    return {"alpha": beta, "intercept": float(beta.sum()), "objective": np.nan,
            "n_iter": n_iter, "signed": True}
