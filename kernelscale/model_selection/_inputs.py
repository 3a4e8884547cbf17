"""What a search's families read: its rows, its grid and its settings, as named fields.

Every family's grid, memory check and refit reads these three objects (a subclass
of scikit-learn's ``BaseSearchCV`` reads its estimator's parameters the same way):
:class:`SearchData` the rows, :class:`SearchSpace` the grid, :class:`SearchSettings`
what every configuration shares. The stages that change them (the learned widths
or metric rescale the columns and reset the kernel scale) assign their fields.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["SearchData", "SearchSpace", "SearchSettings"]


@dataclasses.dataclass
class SearchData:
    """The rows a search cross-validates on.

    Attributes
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
        The columns the grids run on (after learned widths or a metric, the
        transformed copy).
    y : ndarray of shape (n,) or (n, n_targets)
    sample_weight : ndarray of shape (n,)
    classes : ndarray or None
        A classifier's classes.
    y_index : ndarray of shape (n,) or None
        A classifier's class index of each row.
    raw_X : {ndarray, sparse matrix} or None
        The columns as given, where ``X`` is a transformed copy.
    """

    X: object
    y: np.ndarray
    sample_weight: np.ndarray
    classes: np.ndarray | None = None
    y_index: np.ndarray | None = None
    raw_X: object = None

    #: the fields with one entry per row (a subsample cuts them)
    ROW_FIELDS = ("X", "y", "sample_weight", "y_index", "raw_X")

    @property
    def n(self):
        """The number of rows."""
        return self.X.shape[0]

    @property
    def columns(self):
        """The columns candidates are fitted and scored on (never a transformed copy)."""
        return self.X if self.raw_X is None else self.raw_X

    def take(self, rows):
        """These data on ``rows`` (an index array), the classes kept."""
        return dataclasses.replace(self, **{
            name: getattr(self, name)[rows] for name in self.ROW_FIELDS
            if getattr(self, name) is not None})


@dataclasses.dataclass
class SearchSpace:
    """A search's grid: the kernel scale, its factors, the penalties and the components.

    Attributes
    ----------
    factors : sequence of float
        gamma = ``gamma_ref * factor``.
    gamma_ref : float
    n_components : int
        Centres, landmarks or random features of the approximate families.
    Cs : sequence of float or None
        The SVM families' penalties (None for a regressor).
    alphas : sequence of float or None
        FALKON's penalties, each a sum over every row.
    kernel : {"rbf", "laplacian"}
        FALKON's kernel (the other families' is RBF).
    """

    factors: list
    gamma_ref: float
    n_components: int
    Cs: object = None
    alphas: object = None
    kernel: str = "rbf"

    def with_factors(self, factors):
        """This grid with only the gamma ``factors`` given."""
        return dataclasses.replace(self, factors=list(factors))


@dataclasses.dataclass
class SearchSettings:
    """What every configuration of a search shares.

    Attributes
    ----------
    scoring : str
    memory_budget : int
        Bytes the grids and fits may hold.
    tol : float
    n_jobs : int
    random_state : int
        The seed of centres, landmarks, random features and subsamples.
    dtype : {None, "float32", "float64"}
        The refit's dtype as the user gave it.
    weight_total : float
        The sum of the sample weights (FALKON's penalties are per this many rows).
    class_weight, multiclass, break_ties, probability
        The classifier's options (a regressor's stay at their defaults).
    halving : bool
        Whether the gammas are screened on growing subsamples.
    target : {"identity", "log"}
        A regressor's target as its models are fitted on (:func:`._space.target_inverse`
        turns their predictions back before they are scored).
    """

    scoring: str
    memory_budget: int
    tol: float
    n_jobs: int
    random_state: int
    dtype: str | None
    weight_total: float
    class_weight: object = None
    multiclass: str = "ovo"
    break_ties: bool = False
    probability: bool = False
    halving: bool = False
    target: str = "identity"
