"""Scoring of extracted attribute values against gold values (docs/semantics.md section 2)."""
