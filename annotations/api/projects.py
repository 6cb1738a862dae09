"""Projects: list mine, create (the creator becomes manager), read, change (managers)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.api.common import PAGE_PARAMETERS, paginated, paginated_response
from annotations.models import AttributeType, EvaluationStrategy, NumberFormat
from annotations.roles import Role
from annotations.selectors import (
    attribute_specs,
    entity_type_names,
    project_get_for_user,
    project_list_for_user,
)
from annotations.services import AttributeInput, project_create, project_update
from metrics.engine.attributes.types import USE_TYPE_DEFAULT


class SettingsSerializer(serializers.Serializer):
    edit_distance_match_threshold = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    number_format = serializers.ChoiceField(choices=NumberFormat.values, required=False)
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
    attribute_id = serializers.CharField(max_length=100)
    label = serializers.CharField(max_length=300)
    type = serializers.CharField(help_text="bool, string, integer, float, list or dict, any case.")
    prompt = serializers.CharField(allow_blank=True, required=False, default="")
    missing_default = serializers.JSONField(
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


class ProjectDetailOutputSerializer(ProjectOutputSerializer):
    attributes = serializers.SerializerMethodField()
    entity_types = serializers.SerializerMethodField()

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


class ProjectListCreateApi(APIView):
    class CreateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        slug = serializers.SlugField(max_length=100)
        description = serializers.CharField(required=False, allow_blank=True, default="")
        settings = SettingsSerializer(required=False)
        strategy = serializers.ChoiceField(choices=EvaluationStrategy.values, default=EvaluationStrategy.NULL)
        attributes = AttributeInputSerializer(many=True, required=False, default=list)
        entity_types = serializers.ListField(child=serializers.CharField(), required=False, default=list)

    @extend_schema(
        operation_id="projects_list",
        parameters=PAGE_PARAMETERS,
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


class ProjectDetailApi(APIView):
    class UpdateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False)
        description = serializers.CharField(required=False, allow_blank=True)
        settings = SettingsSerializer(required=False)
        strategy = serializers.ChoiceField(
            choices=EvaluationStrategy.values,
            required=False,
            help_text="May change only while no document is assigned to a split.",
        )

    @extend_schema(operation_id="projects_retrieve", responses=ProjectDetailOutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=None)
        return Response(ProjectDetailOutputSerializer(project).data)

    @extend_schema(
        operation_id="projects_update", request=UpdateInputSerializer, responses=ProjectDetailOutputSerializer
    )
    def patch(self, request: Request, slug: str) -> Response:
        """Change the name, description, settings (merged) or strategy. Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = self.UpdateInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        updated = project_update(project=project, **serializer.validated_data)
        updated.current_role = project.current_role
        return Response(ProjectDetailOutputSerializer(updated).data)
