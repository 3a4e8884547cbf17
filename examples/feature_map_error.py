"""
Feature maps: kernel error against the number of features
=========================================================

Nystrom (landmarks from the data) against random Fourier features (frequencies from the
kernel): the relative Frobenius error of the kernel matrix on held-out rows.
"""

import matplotlib.pyplot as plt
import numpy as np

from kernelscale import Nystroem, RandomFourierFeatures, kernel_approximation_error

rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 8))
X_fit, X_held = X[:2000], X[2000:]
sizes = [32, 64, 128, 256, 512]
fig, ax = plt.subplots(figsize=(5, 3.5))
for cls in (Nystroem, RandomFourierFeatures):
    errors = [kernel_approximation_error(X_held, cls(n_components=m, random_state=0).fit(X_fit))
              for m in sizes]
    print(cls.__name__, [f"{e:.3f}" for e in errors])
    ax.loglog(sizes, errors, marker="o", label=cls.__name__)
ax.set_xlabel("features")
ax.set_ylabel("relative kernel error")
ax.legend()
fig.tight_layout()
plt.show()
