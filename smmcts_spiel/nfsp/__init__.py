"""MC-NFSP (Zhang et al. 2019): neural fictitious self-play with an MCTS best response.

Needs the ``nfsp`` extra (``pip install 'smmcts-spiel[nfsp]'``: jax, flax, optax). Modules:

* :mod:`.networks`: the best-response (policy-value) and average-policy networks;
* :mod:`.buffers`: reservoir (average policy) and replay (best response) memories;
* :mod:`.mcts`: PUCT search guided by the networks, the opponent playing its average policy;
* :mod:`.mc_nfsp`: the self-play loop, training steps, checkpoints, CSV log;
* :mod:`.policy`: the trained average policy as an OpenSpiel policy and a ``pyspiel.Bot``;
* :mod:`.exploitability`: exact exploitability of a network policy on a game with
  transposition keys (small Othello), in one batch.
"""
