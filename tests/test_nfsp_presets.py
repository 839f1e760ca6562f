"""The paper and tuned presets of MC-NFSP, NFSP and ANFSP (smmcts_spiel.nfsp.presets)."""

import dataclasses

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

import smmcts_spiel  # noqa: E402, F401  (registers the games)
from smmcts_spiel.nfsp import presets  # noqa: E402
from smmcts_spiel.nfsp.anfsp import ANFSP  # noqa: E402
from smmcts_spiel.nfsp.mc_nfsp import MCNFSP  # noqa: E402

OTHELLO = "smmcts_othello"

#: What the paper sets (Zhang et al. 2019), by preset function and game.
PAPER = {
    ("mc_nfsp", OTHELLO): dict(replay_capacity=4_000_000, reservoir_capacity=400_000,
                               br_learning_rate=0.01, avg_learning_rate=0.005,
                               learn_every=100, network="conv", dropout=0.3),  # Sec. 3.3.1
    ("nfsp", OTHELLO): dict(replay_capacity=4_000_000, reservoir_capacity=400_000,
                            batch_size=256, learn_every=256, rl_learning_rate=0.01,
                            sl_learning_rate=0.005, target_update_every=300, epsilons=(0.6,),
                            epsilon_decay=1.0, network="conv", dropout=0.3,
                            steps_per_call=1),  # Sec. 3.3.2
    ("nfsp", "leduc_poker"): dict(replay_capacity=200_000, reservoir_capacity=2_000_000,
                                  batch_size=128, learn_every=128, rl_learning_rate=0.01,
                                  sl_learning_rate=0.005, target_update_every=300,
                                  epsilons=(0.06,), epsilon_decay=1.0,
                                  steps_per_call=1),  # Sec. 4.2.2
    ("anfsp", "leduc_poker"): dict(design="actor_learners",  # Sec. 4.1
                                   num_actors=4, reservoir_capacity=2_000_000, batch_size=128,
                                   episodes_per_message=32, rl_learning_rate=0.01,
                                   sl_learning_rate=0.005, target_update_actions=50_000,
                                   epsilon_decay=1.0),  # Sec. 4.2.1
}


@pytest.mark.parametrize("function, game", sorted(PAPER))
def test_the_paper_preset_is_tuned_with_the_papers_settings(function, game):
    make = getattr(presets, function)
    paper, tuned = make("paper", game), make("tuned", game)
    assert {name: getattr(paper, name) for name in PAPER[function, game]} == PAPER[function, game]
    differ = {f.name for f in dataclasses.fields(paper)
              if getattr(paper, f.name) != getattr(tuned, f.name)}
    assert differ and differ <= set(PAPER[function, game])  # the rest: the paper gives none
    assert paper.game == tuned.game == game


def test_overrides_win_and_none_keeps_the_preset():
    config = presets.mc_nfsp("paper", OTHELLO, seed=7, num_simulations=None)
    assert config.seed == 7 and config.num_simulations == presets.mc_nfsp("tuned").num_simulations
    assert presets.mc_nfsp("paper", num_simulations=64).num_simulations == 64
    assert presets.anfsp("paper", design="learner").design == "learner"
    with pytest.raises(ValueError, match="preset must be one of paper, tuned"):
        presets.nfsp("fast")
    with pytest.raises(ValueError, match="num_simulations"):
        presets.mc_nfsp("paper", num_simulations=0)


def test_paper_presets_run():
    """A paper-preset learner plays and learns: MC-NFSP on Othello, NFSP on Leduc."""
    run = MCNFSP(presets.mc_nfsp("paper", OTHELLO, hidden=(8,), num_simulations=2,
                                 learn_every=2, batch_size=4, eta=1.0))
    run.train(0.5)
    assert run.episodes > 0 and len(run.replay) > 0
    with ANFSP(presets.nfsp("paper", "leduc_poker", hidden=(8,),
                            min_buffer_size_to_learn=1)) as nfsp:
        before = np.asarray(nfsp.avg_params["params"]["Dense_0"]["kernel"]).copy()
        nfsp.train(0.5)
        assert nfsp.steps > 0
        assert not np.array_equal(before, nfsp.avg_params["params"]["Dense_0"]["kernel"])


def test_overrides_swap_one_setting_of_a_preset():
    """``parse_overrides`` (nfsp_poker.py's --overrides): values of the fields' types, the
    preset's other settings kept."""
    overrides = presets.parse_overrides(["epsilon_decay=10000", " episodes_per_message = 16"])
    assert overrides == {"epsilon_decay": 10000.0, "episodes_per_message": 16}
    assert type(overrides["epsilon_decay"]) is float
    assert type(overrides["episodes_per_message"]) is int
    paper, swapped = presets.anfsp("paper"), presets.anfsp("paper", **overrides)
    assert swapped == dataclasses.replace(paper, epsilon_decay=10000.0, episodes_per_message=16)
    assert presets.parse_overrides([]) == {}


@pytest.mark.parametrize("items, message", [
    (["epsilon_decay"], "not name=value"),
    (["=3"], "not name=value"),
    (["epsilon_decy=1"], "did you mean 'epsilon_decay'"),
    (["seed=1"], "use --seeds"),
    (["design=learner"], "use --design"),
    (["epsilons=0.1"], "a tuple"),
    (["eta=0.1", "eta=0.2"], "given twice"),
    (["batch_size=1.5"], "batch_size must be an integer, got '1.5'"),
    (["sl_learning_rate=fast"], "sl_learning_rate must be a number"),
    (["epsilon_decay=0"], "epsilon_decay must be a positive, finite number"),
    (["rl_learning_rate=nan"], "rl_learning_rate must be a positive, finite number"),
    (["batch_size=0"], "batch_size must be an integer >= 1"),
])
def test_a_bad_override_is_a_clear_error(items, message):
    with pytest.raises(ValueError, match=message):
        presets.parse_overrides(items)
