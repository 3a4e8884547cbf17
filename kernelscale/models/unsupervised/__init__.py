"""Unsupervised models on an explicit feature map: kernel PCA and kernel k-means."""

from ._pca_kmeans import ApproxKernelKMeans, ApproxKernelPCA

__all__ = [
    "ApproxKernelKMeans",
    "ApproxKernelPCA",
]
