"""MC-NFSP and ANFSP (Zhang et al. 2019): neural fictitious self-play with an MCTS best
response, and NFSP with parallel actors.

Needs the ``nfsp`` extra (``pip install 'smmcts-spiel[nfsp]'``: jax, flax, optax); this
package's ``__init__`` imports none of it, so that :func:`missing_extra` can say so in one
line and the scripts check their flags (:func:`parse_seeds`) before importing it. Modules:

* :mod:`.networks`: the best-response (policy-value) and average-policy networks;
* :mod:`.buffers`: reservoir (average policy) and replay (best response) memories;
* :mod:`.mcts`: PUCT search guided by the networks, the opponent playing its average policy;
* :mod:`.mc_nfsp`: MC-NFSP's self-play loop, training steps, checkpoints;
* :mod:`.anfsp`: ANFSP (DQN best response, actor processes); no actors = NFSP;
* :mod:`.checkpoints`: the runs' checkpoints (arrays and JSON: loading runs no code);
* :mod:`.openspiel_nfsp`: OpenSpiel's JAX NFSP behind the same interface (the baseline);
* :mod:`.policy`: a policy network as an OpenSpiel policy and a ``pyspiel.Bot``;
* :mod:`.exploitability`: exact exploitability of a network policy on a game with
  transposition keys (small Othello), in one batch;
* :mod:`.race`: learners trained in alternating rounds of wall time, CSV rows and PNG.

See docs/mc_nfsp.md.
"""

from __future__ import annotations

#: Which extra provides each optional module the nfsp code imports.
EXTRAS = {"jax": "nfsp", "jaxlib": "nfsp", "flax": "nfsp", "optax": "nfsp", "chex": "nfsp",
          "orbax": "nfsp", "ray": "ray"}


def missing_extra(error: ImportError | None) -> str | None:
    """One line naming the extra to install if ``error`` is the import of a missing optional
    dependency (None if there was no error); any other ImportError is raised again."""
    if error is None:
        return None
    top = (error.name or "").partition(".")[0]
    if top not in EXTRAS:
        raise error
    return (f"{top} is not installed: this needs the {EXTRAS[top]} extra, "
            f"pip install 'smmcts-spiel[{EXTRAS[top]}]'")


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
