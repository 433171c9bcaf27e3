"""
=====================================================================
Grid search with a transductive splitter
=====================================================================

With few labels, cross-validation should hide *labels*, not points: a semi-supervised fit
sees every point, and only the held-out labels are scored.
:class:`~semisup.model_selection.TransductiveSplit` splits the labelled points into folds
(each training set is every point), :func:`~semisup.model_selection.transductive_target`
hides the held-out labels as ``-1`` in each fit, and
:func:`~semisup.model_selection.labeled_scorer` scores the held-out labels from the fitted
estimator's ``transduction_``. Here :class:`~sklearn.model_selection.GridSearchCV` picks
:class:`~semisup.HarmonicFunction`'s ``n_neighbors`` from 30 labels on the digits data
bundled with scikit-learn.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV

from semisup import HarmonicFunction
from semisup.model_selection import TransductiveSplit, labeled_scorer, transductive_target

X, y = load_digits(return_X_y=True)
rng = np.random.default_rng(0)
y_train = np.full_like(y, -1)  # -1 marks an unlabelled point
labelled = np.concatenate([rng.choice(np.flatnonzero(y == c), 3, replace=False)
                           for c in range(10)])
y_train[labelled] = y[labelled]

grid = {"n_neighbors": [2, 4, 8, 16, 32, 64]}
search = GridSearchCV(HarmonicFunction(), grid,
                      cv=TransductiveSplit(n_splits=3, random_state=0),
                      scoring=labeled_scorer())
search.fit(X, transductive_target(y_train))
print("chosen:", search.best_params_)

# %%
# The cross-validated accuracy (from the 30 labels only) against the accuracy on the
# unlabelled points, which the search never saw.

unl = y_train == -1
true_acc = [(HarmonicFunction(n_neighbors=k).fit(X, y_train).transduction_[unl] == y[unl]).mean()
            for k in grid["n_neighbors"]]
res = search.cv_results_
fig, ax = plt.subplots(figsize=(6.5, 4))
ax.errorbar(grid["n_neighbors"], res["mean_test_score"], yerr=res["std_test_score"],
            marker="o", capsize=3, label="CV accuracy (held-out labels)")
ax.plot(grid["n_neighbors"], true_acc, "s-", label="accuracy on the unlabelled points")
ax.axvline(search.best_params_["n_neighbors"], color="k", ls="--", label="chosen")
ax.set_xscale("log", base=2)
ax.set_xlabel("n_neighbors")
ax.set_ylabel("accuracy")
ax.set_title("HarmonicFunction on digits, 30 labels")
ax.legend()
fig.tight_layout()
plt.show()
