"""
Learned kernel widths pick out the informative features
=======================================================

``make_nonlinear_problem`` draws 28 features of which only the first 6 decide the
label. ``KernelWidths`` learns one RBF width per feature; the relevance of the 22 noise
features falls to about zero, as gradient boosting would ignore them.
"""

import matplotlib.pyplot as plt

from kernelscale import KernelWidths
from kernelscale.datasets import make_nonlinear_problem

X, y = make_nonlinear_problem(8000, random_state=0)
widths = KernelWidths(task="classification", random_state=0).fit(X, y)
print("most relevant features:", widths.feature_relevance_.argsort()[::-1][:6])

fig, ax = plt.subplots(figsize=(7, 3))
ax.bar(range(X.shape[1]), widths.feature_relevance_)
ax.set_xlabel("feature")
ax.set_ylabel("relevance")
ax.set_title("Learned widths (the first 6 features are informative)")
fig.tight_layout()
plt.show()
