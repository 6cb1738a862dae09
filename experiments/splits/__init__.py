"""Evaluation strategies and the split audit: no test leakage, by construction (docs/semantics.md §4).

`experiments.splits` is the one door to splits: the transitions (services), the rules runs obey, what is
hidden before acceptance, and the reads of the API. Import from here, not from the modules inside.
"""

from experiments.splits.access import (
    split_exclude_hidden,
    split_hidden_document_ids,
    split_hidden_documents,
    split_hidden_documents_everywhere,
    split_hides_documents,
    split_log_refused_access,
    split_refuse_hidden_access,
)
from experiments.splits.audit import UNASSIGNED, SplitAction, split_counts
from experiments.splits.draw import draw, proportional_allocation
from experiments.splits.errors import SplitAccessRefused, SplitRuleViolation
from experiments.splits.queries import (
    split_current_documents,
    split_documents_in,
    split_events,
    split_run_for_project,
    split_status,
)
from experiments.splits.rules import (
    split_any_assigned,
    split_check_can_delete,
    split_check_can_score,
    split_check_prediction_documents,
    split_check_run_config,
    split_document_ids_in_stage,
    split_on_run_scored,
    split_stage_for_new_run,
    split_strategy_change_check,
)
from experiments.splits.transitions import (
    split_accept,
    split_assign_development,
    split_move_to_validation,
    split_reject,
)

__all__ = [
    "UNASSIGNED",
    "SplitAccessRefused",
    "SplitAction",
    "SplitRuleViolation",
    "draw",
    "proportional_allocation",
    "split_accept",
    "split_any_assigned",
    "split_assign_development",
    "split_check_can_delete",
    "split_check_can_score",
    "split_check_prediction_documents",
    "split_check_run_config",
    "split_counts",
    "split_current_documents",
    "split_document_ids_in_stage",
    "split_documents_in",
    "split_events",
    "split_exclude_hidden",
    "split_hidden_document_ids",
    "split_hidden_documents",
    "split_hidden_documents_everywhere",
    "split_hides_documents",
    "split_log_refused_access",
    "split_move_to_validation",
    "split_on_run_scored",
    "split_refuse_hidden_access",
    "split_reject",
    "split_run_for_project",
    "split_stage_for_new_run",
    "split_status",
    "split_strategy_change_check",
]
