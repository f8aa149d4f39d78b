"""Environments with declared symmetries: the lever game and Hanabi."""
