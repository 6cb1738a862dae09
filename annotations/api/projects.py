"""Projects: list mine, create (the creator becomes manager), read, change (managers)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated, paginated_response
from annotations.models import AttributeType, EvaluationStrategy, NumberFormat
from annotations.roles import Role
from annotations.selectors import (
    attribute_specs,
    entity_type_names,
    project_get_for_user,
    project_list_for_user,
)
from annotations.services import AttributeInput, project_create, project_update
from evalproject.api import ApiView
from evalproject.validation import ChoiceField, StorableJSONField
from metrics.engine.attributes.types import USE_TYPE_DEFAULT


class SettingsSerializer(serializers.Serializer):
    edit_distance_match_threshold = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        help_text="Normalised edit-distance similarity at or above which a STRING value is a near match "
        "(default 0.90).",
    )
    number_format = ChoiceField(
        choices=NumberFormat.values,
        required=False,
        help_text="How numbers in gold, predictions and text are read (decimal and thousands separators).",
    )
    gold_annotator = serializers.CharField(
        max_length=150,
        required=False,
        allow_blank=True,
        help_text="In an import with several annotators, the one (or the curation user) whose annotations "
        "are gold; the others become human runs.",
    )
    rescore_on_new_gold = serializers.BooleanField(
        required=False, help_text="Re-score every scored run when a new gold version is imported."
    )


class AttributeInputSerializer(serializers.Serializer):
    attribute_id = serializers.CharField(max_length=100, help_text="The id predictions and gold use.")
    label = serializers.CharField(max_length=300, help_text="A name for people.")
    type = serializers.CharField(
        max_length=10, help_text="bool, string, integer, float, list or dict, any case."
    )
    prompt = serializers.CharField(
        allow_blank=True, required=False, default="", help_text="The prompt that extracts it."
    )
    missing_default = StorableJSONField(
        required=False, allow_null=True, help_text="Gold value for an absent annotation; omit for the type's."
    )

    def validate_type(self, value: str) -> str:
        if value.strip().upper() not in AttributeType.values:
            allowed = ", ".join(choice.lower() for choice in AttributeType.values)
            raise serializers.ValidationError(f"unknown attribute type {value!r}; expected one of {allowed}")
        return value.strip().upper()


class ProjectOutputSerializer(serializers.Serializer):
    """A project as its members see it, with the caller's own role."""

    slug = serializers.SlugField()
    name = serializers.CharField()
    description = serializers.CharField()
    settings = serializers.JSONField()
    strategy = serializers.CharField()
    phase = serializers.CharField()
    role = serializers.CharField(source="current_role", help_text="Your role in this project.")
    created_at = serializers.DateTimeField()


class AttributeOutputSerializer(serializers.Serializer):
    attribute_id = serializers.CharField()
    label = serializers.CharField()
    type = serializers.CharField(help_text="BOOL, STRING, INTEGER, FLOAT, LIST or DICT.")
    prompt = serializers.CharField()
    scored = serializers.BooleanField(help_text="False for an attribute without a prompt.")


class ProjectDetailOutputSerializer(ProjectOutputSerializer):
    attributes = serializers.SerializerMethodField(help_text="The attribute schema (data extraction).")
    entity_types = serializers.SerializerMethodField(
        help_text="The canonical span types of the schema and of the current span gold."
    )

    @extend_schema_field(AttributeOutputSerializer(many=True))
    def get_attributes(self, project) -> list[dict]:
        return [
            {
                "attribute_id": spec.attribute_id,
                "label": spec.label,
                "type": spec.type.value,
                "prompt": spec.prompt,
                "scored": spec.is_scored,
            }
            for spec in attribute_specs(project=project)
        ]

    def get_entity_types(self, project) -> list[str]:
        return entity_type_names(project=project)


def _attribute_inputs(rows: list[dict]) -> list[AttributeInput]:
    return [
        AttributeInput(
            attribute_id=row["attribute_id"],
            label=row["label"],
            type=row["type"],
            prompt=row.get("prompt", ""),
            missing_default=row.get("missing_default", USE_TYPE_DEFAULT),
        )
        for row in rows
    ]


class ProjectListCreateApi(ApiView):
    paginated_methods = ("get",)

    class CreateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, help_text="A name for people.")
        slug = serializers.SlugField(max_length=100, help_text="The project's id in URLs; unique.")
        description = serializers.CharField(
            required=False, allow_blank=True, default="", help_text="What the project evaluates, for people."
        )
        settings = SettingsSerializer(
            required=False, help_text="Scoring settings; omitted ones keep defaults."
        )
        strategy = ChoiceField(
            choices=EvaluationStrategy.values,
            default=EvaluationStrategy.NULL,
            help_text="`null`: every run is scored on every document; `dev_val_test`: development, "
            "validation and a held-back test split.",
        )
        attributes = AttributeInputSerializer(
            many=True, required=False, default=list, help_text="The attribute schema (data extraction)."
        )
        entity_types = serializers.ListField(
            child=serializers.CharField(max_length=100),
            required=False,
            default=list,
            help_text="Canonical span types (de-identification), any case.",
        )

    @extend_schema(
        operation_id="projects_list",
        responses=paginated(ProjectOutputSerializer, "ProjectPage"),
    )
    def get(self, request: Request) -> Response:
        """The projects you are a member of."""
        projects = project_list_for_user(request.user)
        return paginated_response(
            queryset=projects, serializer_class=ProjectOutputSerializer, request=request, view=self
        )

    @extend_schema(
        operation_id="projects_create",
        request=CreateInputSerializer,
        responses={201: ProjectDetailOutputSerializer},
        examples=[
            OpenApiExample(
                "A de-identification project",
                value={
                    "name": "Discharge letters",
                    "slug": "letters",
                    "strategy": "dev_val_test",
                    "entity_types": ["PERSON_NAME", "OTHER_DATE"],
                },
                request_only=True,
            ),
            OpenApiExample(
                "A data-extraction project",
                value={
                    "name": "Trial reports",
                    "slug": "trials",
                    "settings": {"edit_distance_match_threshold": 0.9},
                    "attributes": [
                        {
                            "attribute_id": "101",
                            "label": "Randomised",
                            "type": "bool",
                            "prompt": "Randomised?",
                        }
                    ],
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Create a project; you become its manager."""
        serializer = self.CreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        project = project_create(
            user=request.user,
            name=data["name"],
            slug=data["slug"],
            description=data["description"],
            settings=data.get("settings"),
            strategy=data["strategy"],
            attributes=_attribute_inputs(data["attributes"]),
            entity_types=data["entity_types"],
        )
        project.current_role = Role.MANAGER
        return Response(ProjectDetailOutputSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(ApiView):
    class UpdateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False, help_text="A name for people.")
        description = serializers.CharField(
            required=False, allow_blank=True, help_text="What the project evaluates, for people."
        )
        settings = SettingsSerializer(required=False, help_text="Merged over the current settings.")
        strategy = ChoiceField(
            choices=EvaluationStrategy.values,
            required=False,
            help_text="May change only while no document is assigned to a split.",
        )

    @extend_schema(operation_id="projects_retrieve", responses=ProjectDetailOutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=None)
        return Response(ProjectDetailOutputSerializer(project).data)

    @extend_schema(
        operation_id="projects_update",
        request=UpdateInputSerializer,
        responses=ProjectDetailOutputSerializer,
        examples=[
            OpenApiExample(
                "Loosen the near-match threshold",
                value={"settings": {"edit_distance_match_threshold": 0.85}},
                request_only=True,
            )
        ],
    )
    def patch(self, request: Request, slug: str) -> Response:
        """Change the name, description, settings (merged) or strategy. Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = self.UpdateInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        updated = project_update(project=project, **serializer.validated_data)
        updated.current_role = project.current_role
        return Response(ProjectDetailOutputSerializer(updated).data)
