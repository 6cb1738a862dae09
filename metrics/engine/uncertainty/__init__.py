"""Intervals and paired tests (issue 8) over per-document counts (`counts.DocumentCounts`), framework-free."""
