"""Averaged stochastic gradient descent for the linear SVM, for online (``partial_fit``) training.

Divided by ``C N``, the SVM objective ``1/2 ||w||^2 + C sum_i s_i loss_i`` is
``lambda/2 ||w||^2 + mean_i s_i loss_i`` with ``lambda = 1 / (C N)``. Online,
``N`` is the number of rows seen so far, so the penalty shrinks as data arrive
and the target is the batch objective of everything seen. Each step takes a
mini-batch gradient with step size ``eta_t = eta_0 / (1 + lambda eta_0 t)^0.75``
and the returned weights are a weighted running average of the iterates (weight
proportional to the step number), which is what makes plain SGD accurate
(Bottou 2010; Lacoste-Julien, Schmidt & Bach 2012). All one-vs-rest problems
share each mini-batch: one GEMM per step.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SGDState", "asgd_pass"]


class SGDState:
    """Iterate, average and counters of an averaged-SGD run.

    Parameters
    ----------
    n_features : int
    n_problems : int
    """

    def __init__(self, n_features, n_problems):
        self.W = np.zeros((n_features + 1, n_problems))
        self.W_avg = np.zeros((n_features + 1, n_problems))
        self.t = 0
        self.n_seen = 0.0
        self.eta0 = None

    @classmethod
    def from_weights(cls, W, n_seen):
        """A state that starts at weights ``W`` (a batch solution) fitted on ``n_seen`` rows."""
        state = cls(W.shape[0] - 1, W.shape[1])
        state.W = np.array(W, dtype=np.float64)
        state.W_avg = state.W.copy()
        state.n_seen = float(n_seen)
        return state


def _curvature(Z, S, loss, bias, rng, n_power=20):
    """Largest curvature of the mean loss: ``c lambda_max([Z, bias]^T [Z, bias] / n)``.

    Found by a few power iterations on (at most) 4096 rows. The step ``1 / curvature`` is
    the largest that gradient descent on the quadratic part takes stably; the trace
    (``mean ||z||^2``), a cheaper bound, is many times larger for kernel features, whose
    covariance has a few dominant directions, and made SGD crawl.
    """
    rows = Z[: min(len(Z), 4096)].astype(np.float64)
    A = np.hstack([rows, np.full((len(rows), 1), bias)])
    v = rng.standard_normal(A.shape[1])
    top = 0.0
    for _ in range(n_power):
        w = A.T @ (A @ v) / len(A)
        top = float(np.linalg.norm(w))
        if top <= 0:
            break
        v = w / top
    scale = (2.0 if loss == "squared_hinge" else 1.0) * max(float(np.mean(S)), 1e-12)
    return scale * max(top, 1e-12)


def asgd_pass(state, Z, Y, S, *, C, loss, bias, batch_size, rng):
    """One pass of averaged SGD over the rows of ``Z`` (in a random order); updates ``state``.

    Parameters
    ----------
    state : SGDState
    Z : ndarray of shape (n_rows, n_features)
    Y : ndarray of shape (n_rows, n_problems)
        ``+-1`` targets.
    S : ndarray of shape (n_rows,) or (n_rows, n_problems)
        Row weights (sample and class weights).
    C : float
    loss : {"hinge", "squared_hinge"}
    bias : float
        Constant feature carrying the intercept (0: none).
    batch_size : int
    rng : numpy Generator
    """
    n, d = Z.shape
    S = S[:, None] if S.ndim == 1 else S
    if state.eta0 is None:
        state.eta0 = 1.0 / _curvature(Z, S, loss, bias, rng)
    state.n_seen += n
    lam = 1.0 / (C * state.n_seen)
    order = rng.permutation(n)
    for lo in range(0, n, batch_size):
        rows = order[lo:lo + batch_size]
        Zb = Z[rows]
        M = np.asarray(Zb @ state.W[:d].astype(Z.dtype), dtype=np.float64) + bias * state.W[d]
        slack = np.maximum(1.0 - Y[rows] * M, 0.0)
        if loss == "squared_hinge":
            G = -2.0 * S[rows] * Y[rows] * slack
        else:
            G = -S[rows] * Y[rows] * (slack > 0)
        grad = np.empty_like(state.W)
        grad[:d] = np.asarray(Zb.T @ G.astype(Z.dtype), dtype=np.float64)
        grad[d] = bias * G.sum(axis=0)
        grad /= len(rows)
        grad += lam * state.W
        eta = state.eta0 / (1.0 + lam * state.eta0 * state.t) ** 0.75
        state.W -= eta * grad
        state.t += 1
        # weighted averaging (rho_t = 2 / (t + 1)): later, better iterates count more,
        # so the average forgets the poor first steps (Lacoste-Julien et al. 2012)
        state.W_avg += (2.0 / (state.t + 1.0)) * (state.W - state.W_avg)
    return state
