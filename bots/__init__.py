"""Bots implementing pyspiel.Bot: ours, and OpenSpiel's search bots wrapped so that they play
simultaneous-move games (:mod:`.openspiel_bots`)."""

from smmcts_spiel.bots.belief_sampler import BeliefSamplerBot
from smmcts_spiel.bots.doab_bot import DOABBot
from smmcts_spiel.bots.is_smmcts_bot import ISSMMCTSBot
from smmcts_spiel.bots.mmcts_bot import MMCTSBot
from smmcts_spiel.bots.oos_bot import OOSBot
from smmcts_spiel.bots.openspiel_bots import ISMCTSBot, TurnBasedMCTSBot, terminal_rewards_view
from smmcts_spiel.bots.sm_oos_bot import SMOOSBot
from smmcts_spiel.bots.smmcts_bot import SMMCTSBot

__all__ = ["BeliefSamplerBot", "DOABBot", "ISMCTSBot", "ISSMMCTSBot", "MMCTSBot", "OOSBot",
           "SMMCTSBot", "SMOOSBot", "TurnBasedMCTSBot", "terminal_rewards_view"]
