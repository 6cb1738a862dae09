"""What the scoring and results services raise (DRF exceptions: a view answers with the reason)."""

from __future__ import annotations

from rest_framework import status

from experiments.errors import RunRuleError


class ScoringNotAllowed(RunRuleError):
    """Finalize or rescore of a run in the wrong state, or with no gold to score against: 409."""

    default_code = "scoring_not_allowed"


class ComparisonNotPossible(RunRuleError):
    """Two runs that cannot be compared (other project, other gold version, not scored): 409."""

    default_code = "comparison_not_possible"


class ScoringNotFound(RunRuleError):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "scoring_not_found"
