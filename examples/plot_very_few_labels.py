"""
=====================================================================
Very few labels: Laplace, Poisson and Poisson-MBO learning
=====================================================================

With a fixed number of labels and more and more unlabelled points, Laplace learning (the
harmonic function, :class:`~semisup.HarmonicFunction`) degenerates: its solution becomes
nearly constant away from the labelled points, with spikes at them, and one class takes most
points. Poisson learning (Calder, Cook, Thorpe & Slepčev, ICML 2020;
:class:`~semisup.PoissonLearning`) puts the labels in as sources of a graph Poisson equation
instead of boundary values, and keeps its shape; :class:`~semisup.PoissonMBO` then enforces
the class sizes with graph MBO steps.

Here, on 3 000 points in 10 dimensions (four classes), 1 to 10 labels per class, three
random draws each: the graph is built once (:func:`semisup.graph.knn_graph`, the estimators'
default graph) and passed as ``affinity="precomputed"``; scikit-learn's
:class:`~sklearn.semi_supervised.LabelSpreading` (kNN kernel) takes the points. On all of
MNIST the same gap is 12 % against 89 % at one label per class
(``docs/benchmarks/lowlabel.md``).
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.semi_supervised import LabelSpreading

from semisup import HarmonicFunction, PoissonLearning, PoissonMBO
from semisup.datasets.splits import labeled_per_class
from semisup.graph import knn_graph

X, y = make_classification(n_samples=3000, n_features=10, n_informative=8, n_redundant=0,
                           n_classes=4, n_clusters_per_class=1, class_sep=1.5,
                           random_state=0)
W = knn_graph(X, 10, weights="heat")
methods = {
    "Laplace (HarmonicFunction)": lambda: HarmonicFunction(affinity="precomputed"),
    "PoissonLearning": lambda: PoissonLearning(affinity="precomputed"),
    "PoissonMBO": lambda: PoissonMBO(affinity="precomputed"),
    "LabelSpreading (scikit-learn)": lambda: LabelSpreading(kernel="knn"),
}
per_class = [1, 2, 5, 10]
acc = {name: [] for name in methods}
for m in per_class:
    scores = {name: [] for name in methods}
    for seed in range(3):
        labeled = labeled_per_class(y, m, random_state=seed)
        y_train = np.full_like(y, -1)
        y_train[labeled] = y[labeled]
        unl = y_train == -1
        for name, make in methods.items():
            est = make()
            data = X if isinstance(est, LabelSpreading) else W
            with warnings.catch_warnings():
                # Laplace learning warns that its solution is flat at one label per class
                warnings.simplefilter("ignore")
                pred = est.fit(data, y_train).transduction_
            scores[name].append(np.mean(pred[unl] == y[unl]))
    for name in methods:
        acc[name].append(np.mean(scores[name]))
    print(f"{m:2d} labels per class: " + ", ".join(f"{name.split()[0]} {acc[name][-1]:.3f}"
                                                  for name in methods))

fig, ax = plt.subplots(figsize=(6, 4))
for name, marker in zip(methods, "osD^"):
    ax.plot(per_class, acc[name], marker=marker, label=name)
ax.set_xscale("log")
ax.set_xticks(per_class, [str(m) for m in per_class])
ax.set_xlabel("labels per class")
ax.set_ylabel("accuracy on the unlabelled points")
ax.set_title("Very few labels: 3 000 points, 4 classes")
ax.legend()
fig.tight_layout()
plt.show()
