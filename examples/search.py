"""
The search: families, gamma and C by cross-validation
=====================================================

``KernelClassifierCV`` tries the exact SVM and FALKON over gamma and C with the work
shared across the grid, prints what it chose and why, and keeps a leaderboard; its
``best_estimator_`` is refitted on every row. The plot is the exact SVM's
cross-validated accuracy over the (gamma, C) grid.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

from kernelscale import KernelClassifierCV

X, y = make_moons(2000, noise=0.3, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
search = KernelClassifierCV(random_state=0).fit(X_train, y_train)
print(search.family_choice_)
print("\n".join(search.leaderboard(5)))
print(f"test accuracy: {search.score(X_test, y_test):.4f}")

results = search.cv_results_
svm = results["param_family"] == "exact-svm"
gammas = np.unique(results["param_gamma"][svm].astype(float))
Cs = np.unique(results["param_C"][svm].astype(float))
scores = np.full((len(gammas), len(Cs)), np.nan)
for g, c, s in zip(results["param_gamma"][svm], results["param_C"][svm],
                   results["mean_test_score"][svm]):
    scores[np.searchsorted(gammas, float(g)), np.searchsorted(Cs, float(c))] = s
fig, ax = plt.subplots(figsize=(5, 4))
image = ax.imshow(scores, origin="lower", cmap="viridis")
ax.set_xticks(range(len(Cs)), [f"{c:.2g}" for c in Cs], rotation=45)
ax.set_yticks(range(len(gammas)), [f"{g:.2g}" for g in gammas])
ax.set_xlabel("C")
ax.set_ylabel("gamma")
fig.colorbar(image, label="CV accuracy")
fig.tight_layout()
plt.show()
