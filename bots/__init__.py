"""Bots implementing pyspiel.Bot."""
