"""Writes of the metrics app: scoring jobs and what they store."""
