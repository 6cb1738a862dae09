"""Writes for projects: creation with settings and schema, updates, members, and the attribute schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.importers.labels import CANONICAL_TYPES
from annotations.models import (
    DEFAULT_PROJECT_SETTINGS,
    Attribute,
    EntityType,
    EvaluationStrategy,
    Membership,
    NumberFormat,
    Project,
    ProjectPhase,
)
from annotations.roles import Role
from metrics.engine.attributes.types import USE_TYPE_DEFAULT, AttributeSpec, AttributeType

# Checks run before a project's strategy changes; each raises ValidationError to refuse.
# The splits code (experiments) registers "not while documents are assigned to splits" here from its
# AppConfig.ready(): annotations must not import experiments (dependencies point one way).
StrategyChangeCheck = Callable[[Project, str], None]
# Settings a project may have besides the defaults (issue 16): absent means "" and false.
KNOWN_PROJECT_SETTINGS = (*DEFAULT_PROJECT_SETTINGS, "gold_annotator", "rescore_on_new_gold")
GOLD_ANNOTATOR_MAX = 150
_strategy_change_checks: list[StrategyChangeCheck] = []


def register_strategy_change_check(check: StrategyChangeCheck) -> None:
    if check not in _strategy_change_checks:
        _strategy_change_checks.append(check)


def project_settings_clean(
    settings: Mapping[str, Any] | None, *, base: Mapping[str, Any] | None = None
) -> dict:
    """`settings` merged over `base` (default: the project defaults), checked. Unknown keys are refused."""
    merged = dict(base if base is not None else DEFAULT_PROJECT_SETTINGS)
    errors: dict[str, str] = {}
    for key, value in (settings or {}).items():
        if key == "edit_distance_match_threshold":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                errors[key] = f"must be a number from 0 to 1, got {value!r}"
                continue
            merged[key] = float(value)
        elif key == "number_format":
            if value not in NumberFormat.values:
                errors[key] = f"must be one of {', '.join(NumberFormat.values)}, got {value!r}"
                continue
            merged[key] = value
        elif key == "gold_annotator":
            # The annotator (or curation user) whose annotations are gold in a multi-annotator import;
            # the others become human runs. "" or null: the import must name one when it has several.
            if value is not None and (not isinstance(value, str) or len(value) > GOLD_ANNOTATOR_MAX):
                errors[key] = (
                    f"must be an annotator's name (at most {GOLD_ANNOTATOR_MAX} characters), got {value!r}"
                )
                continue
            merged[key] = value or ""
        elif key == "rescore_on_new_gold":
            if not isinstance(value, bool):
                errors[key] = f"must be true or false, got {value!r}"
                continue
            merged[key] = value
        else:
            errors[key] = f"unknown setting; known: {', '.join(KNOWN_PROJECT_SETTINGS)}"
    if errors:
        raise ValidationError({"settings": [f"{key}: {message}" for key, message in errors.items()]})
    return merged


def project_strategy_check(*, project: Project, strategy: str) -> None:
    """The one place that decides whether `project` may switch to `strategy`."""
    if strategy not in EvaluationStrategy.values:
        raise ValidationError({"strategy": f"must be one of {', '.join(EvaluationStrategy.values)}"})
    if strategy == project.strategy:
        return
    for check in _strategy_change_checks:
        check(project, strategy)


def _phase_for(strategy: str) -> str:
    return ProjectPhase.DEVELOPMENT if strategy == EvaluationStrategy.DEV_VAL_TEST else ProjectPhase.NONE


@dataclass(frozen=True, slots=True)
class AttributeInput:
    """One attribute of a schema as given by a user; `missing_default` USE_TYPE_DEFAULT when absent."""

    attribute_id: str
    label: str
    type: str
    prompt: str = ""
    missing_default: Any = USE_TYPE_DEFAULT

    def to_spec(self) -> AttributeSpec:
        try:
            attribute_type = AttributeType.parse(self.type)
        except ValueError as error:
            raise ValidationError({"attributes": f"{self.attribute_id}: {error}"}) from None
        return AttributeSpec(self.attribute_id, self.label, attribute_type, self.prompt, self.missing_default)


@transaction.atomic
def project_create(
    *,
    user: AbstractBaseUser,
    name: str,
    slug: str,
    description: str = "",
    settings: Mapping[str, Any] | None = None,
    strategy: str = EvaluationStrategy.NULL,
    attributes: Sequence[AttributeInput] = (),
    entity_types: Sequence[str] = (),
) -> Project:
    """Create a project; its creator becomes its manager."""
    if strategy not in EvaluationStrategy.values:
        raise ValidationError({"strategy": f"must be one of {', '.join(EvaluationStrategy.values)}"})
    project = Project(
        name=name,
        slug=slug,
        description=description,
        settings=project_settings_clean(settings),
        strategy=strategy,
        phase=_phase_for(strategy),
        created_by=user,
    )
    project.full_clean()
    project.save()
    Membership.objects.create(project=project, user=user, role=Role.MANAGER)
    attributes_upsert(project=project, specs=[attribute.to_spec() for attribute in attributes])
    entity_types_set(project=project, names=entity_types)
    return project


@transaction.atomic
def project_update(
    *,
    project: Project,
    name: str | None = None,
    description: str | None = None,
    settings: Mapping[str, Any] | None = None,
    strategy: str | None = None,
) -> Project:
    """Change what is given; settings are merged over the current ones. Managers only (the view checks)."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    if name is not None:
        project.name = name
    if description is not None:
        project.description = description
    if settings is not None:
        project.settings = project_settings_clean(settings, base=project.settings)
    if strategy is not None and strategy != project.strategy:
        project_strategy_check(project=project, strategy=strategy)
        project.strategy = strategy
        project.phase = _phase_for(strategy)
    project.full_clean()
    project.save()
    return project


def entity_types_set(*, project: Project, names: Sequence[str]) -> None:
    """Add the canonical entity types in `names` (any case) to the project's span schema."""
    canonical_by_lower = {canonical.lower(): canonical for canonical in CANONICAL_TYPES}
    unknown = [name for name in names if name.strip().lower() not in canonical_by_lower]
    if unknown:
        raise ValidationError(
            {
                "entity_types": f"not canonical types: {', '.join(unknown)}; expected {', '.join(CANONICAL_TYPES)}"
            }
        )
    existing = set(EntityType.objects.filter(project=project).values_list("name", flat=True))
    wanted = dict.fromkeys(canonical_by_lower[name.strip().lower()] for name in names)
    EntityType.objects.bulk_create(
        [EntityType(project=project, name=name, label=name) for name in wanted if name not in existing]
    )


def attributes_upsert(*, project: Project, specs: Sequence[AttributeSpec]) -> dict[str, list[str]]:
    """Create or update the attributes of `specs` (positions follow their order).

    Attributes the specs do not name are kept: gold may refer to them. Returns the attribute ids
    created, updated and unchanged.
    """
    seen: set[str] = set()
    for spec in specs:
        if not spec.attribute_id or spec.attribute_id in seen:
            raise ValidationError({"attributes": f"attribute_id {spec.attribute_id!r} is empty or repeated"})
        seen.add(spec.attribute_id)
    existing = {attribute.attribute_id: attribute for attribute in Attribute.objects.filter(project=project)}
    outcome: dict[str, list[str]] = {"created": [], "updated": [], "unchanged": []}
    to_create, to_update = [], []
    for position, spec in enumerate(specs):
        values = {
            "label": spec.label,
            "type": spec.type.value,
            "prompt": spec.prompt,
            "uses_type_default": spec.missing_default is USE_TYPE_DEFAULT,
            "missing_default": None if spec.missing_default is USE_TYPE_DEFAULT else spec.missing_default,
            "position": position,
        }
        attribute = existing.get(spec.attribute_id)
        if attribute is None:
            attribute = Attribute(project=project, attribute_id=spec.attribute_id, **values)
            attribute.full_clean(validate_unique=False, validate_constraints=False)
            to_create.append(attribute)
            outcome["created"].append(spec.attribute_id)
        elif any(getattr(attribute, key) != value for key, value in values.items()):
            for key, value in values.items():
                setattr(attribute, key, value)
            attribute.full_clean(validate_unique=False, validate_constraints=False)
            to_update.append(attribute)
            outcome["updated"].append(spec.attribute_id)
        else:
            outcome["unchanged"].append(spec.attribute_id)
    Attribute.objects.bulk_create(to_create)
    Attribute.objects.bulk_update(
        to_update, ["label", "type", "prompt", "uses_type_default", "missing_default", "position"]
    )
    return outcome


@transaction.atomic
def membership_upsert(*, project: Project, username: str, role: str) -> tuple[Membership, bool]:
    """Give `username` `role` in `project`; (membership, created). Retrying is safe: same result.

    The last manager cannot step down: a project without a manager could never change again.
    """
    if role not in Role.values:
        raise ValidationError({"role": f"must be one of {', '.join(Role.values)}"})
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise ValidationError({"username": f"no active user {username!r}"})
    # Lock the project's memberships so two managers demoting each other cannot both succeed.
    memberships = list(Membership.objects.select_for_update().filter(project=project))
    membership = next((m for m in memberships if m.user_id == user.pk), None)
    if membership is None:
        return Membership.objects.create(project=project, user=user, role=role), True
    managers = [m for m in memberships if m.role == Role.MANAGER]
    if membership.role == Role.MANAGER and role != Role.MANAGER and len(managers) == 1:
        raise ValidationError(
            {"role": f"{username} is the project's only manager; make someone else manager first"}
        )
    if membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership, False
