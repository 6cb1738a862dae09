"""Reads. Every query starts from the projects the user is a member of (see `projects`)."""

from annotations.selectors.documents import (
    document_ids_by_external_id,
    document_list,
    document_states_by_external_id,
)
from annotations.selectors.gold import (
    attribute_spec,
    attribute_specs,
    gold_attribute_documents,
    gold_span_documents,
    gold_version_current,
    gold_version_document_hashes,
    gold_version_get,
    gold_version_list,
    gold_versions_current,
)
from annotations.selectors.jobs import job_get_for_user, job_list
from annotations.selectors.projects import (
    entity_type_names,
    membership_list,
    membership_role,
    project_check_role,
    project_get_for_user,
    project_list_for_user,
)

__all__ = [
    "attribute_spec",
    "attribute_specs",
    "document_ids_by_external_id",
    "document_list",
    "document_states_by_external_id",
    "entity_type_names",
    "gold_attribute_documents",
    "gold_span_documents",
    "gold_version_current",
    "gold_version_document_hashes",
    "gold_version_get",
    "gold_version_list",
    "gold_versions_current",
    "job_get_for_user",
    "job_list",
    "membership_list",
    "membership_role",
    "project_check_role",
    "project_get_for_user",
    "project_list_for_user",
]
