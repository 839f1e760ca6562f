"""Bots implementing pyspiel.Bot."""

from smmcts_spiel.bots.belief_sampler import BeliefSamplerBot
from smmcts_spiel.bots.is_smmcts_bot import ISSMMCTSBot
from smmcts_spiel.bots.mmcts_bot import MMCTSBot
from smmcts_spiel.bots.oos_bot import OOSBot
from smmcts_spiel.bots.smmcts_bot import SMMCTSBot

__all__ = ["BeliefSamplerBot", "ISSMMCTSBot", "MMCTSBot", "OOSBot", "SMMCTSBot"]
