"""Hostile and careless MC-NFSP / ANFSP checkpoints: refused with a clear error, no code run.

Issue 27 (checkpoints were plain pickles: a crafted file ran code when loaded, also through
a bot spec ``nfsp(file=...)``) and issue 25's bad input (another game's, board size's or
network's checkpoint; truncated or corrupted files).
"""

import dataclasses
import io
import json
import os
import pickle

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import bot_specs


class _Payload:
    """A pickle that creates a file when unpickled (stands for any command)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _crafted_pickle(tmp_path):
    path = tmp_path / "run.pkl"
    marker = tmp_path / "pwned"
    path.write_bytes(pickle.dumps({"config": {}, "state": _Payload(marker)}))
    return path, marker


def test_a_crafted_pickle_given_to_a_bot_spec_runs_no_code(tmp_path):
    """Refused whether or not the nfsp extra is installed (the extra's absence is said)."""
    path, marker = _crafted_pickle(tmp_path)
    with pytest.raises(ValueError, match="pickle|nfsp extra"):
        bot_specs.make_bot(f"nfsp(file={path})", pyspiel.load_game("smmcts_othello"), 0, 0)
    assert not marker.exists()


# Everything below needs the nfsp extra.
jax = pytest.importorskip("jax", reason="needs the nfsp extra: pip install 'smmcts-spiel[nfsp]'")

from smmcts_spiel.nfsp import checkpoints  # noqa: E402
from smmcts_spiel.nfsp.anfsp import ANFSP, ANFSPConfig  # noqa: E402
from smmcts_spiel.nfsp.mc_nfsp import MCNFSP, Config  # noqa: E402
from smmcts_spiel.nfsp.runs import load_run  # noqa: E402

OTHELLO = "smmcts_othello(board_size=4)"


@pytest.fixture(scope="module")
def mc_nfsp_checkpoint(tmp_path_factory):
    """A small MC-NFSP run on 4 x 4 Othello with data in both memories."""
    run = MCNFSP(Config(game=OTHELLO, hidden=(16,), num_simulations=2, batch_size=4, eta=1.0,
                        seed=1))
    for _ in range(2):
        run.play_episode()
        run.learn()
    path = tmp_path_factory.mktemp("checkpoints") / "mc_nfsp.npz"
    run.save(path)
    return path


@pytest.fixture(scope="module")
def anfsp_checkpoint(tmp_path_factory):
    run = ANFSP(ANFSPConfig(game="kuhn_poker", hidden=(8,), num_actors=0, seed=2))
    run.self_play(20)
    path = tmp_path_factory.mktemp("checkpoints") / "anfsp.npz"
    run.save(path)
    return path


@pytest.mark.parametrize("load", [MCNFSP.load, ANFSP.load, load_run])
def test_a_crafted_pickle_is_refused_and_runs_no_code(load, tmp_path):
    path, marker = _crafted_pickle(tmp_path)
    with pytest.raises(checkpoints.CheckpointError, match="pickle.*refused"):
        load(path)
    assert not marker.exists()


def test_a_pickled_object_array_inside_the_npz_runs_no_code(mc_nfsp_checkpoint, tmp_path):
    marker = tmp_path / "pwned"
    arrays = _arrays(mc_nfsp_checkpoint)
    arrays["br_params/params/Dense_0/kernel"] = np.array([_Payload(marker)], dtype=object)
    path = tmp_path / "run.npz"
    np.savez(path, **arrays)
    with pytest.raises(checkpoints.CheckpointError, match="corrupted"):
        MCNFSP.load(path)
    assert not marker.exists()


def test_a_checkpoint_round_trips_and_plays_as_a_bot(mc_nfsp_checkpoint, anfsp_checkpoint):
    run = MCNFSP.load(mc_nfsp_checkpoint, OTHELLO)
    assert run.episodes == 2 and len(run.replay) > 0 and len(run.reservoir) > 0
    assert isinstance(load_run(anfsp_checkpoint), ANFSP)
    for path, game in ((mc_nfsp_checkpoint, OTHELLO), (anfsp_checkpoint, "kuhn_poker")):
        game = pyspiel.load_game(game)
        bot = bot_specs.make_bot(f"nfsp(file={path})", game, 1, 0)
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(state.legal_actions()[0])
        if state.current_player() == 0:
            state.apply_action(state.legal_actions()[0])
        assert bot.step(state) in state.legal_actions()


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.99])
def test_a_truncated_checkpoint_is_a_clear_error(mc_nfsp_checkpoint, tmp_path, fraction):
    data = mc_nfsp_checkpoint.read_bytes()
    path = tmp_path / "cut.npz"
    path.write_bytes(data[:int(len(data) * fraction)])
    with pytest.raises(checkpoints.CheckpointError, match="truncated or corrupted"):
        MCNFSP.load(path)


@pytest.mark.parametrize("content", [b"garbage" * 100, b"PK\x03\x04" + bytes(range(256)),
                                     json.dumps({"config": {}}).encode()])
def test_garbage_is_a_clear_error(content, tmp_path):
    path = tmp_path / "junk.npz"
    path.write_bytes(content)
    with pytest.raises(checkpoints.CheckpointError, match="junk.npz"):
        load_run(path)


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(checkpoints.CheckpointError, match="cannot be read"):
        MCNFSP.load(tmp_path / "none.npz")


def test_an_npz_without_metadata_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "weights.npz"
    np.savez(path, w=np.zeros(3))
    with pytest.raises(checkpoints.CheckpointError, match="not a checkpoint of smmcts_spiel"):
        MCNFSP.load(path)


def test_another_kind_of_run_is_refused(mc_nfsp_checkpoint, anfsp_checkpoint):
    with pytest.raises(checkpoints.CheckpointError, match="'mc_nfsp' run, not a 'anfsp'"):
        ANFSP.load(mc_nfsp_checkpoint)
    with pytest.raises(checkpoints.CheckpointError, match="'anfsp' run, not a 'mc_nfsp'"):
        MCNFSP.load(anfsp_checkpoint)


@pytest.mark.parametrize("game", ["smmcts_othello(board_size=6)",
                                  "smmcts_othello(returns_type=disc_difference)"])
def test_another_game_or_board_size_is_refused_naming_both(mc_nfsp_checkpoint, game):
    with pytest.raises(checkpoints.CheckpointError) as error:
        MCNFSP.load(mc_nfsp_checkpoint, game)
    assert "board_size=4" in str(error.value) and str(pyspiel.load_game(game)) in str(error.value)
    with pytest.raises(ValueError, match="trained on"):
        bot_specs.make_bot(f"nfsp(file={mc_nfsp_checkpoint})", pyspiel.load_game(game), 0, 0)


def _arrays(path):
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _edited(path, tmp_path, edit_meta=None, edit_arrays=None):
    arrays = _arrays(path)
    meta = json.loads(str(arrays["__meta__"]))
    if edit_meta:
        edit_meta(meta)
    if edit_arrays:
        edit_arrays(arrays)
    arrays["__meta__"] = np.array(json.dumps(meta))
    out = tmp_path / "edited.npz"
    np.savez(out, **arrays)
    return out


def test_a_network_of_another_shape_is_refused_naming_both(mc_nfsp_checkpoint, tmp_path):
    path = _edited(mc_nfsp_checkpoint, tmp_path,
                   edit_meta=lambda m: m["config"].update(hidden=[32]))
    with pytest.raises(checkpoints.CheckpointError,
                       match=r"has shape \(16,\).*builds, mlp \(hidden \(32,\).*has \(32,\)"):
        MCNFSP.load(path)


@pytest.fixture(scope="module")
def conv_checkpoint(tmp_path_factory):
    """A small MC-NFSP run with the paper's network (convolutions, dropout)."""
    run = MCNFSP(Config(game=OTHELLO, network="conv", dropout=0.3, hidden=(16,),
                        num_simulations=2, batch_size=4, eta=1.0, seed=1))
    for _ in range(2):
        run.play_episode()
        run.learn()
    path = tmp_path_factory.mktemp("checkpoints") / "conv.npz"
    run.save(path)
    return path, run


def test_a_conv_checkpoint_round_trips_with_its_network(conv_checkpoint):
    path, saved = conv_checkpoint
    run = MCNFSP.load(path, OTHELLO, network=saved.config)
    assert (run.config.network, run.config.dropout) == ("conv", 0.3)
    x = np.random.default_rng(0).random((3, 48)).astype(np.float32)
    for net, mine, theirs in ((run.br_net, run.br_params, saved.br_params),
                              (run.avg_net, run.avg_params, saved.avg_params)):
        for ours, original in zip(jax.tree_util.tree_leaves(net.apply(mine, x)),
                                  jax.tree_util.tree_leaves(net.apply(theirs, x))):
            np.testing.assert_array_equal(ours, original)


def test_a_checkpoint_of_another_network_is_refused_naming_both(conv_checkpoint,
                                                                 mc_nfsp_checkpoint, tmp_path):
    path, saved = conv_checkpoint
    mlp = dataclasses.replace(saved.config, network="mlp", dropout=0.0)
    with pytest.raises(checkpoints.CheckpointError, match=(
            r"conv.npz holds a network conv \(hidden \(16,\), dropout 0.3\), not the mlp "
            r"\(hidden \(16,\), dropout 0.0\) asked for")):
        MCNFSP.load(path, network=mlp)
    with pytest.raises(checkpoints.CheckpointError, match="holds a network mlp.*not the conv"):
        MCNFSP.load(mc_nfsp_checkpoint, network=saved.config)
    # A configuration edited to another kind: the arrays are not the network it builds.
    edited = _edited(path, tmp_path, edit_meta=lambda m: m["config"].update(network="mlp"))
    with pytest.raises(checkpoints.CheckpointError,
                       match=r"br_params is not the network its configuration builds, mlp.*"
                             r"unexpected \['br_params/params/Conv_0"):
        MCNFSP.load(edited)


def test_a_configuration_asking_for_huge_networks_allocates_nothing(mc_nfsp_checkpoint,
                                                                    tmp_path):
    path = _edited(mc_nfsp_checkpoint, tmp_path,
                   edit_meta=lambda m: m["config"].update(hidden=[10 ** 9]))
    with pytest.raises(checkpoints.CheckpointError, match="1000000000"):
        MCNFSP.load(path)


def test_a_removed_or_added_array_is_refused(mc_nfsp_checkpoint, tmp_path):
    path = _edited(mc_nfsp_checkpoint, tmp_path,
                   edit_arrays=lambda a: a.pop("avg_params/params/Dense_1/bias"))
    with pytest.raises(checkpoints.CheckpointError, match="missing"):
        MCNFSP.load(path)
    path = _edited(mc_nfsp_checkpoint, tmp_path,
                   edit_arrays=lambda a: a.update({"avg_params/params/Dense_9/bias": np.ones(2)}))
    with pytest.raises(checkpoints.CheckpointError, match="unexpected"):
        MCNFSP.load(path)


@pytest.mark.parametrize("edit, message", [
    (lambda m: m["config"].update(eta=7), "eta"),
    (lambda m: m["config"].update(colour="red"), "unknown parameters"),
    (lambda m: m["config"].update(game="no_such_game"), "cannot be loaded"),
    (lambda m: m["counters"].update(episodes=-3), "episodes"),
    (lambda m: m["counters"].update(episodes="many"), "episodes"),
    (lambda m: m["memories"]["replay"].update(size=10 ** 9), "inconsistent"),
    (lambda m: m.update(rng={"bit_generator": "MT19937"}), "generator"),
    (lambda m: m.update(version=99), "version 99"),
])
def test_edited_metadata_is_refused(mc_nfsp_checkpoint, tmp_path, edit, message):
    with pytest.raises(checkpoints.CheckpointError, match=message):
        MCNFSP.load(_edited(mc_nfsp_checkpoint, tmp_path, edit_meta=edit))


def test_a_memory_of_another_game_is_refused(mc_nfsp_checkpoint, tmp_path):
    def wider(arrays):
        arrays["reservoir/0"] = np.zeros((len(arrays["reservoir/0"]), 108), np.float32)

    with pytest.raises(checkpoints.CheckpointError, match="reservoir/0.*108"):
        MCNFSP.load(_edited(mc_nfsp_checkpoint, tmp_path, edit_arrays=wider))


def test_an_interrupted_save_leaves_the_old_checkpoint_whole(mc_nfsp_checkpoint, tmp_path,
                                                             monkeypatch):
    path = tmp_path / "run.npz"
    path.write_bytes(mc_nfsp_checkpoint.read_bytes())
    run = MCNFSP.load(path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run.save(path)
    assert path.read_bytes() == mc_nfsp_checkpoint.read_bytes()
    assert os.listdir(tmp_path) == ["run.npz"]


def _first_parameter(path):
    return next(k for k in _arrays(path) if k.startswith("avg_params/"))


def test_a_file_declaring_a_huge_array_is_a_checkpoint_error(mc_nfsp_checkpoint, tmp_path):
    """A 10**12-element header in a file of a few kilobytes: refused before numpy allocates
    (it raised MemoryError, 7.28 TiB), through a bot spec too."""
    import zipfile
    name = _first_parameter(mc_nfsp_checkpoint)
    path = _edited(mc_nfsp_checkpoint, tmp_path, edit_arrays=lambda a: a.pop(name))
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (10**12,)})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(f"{name}.npy", header.getvalue() + bytes(8))
    for load in (lambda: checkpoints.load(path, None), lambda: MCNFSP.load(path)):
        with pytest.raises(checkpoints.CheckpointError, match="declares shape"):
            load()
    with pytest.raises(ValueError, match="declares shape"):
        bot_specs.make_bot(f"nfsp(file={path})", pyspiel.load_game(OTHELLO), 0, 0)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_weights_are_refused_at_load(mc_nfsp_checkpoint, tmp_path, value):
    name = _first_parameter(mc_nfsp_checkpoint)

    def poison(arrays):
        arrays[name] = arrays[name].copy()
        arrays[name].flat[0] = value

    path = _edited(mc_nfsp_checkpoint, tmp_path, edit_arrays=poison)
    with pytest.raises(checkpoints.CheckpointError, match=f"{name} holds NaN or infinite"):
        MCNFSP.load(path)


@pytest.mark.parametrize("field", ["batch_size", "reservoir_capacity", "replay_capacity"])
def test_sizes_that_do_not_fit_in_memory_are_refused_before_allocating(field):
    with pytest.raises(ValueError, match="memories .* bytes.*lower batch_size"):
        MCNFSP(Config(game=OTHELLO, hidden=(16,), **{field: 10**11}))
    with pytest.raises(ValueError, match="memories .* bytes.*lower batch_size"):
        ANFSP(ANFSPConfig(game="kuhn_poker", hidden=(8,), num_actors=0, **{field: 10**11}))
