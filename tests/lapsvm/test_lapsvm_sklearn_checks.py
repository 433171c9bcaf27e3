"""scikit-learn's estimator checks (slow: ~2 minutes on 2 cores)."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup.lapsvm import LapRLS, LapSVM

EXPECTED = {
    # -1 means "unlabelled" here, so a binary problem labelled {-1, 1} has one class
    "check_classifiers_classes": "-1 marks unlabelled points, not a class",
}


@pytest.mark.slow
@parametrize_with_checks([LapSVM(solver="newton", n_neighbors=3, gamma_A=1e-2),
                          LapRLS(n_neighbors=3, gamma_A=1e-2)],
                         expected_failed_checks=lambda est: EXPECTED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
