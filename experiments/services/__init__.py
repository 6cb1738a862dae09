"""Writes of the experiments app: runs and posted predictions. Splits are in `experiments.splits`."""

from experiments.services.predictions import IngestOutcome, predictions_ingest
from experiments.services.runs import configuration_hash, run_config_parse, run_create, run_delete

__all__ = [
    "IngestOutcome",
    "configuration_hash",
    "predictions_ingest",
    "run_config_parse",
    "run_create",
    "run_delete",
]
