"""Maintenance tools run from a checkout (not part of the analysis pipeline)."""
