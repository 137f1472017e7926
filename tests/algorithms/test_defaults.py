"""privacct.algorithms.defaults: the defaults run and audit share; flags that do not apply."""

import pytest

from privacct.algorithms.defaults import check_privacy, default_delta, refuse_inapplicable
from privacct.algorithms.registry import learners
from privacct.errors import PrivacctError


def test_default_delta_is_the_papers_setting():
    assert default_delta("ucb-vi", "jdp") == 0.0          # Laplace, pure DP
    assert default_delta("pp-ucrl-vtr", "jdp") == 1e-5
    assert default_delta("ldp-ucrl-vtr", "ldp") == 0.1
    assert default_delta("ucb-vi", "none") == 0.0
    for name, spec in learners().items():
        for privacy in spec.privacy_models:
            d = default_delta(name, privacy)
            assert 0.0 <= d < 1.0


def test_flags_of_a_claim_are_refused_without_privacy():
    refuse_inapplicable("jdp", {"--epsilon": 0.5})
    refuse_inapplicable("none", {"--epsilon": None})
    with pytest.raises(PrivacctError, match="--epsilon, --delta apply only to a private run"):
        refuse_inapplicable("none", {"--epsilon": 0.5, "--delta": 0.1, "--calibration": None})


def test_privacy_choices_are_never_an_empty_list():
    check_privacy("ucb-vi", "ldp")
    with pytest.raises(PrivacctError) as e:
        check_privacy("ucrl-vtr", "jdp")
    assert "must be one of none for ucrl-vtr" in str(e.value)
