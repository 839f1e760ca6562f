"""A saved run of either algorithm, MC-NFSP or ANFSP, by what its checkpoint holds."""

from __future__ import annotations

import os

import pyspiel

from smmcts_spiel.nfsp import checkpoints
from smmcts_spiel.nfsp.anfsp import ANFSP
from smmcts_spiel.nfsp.mc_nfsp import MCNFSP

#: The class of each kind of run (:data:`smmcts_spiel.nfsp.checkpoints.KINDS`).
RUNS: dict[str, type[MCNFSP] | type[ANFSP]] = {MCNFSP.KIND: MCNFSP, ANFSP.KIND: ANFSP}


def load_run(path: str | os.PathLike, game: str | pyspiel.Game | None = None
             ) -> MCNFSP | ANFSP:
    """The MC-NFSP or ANFSP run saved at ``path`` (whichever it holds); with ``game``,
    refuses a run trained on another game."""
    meta, _ = checkpoints.load(path, None)
    return RUNS[meta["kind"]].load(path, game)
