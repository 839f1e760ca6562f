"""Bots implementing pyspiel.Bot."""

from smmcts_spiel.bots.smmcts_bot import SMMCTSBot

__all__ = ["SMMCTSBot"]
