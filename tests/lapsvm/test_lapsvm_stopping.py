import numpy as np
import pytest

from semisup.lapsvm import newton, pcg
from semisup.lapsvm.stopping import (GradientNormCheck, Iterate, MixedCheck,
                                     ObjectiveDecreaseCheck, StabilityCheck, ValidationCheck,
                                     check_interval, make_rule)

from lapsvm_problems import moons


def _it(t, F, f_val=None, obj=1.0, g=1.0):
    F = np.asarray(F, dtype=float).reshape(len(F), -1)
    one = np.array([g])
    return Iterate(t=t, F=F, obj=np.array([obj]), grad_sq=one, ghat_sq=one, mixed_sq=one,
                   f_val=(lambda: np.asarray(f_val, float).reshape(len(f_val), -1)))


def test_check_interval_is_round_half_up_of_sqrt_n_over_2():
    assert check_interval(200) == 7
    assert check_interval(1) == 1 and check_interval(2) == 1
    assert check_interval(36) == 3 and check_interval(25) == 3  # 2.5 rounds up
    assert check_interval(11982) == 55


def test_stability_check_counts_flip_fraction_and_sign_zero_is_positive():
    rule = StabilityCheck(np.ones(4, bool), eta=0.3, every=1)
    rule.reset(4)
    assert not rule(_it(1, [1, -1, 0, 2]))        # first check never stops
    assert rule.history[-1] == (1, 1.0)
    assert not rule(_it(2, [1, 1, -1, 2]))        # 2 of 4 flipped (sign(0) = +1 -> -1)
    assert rule.history[-1][1] == 0.5
    assert rule(_it(3, [1, 1, -1, -2]))           # 1 of 4 < 0.3: stop
    assert rule.history[-1][1] == 0.25


def test_stability_check_uses_joint_argmax_for_several_columns():
    rule = StabilityCheck(np.ones(3, bool), eta=0.5, every=1)
    rule.reset(3)
    rule(_it(1, np.array([[1, 0], [0, 1], [1, 0]])))
    # all scores change sign pattern but the argmax of one point only changes
    assert rule(_it(2, np.array([[-1, -2], [-3, 1], [0, 1]])))
    assert rule.history[-1][1] == pytest.approx(1 / 3)


def test_validation_check_needs_an_improvement_of_one_example():
    yv = np.array([1, 1, -1, -1.0])
    rule = ValidationCheck(yv, every=2)
    rule.reset(100)
    assert not rule(_it(1, [0], f_val=[-1, -1, -1, -1]))   # not a check iteration
    assert not rule(_it(2, [0], f_val=[-1, -1, -1, -1]))   # 50 % < 100 % - 25 %
    assert not rule(_it(4, [0], f_val=[1, -1, -1, -1]))    # 25 % <= 50 % - 25 %
    assert rule(_it(6, [0], f_val=[1, -1, -1, -1]))        # no improvement: stop
    assert [v for _, v in rule.history] == [0.5, 0.25, 0.25]


def test_mixed_check_needs_both_conditions_at_the_same_check():
    yv = np.array([1, -1.0])
    rule = MixedCheck(np.ones(2, bool), yv, eta=0.1, every=1)
    rule.reset(4)
    assert not rule(_it(1, [1, 1], f_val=[1, 1]))      # first check: unstable
    assert not rule(_it(2, [1, 1], f_val=[1, -1]))     # stable, but validation improved
    assert rule(_it(3, [1, 1], f_val=[1, -1]))         # stable and no improvement


def test_classical_rules_are_relative_to_t0():
    g = GradientNormCheck("grad", tol=0.1)
    g.reset(4)
    assert not g(_it(0, [0], g=4.0))
    assert not g(_it(1, [0], g=0.04))   # sqrt: 0.2 / 2 = 0.1, not < 0.1
    assert g(_it(2, [0], g=0.0399))
    o = ObjectiveDecreaseCheck(tol=1e-3)
    o.reset(4)
    assert not o(_it(0, [0], obj=1.0))
    assert not o(_it(1, [0], obj=0.5))
    assert o(_it(2, [0], obj=0.4995))
    with pytest.raises(ValueError, match="validation"):
        make_rule("mixed", unlabeled=np.ones(3, bool))
    with pytest.raises(ValueError, match="unknown"):
        make_rule("bogus")


@pytest.mark.parametrize("kind,bias,gamma_A,power", [
    ("unnormalized", True, 1e-2, 1), ("normalized", True, 1e-2, 2),
    ("normalized", False, 1e-4, 1), ("unnormalized", True, 1e-5, 1)])
def test_early_stopping_on_two_moons_within_paper_iteration_counts(kind, bias, gamma_A, power):
    # spec §14 settings (i)-(iv); the paper's early-stopped runs took 20-110 iterations
    P = moons(1, kind=kind)
    K, L, y, truth = P["K"], P["L"], P["y"], P["truth"]
    rng = np.random.default_rng(1)
    val = rng.choice(np.flatnonzero(y == 0), 20, replace=False)
    kw = dict(gamma_A=gamma_A, gamma_I=1.0, power=power, use_bias=bias)
    full = pcg(K, L, y, max_iter=20000, **kw)
    newton_acc = np.mean(np.sign(K @ newton(K, L, y, **kw).alpha + 1e-300) == truth)
    for rule in ("stability", "validation", "mixed"):
        r = pcg(K, L, y, K_val=K[val], max_iter=20000,
                stopping=[make_rule(rule, unlabeled=y == 0, Y_val=truth[val])], **kw)
        assert r.stop_reason == rule
        assert 7 <= r.n_iter <= 110 < full.n_iter
        f = K @ r.alpha + r.b
        acc = np.mean(np.where(f >= 0, 1, -1) == truth)
        assert acc >= min(0.75, newton_acc - 0.1)
