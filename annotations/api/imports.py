"""Gold imports: upload a file, get a job (202) that a worker runs."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import PayloadTooLarge
from annotations.api.jobs import JobOutputSerializer
from annotations.models import GoldVersion
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from annotations.services import UploadTooLarge, import_job_create
from annotations.services.gold_read import FORMATS
from evalproject.api import ApiView
from evalproject.validation import ChoiceField, JSONTextField

# The request carries the file plus the form's other fields and boundaries: a file just under the
# limit must not be refused for them. The file's own size is checked exactly once it is parsed.
FORM_ALLOWANCE_BYTES = 64 * 1024


class ImportCreateApi(ApiView):
    parser_classes = [MultiPartParser, FormParser]

    class ImportInputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text=f"The gold or prompt file, or a zip of them; at most {settings.UPLOAD_MAX_BYTES} bytes."
        )
        format = ChoiceField(
            choices=FORMATS,
            default="auto",
            help_text="`auto` tells JSONL, INCEpTION CAS JSON, EPPI JSON and the prompt CSV apart by content.",
        )
        label_map = JSONTextField(
            required=False,
            allow_blank=True,
            help_text='JSON object {"raw label": "CANONICAL_TYPE"}, merged over the default label map.',
        )
        annotator = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=GoldVersion._meta.get_field("annotator").max_length,
            help_text="The INCEpTION user whose annotations are the gold.",
        )

        def validate_label_map(self, value):
            if value is not None and not isinstance(value, dict):
                raise serializers.ValidationError('must be a JSON object {"raw label": "CANONICAL_TYPE"}')
            return value

    @extend_schema(
        operation_id="imports_create",
        request={"multipart/form-data": ImportInputSerializer},
        responses={202: JobOutputSerializer},
        examples=[
            OpenApiExample(
                "Span gold as JSONL, with a label of its own",
                value={"file": "letters.jsonl", "format": "jsonl", "label_map": '{"patient": "PERSON_NAME"}'},
                request_only=True,
                media_type="multipart/form-data",
            )
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        """Import gold (JSONL, CAS, EPPI) or the attribute schema (prompt CSV). Annotators and up."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.ANNOTATOR)
        try:
            # Before the body is read: an oversized upload is refused without spooling it to disk.
            content_length = _content_length(request)
            if (
                content_length is not None
                and content_length > settings.UPLOAD_MAX_BYTES + FORM_ALLOWANCE_BYTES
            ):
                raise UploadTooLarge(content_length)
            serializer = self.ImportInputSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            data = serializer.validated_data
            job = import_job_create(
                project=project,
                user=request.user,
                upload=data["file"],
                format=data["format"],
                label_map=data.get("label_map") or None,
                annotator=data.get("annotator") or None,
            )
        except UploadTooLarge as error:
            raise PayloadTooLarge(str(error)) from None
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _content_length(request: Request) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None
