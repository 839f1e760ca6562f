"""MC-NFSP and ANFSP (Zhang et al. 2019): neural fictitious self-play with an MCTS best
response, and NFSP with parallel actors.

Needs the ``nfsp`` extra (``pip install 'smmcts-spiel[nfsp]'``: jax, flax, optax). Modules:

* :mod:`.networks`: the best-response (policy-value) and average-policy networks;
* :mod:`.buffers`: reservoir (average policy) and replay (best response) memories;
* :mod:`.mcts`: PUCT search guided by the networks, the opponent playing its average policy;
* :mod:`.mc_nfsp`: MC-NFSP's self-play loop, training steps, checkpoints;
* :mod:`.anfsp`: ANFSP (DQN best response, actor processes); no actors = NFSP;
* :mod:`.openspiel_nfsp`: OpenSpiel's JAX NFSP behind the same interface (the baseline);
* :mod:`.policy`: a policy network as an OpenSpiel policy and a ``pyspiel.Bot``;
* :mod:`.exploitability`: exact exploitability of a network policy on a game with
  transposition keys (small Othello), in one batch;
* :mod:`.race`: learners trained in alternating rounds of wall time, CSV rows and PNG.

See docs/mc_nfsp.md.
"""
