"""Kernel PCA and kernel k-means in the feature space of an explicit map."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.cluster import KMeans
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.validation import check_is_fitted

from ..._constraints import Interval, Options, validate_params
from ..._validation import check_sample_weight, check_X, resolve_memory_budget
from ...solvers import accumulate, chunked_kmeans
from ...sources import dask_method, is_dask_array
from .._approx import APPROX_CONSTRAINTS, ApproxKernelMixin
from .._chunked_fits import (
    MAP_SAMPLE_ROWS,
    chunked_source,
    fit_map_on_source,
    fit_pca_chunked,
)

__all__ = ["ApproxKernelPCA", "ApproxKernelKMeans"]


class _MappedUnsupervised(ClassNamePrefixFeaturesOutMixin, ApproxKernelMixin, BaseEstimator):
    def _map(self, X):
        """Validated, mapped ``X`` for a fitted estimator, in row blocks."""
        check_is_fitted(self)
        X = check_X(self, X, reset=False)
        budget = resolve_memory_budget(self.memory_budget)
        return np.vstack([Z for _, _, Z in self._mapped_blocks(X, budget)])

    def __sklearn_tags__(self):
        return self._more_tags_sparse(super().__sklearn_tags__())


class ApproxKernelPCA(TransformerMixin, _MappedUnsupervised):
    """Kernel PCA as PCA in the feature space of an explicit kernel map.

    Maps the data (n x D features, D = ``map_components``), accumulates the
    centred D x D covariance in row blocks (float64 sums of float32 GEMMs) and
    keeps its leading eigenvectors. O(n D^2 + D^3) time and O(D^2) memory
    beside the features, where exact kernel PCA costs O(n^3) and O(n^2). With
    a Nystroem map on every training point the projections are exact kernel
    PCA's (:class:`sklearn.decomposition.KernelPCA`) up to sign.

    Parameters
    ----------
    n_components : int, default=2
        Principal components kept (at most the map's output width).
    feature_map : str or transformer, default="nystroem"
        A name from :data:`kernelscale.feature_maps.FEATURE_MAPS` or any
        transformer (cloned; the map parameters below are then ignored).
    map_components : int, default=1000
        Size of the feature map (landmarks for Nystroem); the one estimator where
        it is not ``n_components``, which here is, as in scikit-learn's KernelPCA,
        the number of principal components.
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    dtype : {"float32", "float64"}, default="float32"
        dtype of the mapped features.
    memory_budget : int, default=None
        Bytes for row-block temporaries.
    random_state : int, RandomState instance or None, default=None
        Seeds the feature map.

    Attributes
    ----------
    feature_map_ : transformer
    mean_ : ndarray of shape (n_features_out,)
        Mean of the mapped training data.
    components_ : ndarray of shape (n_components, n_features_out)
        Principal axes in feature space, by decreasing variance; the sign makes
        each one's largest-magnitude entry positive.
    explained_variance_ : ndarray of shape (n_components,)
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Fraction of the total variance in feature space.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from kernelscale import ApproxKernelPCA
    >>> X, y = make_circles(n_samples=400, factor=0.3, noise=0.05, random_state=0)
    >>> pca = ApproxKernelPCA(n_components=2, map_components=200, gamma=10, random_state=0)
    >>> pca.fit_transform(X).shape
    (400, 2)
    """

    # scikit-learn's n_components (the principal components) takes the usual name of
    # the map's size, which is map_components here
    _map_size_param = "map_components"
    _parameter_constraints = {
        **{k: v for k, v in APPROX_CONSTRAINTS.items() if k != "n_components"},
        "n_components": [Interval("int", 1)],
        "map_components": [Interval("int", 1)],
    }

    def __init__(
        self, n_components=2, *, feature_map="nystroem", map_components=1000, kernel="rbf",
        gamma="scale", degree=3, coef0=0.0, dtype="float32", memory_budget=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.feature_map = feature_map
        self.map_components = map_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the map and the principal axes.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            Chunked input is reduced chunk by chunk (the covariance is a sum).
        y : ignored

        Returns
        -------
        self : ApproxKernelPCA
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit, then project ``X`` on the principal axes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        Z = self._fit(X)
        return self._project(Z)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _fit(self, X):
        validate_params(self)
        k = int(self.n_components)
        source = chunked_source(self, X, None, None)
        if source is not None:
            stats, Z = fit_pca_chunked(self, source), None
            width = stats.zz.shape[0]
        else:
            X = check_X(self, X, reset=True)
            budget = resolve_memory_budget(self.memory_budget)
            Z = self._fit_features(X)
            width = Z.shape[1]
        if k > width:
            raise ValueError(
                f"n_components={k} is more than the {width} columns of the feature "
                "map; lower n_components or raise map_components."
            )
        if Z is not None:
            stats = accumulate(Z, np.zeros((Z.shape[0], 0)), check_sample_weight(None, len(Z)),
                               budget)
        if stats.weight < 2:
            raise ValueError(
                f"ApproxKernelPCA needs at least 2 samples to estimate a covariance; got "
                f"n_samples = {int(stats.weight)}."
            )
        covariance = stats.zz / (stats.weight - 1)
        d = covariance.shape[0]
        values, vectors = scipy.linalg.eigh(covariance, subset_by_index=(d - k, d - 1))
        values, vectors = values[::-1], vectors[:, ::-1]
        signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(k)])
        signs[signs == 0] = 1.0
        self.components_ = (vectors * signs).T
        self.explained_variance_ = np.maximum(values, 0.0)
        total = float(np.trace(covariance))
        self.explained_variance_ratio_ = (
            self.explained_variance_ / total if total > 0 else np.zeros(k)
        )
        self.mean_ = stats.mean_z
        return Z

    def _project(self, Z):
        components = self.components_.T.astype(Z.dtype)
        return np.asarray((Z - self.mean_.astype(Z.dtype)) @ components, dtype=np.float64)

    def transform(self, X):
        """Project ``X`` on the principal axes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        if is_dask_array(X):
            return dask_method(self, "transform", X)
        return self._project(self._map(X))


class ApproxKernelKMeans(ClusterMixin, TransformerMixin, _MappedUnsupervised):
    """Kernel k-means as k-means in the feature space of an explicit kernel map.

    Maps the data once and runs scikit-learn's (Elkan / Lloyd) k-means on the
    features: O(n D k) per iteration instead of kernel k-means' O(n^2). Clusters
    that are not linearly separable in the input (rings, moons) separate in the
    RBF feature space.

    Parameters
    ----------
    n_clusters : int, default=8
    feature_map : str or transformer, default="nystroem"
        A name from :data:`kernelscale.feature_maps.FEATURE_MAPS` or any
        transformer (cloned; the map parameters below are then ignored).
    n_components : int, default=1000
        Size of the feature map (landmarks for Nystroem).
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    dtype : {"float32", "float64"}, default="float32"
        dtype of the mapped features.
    init : {"k-means++", "random"}, default="k-means++"
    n_init : int, default=3
        Runs with different seeds; the lowest inertia wins.
    max_iter : int, default=300
    tol : float, default=1e-4
    memory_budget : int, default=None
        Bytes for row-block temporaries at predict / transform time.
    random_state : int, RandomState instance or None, default=None
        Seeds the feature map and the initialisation.

    Attributes
    ----------
    feature_map_ : transformer
    cluster_centers_ : ndarray of shape (n_clusters, n_features_out)
        Centres in feature space.
    labels_ : ndarray of shape (n_samples,)
    inertia_ : float
        Sum of squared feature-space distances to the closest centre.
    n_iter_ : int
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from kernelscale import ApproxKernelKMeans
    >>> X, y = make_circles(n_samples=400, factor=0.3, noise=0.05, random_state=0)
    >>> km = ApproxKernelKMeans(n_clusters=2, n_components=200, gamma=10, random_state=0)
    >>> adjusted_rand_score(y, km.fit_predict(X)) > 0.9
    True
    """

    _parameter_constraints = {
        **APPROX_CONSTRAINTS,
        "n_clusters": [Interval("int", 1)],
        "init": [Options("k-means++", "random")],
        "n_init": [Interval("int", 1)],
        "max_iter": [Interval("int", 1)],
        "tol": [Interval("real", 0)],
    }

    def __init__(
        self, n_clusters=8, *, feature_map="nystroem", n_components=1000, kernel="rbf",
        gamma="scale", degree=3, coef0=0.0, init="k-means++", n_init=3, max_iter=300,
        tol=1e-4, dtype="float32", memory_budget=None, random_state=None,
    ):
        self.n_clusters = n_clusters
        self.feature_map = feature_map
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.dtype = dtype
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Fit the map and the clusters.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, ChunkedDataset} of shape (n_samples, n_features)
            Chunked input: k-means++ on the features of a sample of rows, then
            Lloyd's iterations, one pass over the chunks each. ``labels_`` is
            then a lazy dask array for dask input, and not kept for a stream.
        y : ignored
        sample_weight : array-like or dask array of shape (n_samples,), default=None

        Returns
        -------
        self : ApproxKernelKMeans
        """
        validate_params(self)
        source = chunked_source(self, X, None, sample_weight)
        if source is not None:
            return self._fit_source(source, X)
        X = check_X(self, X, reset=True)
        k = int(self.n_clusters)
        if k > X.shape[0]:
            raise ValueError(f"n_clusters={k} is more than the {X.shape[0]} samples.")
        weights = check_sample_weight(sample_weight, X.shape[0])
        Z = self._fit_features(X)
        kmeans = KMeans(
            n_clusters=k, init=self.init, n_init=self.n_init, max_iter=self.max_iter,
            tol=self.tol, random_state=self.random_state,
        ).fit(Z, sample_weight=weights)
        self.cluster_centers_ = kmeans.cluster_centers_
        self.labels_ = kmeans.labels_
        self.inertia_ = float(kmeans.inertia_)
        self.n_iter_ = int(kmeans.n_iter_)
        return self

    @property
    def _n_features_out(self):
        return self.cluster_centers_.shape[0]

    def _distances(self, X):
        """Squared feature-space distances of ``X``'s rows to every centre (float64)."""
        Z = self._map(X)
        return euclidean_distances(Z, self.cluster_centers_.astype(Z.dtype), squared=True)

    def _fit_source(self, source, X):
        """k-means++ on the features of a sample, then Lloyd's iterations over every chunk."""
        k = int(self.n_clusters)
        budget = resolve_memory_budget(self.memory_budget)
        width = fit_map_on_source(self, source)
        X_sample, _ = source.head(MAP_SAMPLE_ROWS, self.random_state)
        if k > X_sample.shape[0]:
            raise ValueError(f"n_clusters={k} is more than the {X_sample.shape[0]} samples.")
        Z_sample = self.feature_map_.transform(X_sample)
        start = KMeans(n_clusters=k, init=self.init, n_init=self.n_init,
                       max_iter=self.max_iter, tol=self.tol,
                       random_state=self.random_state).fit(Z_sample)
        # sklearn's tol is relative to the mean feature variance
        tol = self.tol * float(np.mean(np.var(Z_sample, axis=0, dtype=np.float64)))
        centers, inertia, n_iter = chunked_kmeans(
            source, self.feature_map_, start.cluster_centers_, width, max_iter=self.max_iter,
            tol=tol, memory_budget=budget)
        self.cluster_centers_ = centers.astype(Z_sample.dtype)
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        if is_dask_array(X):
            self.labels_ = self.predict(X)  # lazy, like the data
        elif hasattr(self, "labels_"):
            del self.labels_  # a stream's labels would not fit in memory: use predict
        return self

    def predict(self, X):
        """Index of the closest centre in feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        if is_dask_array(X):
            return dask_method(self, "predict", X)
        return np.argmin(self._distances(X), axis=1).astype(np.int32)

    def transform(self, X):
        """Feature-space distances to every centre.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        distances : ndarray of shape (n_samples, n_clusters)
        """
        if is_dask_array(X):
            return dask_method(self, "transform", X)
        return np.sqrt(np.maximum(self._distances(X), 0.0))

    def score(self, X, y=None):
        """Minus the feature-space inertia of ``X`` (higher is better).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        score : float
        """
        return -float(np.sum(np.min(self._distances(X), axis=1)))
