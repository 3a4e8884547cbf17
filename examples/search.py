"""The search: families, gamma and C by cross-validation, the work shared.

``KernelClassifierCV`` prints what it chose and why, and a leaderboard; its
``best_estimator_`` is refitted on every row.
"""

from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

from kernelscale import KernelClassifierCV

X, y = make_moons(2000, noise=0.3, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
search = KernelClassifierCV(random_state=0).fit(X_train, y_train)
print(search.family_choice_)
print("\n".join(search.leaderboard(5)))
print(f"test accuracy: {search.score(X_test, y_test):.4f}")
