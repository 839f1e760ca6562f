"""MC-NFSP and ANFSP (Zhang et al. 2019): neural fictitious self-play with an MCTS best
response, and NFSP with parallel actors.

Needs the ``nfsp`` extra (``pip install 'smmcts-spiel[nfsp]'``: jax, flax, optax); this
package's ``__init__`` imports none of it, so that a missing extra is one line
(:mod:`smmcts_spiel.extras`) and the scripts check their flags (:func:`parse_seeds`) before
importing it. Modules:

* :mod:`.networks`: the best-response (policy-value) and average-policy networks;
* :mod:`.buffers`: reservoir (average policy) and replay (best response) memories;
* :mod:`.mcts`: PUCT search guided by the networks, the opponent playing its average policy;
* :mod:`.mc_nfsp`: MC-NFSP's self-play loop, training steps, checkpoints;
* :mod:`.anfsp`: ANFSP (DQN best response, actor processes); no actors = NFSP;
* :mod:`.checkpoints`: the runs' checkpoints (arrays and JSON: loading runs no code), and
  how a run is saved and loaded;
* :mod:`.runs`: a saved run of either kind (``load_run``);
* :mod:`.openspiel_nfsp`: OpenSpiel's JAX NFSP behind the same interface (the baseline);
* :mod:`.policy`: a policy network as an OpenSpiel policy and a ``pyspiel.Bot``;
* :mod:`.exploitability`: exact exploitability of a network policy on a game with
  transposition keys (small Othello), in one batch;
* :mod:`.race`: learners trained in alternating rounds of wall time, CSV rows and PNG.

See docs/mc_nfsp.md (and experiments/nfsp/ for the measurements).
"""

from __future__ import annotations

import importlib.util

#: The modules that import the nfsp extra (the others import without it).
NEEDS_EXTRA = ("anfsp", "checkpoints", "exploitability", "mc_nfsp", "networks",
               "openspiel_nfsp", "policy", "presets", "runs")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# What ``from smmcts_spiel.nfsp import *`` and pdoc's walk of the package see: the modules
# needing the extra only where it is installed, so that the API reference builds without it.
__all__ = ["NEEDS_EXTRA", "buffers", "mcts", "parse_seeds", "race",
           *(NEEDS_EXTRA if all(_installed(m) for m in ("jax", "flax", "optax")) else ())]


def parse_seeds(values: list[str]) -> list[int]:
    """A --seeds flag's values as distinct non-negative integers (ValueError otherwise)."""
    try:
        seeds = [int(seed) for seed in values]
    except ValueError:
        seeds = []
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds: distinct non-negative integers, e.g. 0,1,2; got "
                         f"{','.join(values)}")
    return seeds
