"""Writes, one function per `<entity>_<action>`. Reads are in `annotations.selectors`."""

from annotations.services.gold_import import GoldImportOutcome, gold_import
from annotations.services.gold_read import GoldImport, ImportedDocument
from annotations.services.imports import UploadTooLarge, import_job_create, import_job_run, upload_size_check
from annotations.services.projects import (
    AttributeInput,
    attributes_upsert,
    entity_types_set,
    membership_upsert,
    project_create,
    project_settings_clean,
    project_strategy_check,
    project_update,
    register_strategy_change_check,
)
from annotations.services.tokens import api_token_create

__all__ = [
    "AttributeInput",
    "GoldImport",
    "GoldImportOutcome",
    "ImportedDocument",
    "UploadTooLarge",
    "api_token_create",
    "attributes_upsert",
    "entity_types_set",
    "gold_import",
    "import_job_create",
    "import_job_run",
    "membership_upsert",
    "project_create",
    "project_settings_clean",
    "project_strategy_check",
    "project_update",
    "register_strategy_change_check",
    "upload_size_check",
]
