"""L2-regularised logistic regression on explicit features: L-BFGS or Newton-CG.

The objective, scaled by ``1 / (C W)`` so that ``tol`` does not depend on n or C
(the way scikit-learn scales its own), is

    f(W, b) = (1 / W) sum_i s_i loss(z_i W + b, y_i) + ||W||^2 / (2 C W_total)

with the binary logistic loss ``log(1 + exp(-y m))`` (one column, ``y = +-1``)
or the multinomial loss ``logsumexp(m) - m_y`` (one column per class). The
intercept is not penalised. Every evaluation is one pass over ``Z`` in row
blocks: float32 GEMMs when ``Z`` is float32, the losses and the sums across
blocks in float64; a Hessian-vector product is one more pass.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
from scipy.special import expit, log_expit, logsumexp

from .._planner import sparse_row_bytes
from .._validation import iter_row_blocks

__all__ = ["LogisticProblem", "ParameterLayout", "fit_logistic", "penalised"]


class ParameterLayout:
    """The flat parameter vector of ``d`` weights and an intercept per column (``k``)."""

    d: int
    k: int
    fit_intercept: bool

    @property
    def n_params(self):
        return (self.d + 1) * self.k

    def unpack(self, x):
        """``(coef of shape (d, k), intercept of shape (k,))`` views of ``x``."""
        W = x.reshape(self.d + 1, self.k)
        return W[: self.d], (W[self.d] if self.fit_intercept else np.zeros(self.k))


class LogisticProblem(ParameterLayout):
    """Loss, gradient and Hessian-vector products of regularised logistic regression.

    Parameters
    ----------
    Z : {ndarray, sparse matrix} of shape (n_samples, n_features)
    targets : ndarray of shape (n_samples,)
        ``+-1`` for the binary loss; class indices ``0..K-1`` for the multinomial.
    n_columns : int
        1 (binary) or K (multinomial).
    weights : ndarray of shape (n_samples,)
    C : float
        Inverse penalty.
    fit_intercept : bool
    memory_budget : int
    """

    def __init__(self, Z, targets, n_columns, weights, C, fit_intercept, memory_budget):
        self.Z = Z
        self.targets = targets
        self.k = n_columns
        self.weights = weights
        self.total = float(weights.sum())
        self.C = C
        self.fit_intercept = fit_intercept
        n, d = Z.shape
        self.d = d
        per_row = Z.dtype.itemsize * (2 * n_columns) + 8 * 4 * n_columns + sparse_row_bytes(Z)
        self.blocks = list(iter_row_blocks(n, per_row, memory_budget, what="a logistic block"))
        self._cache_x = None
        self._cache_curvature = None
        self._cache_fx = None

    def _margins(self, Zb, coef, intercept):
        return np.asarray(Zb @ coef, dtype=np.float64) + intercept

    def _block_loss(self, M, start, stop):
        """Loss sum and d loss / d margins of one block (weights included)."""
        w = self.weights[start:stop]
        t = self.targets[start:stop]
        if self.k == 1:
            ym = t * M[:, 0]
            loss = -w @ log_expit(ym)
            G = (-t * expit(-ym) * w)[:, None]
            return loss, G
        lse = logsumexp(M, axis=1)
        loss = w @ (lse - M[np.arange(len(t)), t])
        P = np.exp(M - lse[:, None])
        P[np.arange(len(t)), t] -= 1.0
        return loss, P * w[:, None]

    def loss_grad(self, x):
        """Return ``(f(x), grad f(x))`` (the last evaluation is cached)."""
        if self._cache_fx is not None and np.array_equal(self._cache_fx[0], x):
            return self._cache_fx[1], self._cache_fx[2].copy()
        coef, intercept = self.unpack(x)
        loss, grad_coef, grad_b = self.data_terms(coef, intercept)
        f, grad = penalised(loss, grad_coef, grad_b, coef, self.total, self.C,
                            self.fit_intercept)
        self._cache_fx = (x.copy(), f, grad.copy())
        return f, grad

    def data_terms(self, coef, intercept):
        """Unscaled ``(sum_i s_i loss_i, d/dcoef, d/dintercept)`` over these rows."""
        coef_z = coef.astype(self.Z.dtype)
        loss = 0.0
        grad_coef = np.zeros((self.d, self.k))
        grad_b = np.zeros(self.k)
        for start, stop in self.blocks:
            Zb = self.Z[start:stop]
            block_loss, G = self._block_loss(self._margins(Zb, coef_z, intercept), start, stop)
            loss += block_loss
            grad_coef += np.asarray(Zb.T @ G.astype(self.Z.dtype), dtype=np.float64)
            grad_b += G.sum(axis=0)
        return loss, grad_coef, grad_b

    def _curvature(self, x):
        """Per-block probabilities at ``x`` (cached for the Hessian products at ``x``)."""
        if self._cache_x is not None and np.array_equal(self._cache_x, x):
            return self._cache_curvature
        coef, intercept = self.unpack(x)
        coef_z = coef.astype(self.Z.dtype)
        probs = []
        for start, stop in self.blocks:
            M = self._margins(self.Z[start:stop], coef_z, intercept)
            if self.k == 1:
                p = expit(M[:, 0])
                probs.append(p * (1.0 - p) * self.weights[start:stop])
            else:
                probs.append(np.exp(M - logsumexp(M, axis=1)[:, None]))
        self._cache_x, self._cache_curvature = x.copy(), probs
        return probs

    def hessp(self, x, v):
        """Hessian of ``f`` at ``x`` times ``v``."""
        probs = self._curvature(x)
        coef_v, b_v = self.unpack(v)
        coef_vz = coef_v.astype(self.Z.dtype)
        out_coef = np.zeros((self.d, self.k))
        out_b = np.zeros(self.k)
        for (start, stop), p in zip(self.blocks, probs):
            Zb = self.Z[start:stop]
            S = self._margins(Zb, coef_vz, b_v)
            if self.k == 1:
                R = S * p[:, None]
            else:
                PS = p * S
                R = (PS - p * PS.sum(axis=1, keepdims=True)) * self.weights[start:stop, None]
            out_coef += np.asarray(Zb.T @ R.astype(self.Z.dtype), dtype=np.float64)
            out_b += R.sum(axis=0)
        scale = 1.0 / self.total
        out = np.empty((self.d + 1, self.k))
        out[: self.d] = scale * out_coef + coef_v / (self.C * self.total)
        out[self.d] = scale * out_b if self.fit_intercept else 0.0
        return out.ravel()


def penalised(loss, grad_coef, grad_b, coef, total, C, fit_intercept):
    """The scaled objective and its flat gradient from the data terms of all rows."""
    d, k = coef.shape
    scale = 1.0 / total
    penalty = 1.0 / (C * total)
    f = scale * loss + 0.5 * penalty * float(np.sum(coef * coef))
    grad = np.empty((d + 1, k))
    grad[:d] = scale * grad_coef + penalty * coef
    grad[d] = scale * grad_b if fit_intercept else 0.0
    return f, grad.ravel()


def _printer(intermediate_result):
    print(f"[logistic] objective {intermediate_result.fun:.8g}", flush=True)


def _callbacks(verbose, callback):
    if not verbose and callback is None:
        return None

    def each(intermediate_result):
        if verbose:
            _printer(intermediate_result)
        if callback is not None:
            callback()
    return each


def fit_logistic(problem, *, solver, tol, max_iter, x0=None, verbose=0, callback=None):
    """Minimise a :class:`LogisticProblem`.

    Parameters
    ----------
    problem : LogisticProblem
    solver : {"lbfgs", "newton-cg"}
    tol : float
        Gradient tolerance (L-BFGS: largest gradient entry; Newton-CG: average
        absolute step).
    max_iter : int
    x0 : ndarray, default=None
        Warm start (zeros when None).
    verbose : int
        Print every L-BFGS objective (Newton-CG: scipy's summary).
    callback : callable, default=None
        ``callback()`` after every iteration (for progress bars).

    Returns
    -------
    coef : ndarray of shape (n_columns, n_features)
    intercept : ndarray of shape (n_columns,)
    n_iter : int
    converged : bool
    """
    x0 = np.zeros(problem.n_params) if x0 is None else x0
    if solver == "lbfgs":
        result = scipy.optimize.minimize(
            problem.loss_grad, x0, jac=True, method="L-BFGS-B",
            options={"maxiter": max_iter, "gtol": tol, "ftol": 64 * np.finfo(float).eps,
                     "maxls": 50},
            callback=_callbacks(verbose, callback),
        )
    else:
        result = scipy.optimize.minimize(
            lambda x: problem.loss_grad(x)[0], x0, jac=lambda x: problem.loss_grad(x)[1],
            hessp=problem.hessp, method="Newton-CG",
            options={"maxiter": max_iter, "xtol": tol, "disp": bool(verbose)},
            callback=None if callback is None else (lambda xk: callback()),
        )
    coef, intercept = problem.unpack(result.x)
    converged = bool(result.success) or result.nit < max_iter
    return coef.T.copy(), np.array(intercept, dtype=float), int(result.nit), converged

