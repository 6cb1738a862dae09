"""POST /runs/{id}/predictions/: a batch of documents in the prediction JSONL shapes.

201 when something was stored, 200 when every document was already there unchanged. `?replace=true`
replaces documents posted before with other content (409 otherwise). An `Idempotency-Key` header makes
the whole request safe to retry: the same key and body get the first answer back.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.roles import Role
from evalproject.api import ApiView
from evalproject.validation import ChoiceField, text_problem
from experiments.models import IdempotencyKey
from experiments.prediction_batches import MAX_DOCUMENTS_PER_BATCH
from experiments.selectors import run_get_for_user
from experiments.services import predictions_ingest

IDEMPOTENCY_HEADER = "Idempotency-Key"
IDEMPOTENCY_KEY_MAX_LENGTH = IdempotencyKey._meta.get_field("key").max_length


class PredictionProblemOutput(serializers.Serializer):
    index = serializers.IntegerField(allow_null=True, help_text="The document's index in the batch.")
    document_id = serializers.CharField(allow_null=True)
    field = serializers.CharField(allow_null=True, help_text="e.g. `entities[0].end`.")
    message = serializers.CharField()


class PostedDocumentOutput(serializers.Serializer):
    document_id = serializers.CharField()
    status = ChoiceField(choices=["created", "unchanged", "replaced"])


class PredictionCountsOutput(serializers.Serializer):
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    replaced = serializers.IntegerField()


class PredictionsOutput(serializers.Serializer):
    run = serializers.IntegerField()
    counts = PredictionCountsOutput()
    documents = PostedDocumentOutput(many=True, help_text="Each posted document's outcome, in batch order.")
    warnings = PredictionProblemOutput(many=True, help_text="e.g. labels outside the label map.")


SPAN_EXAMPLE = {
    "document_id": "letter-1",
    "entities": [
        {"start": 21, "end": 35, "entity_type": "PERSON_NAME"},
        {"start": 39, "end": 49, "entity_type": "OTHER_DATE", "text": "01.02.1980"},
    ],
}
ATTRIBUTE_EXAMPLE = {
    "document_id": "1001",
    "context": "Methods. Participants were randomly allocated to two arms.",
    "annotations": [
        {
            "attribute_id": "101",
            "output_data": True,
            "additional_text": "Participants were randomly allocated",
            "reasoning": "The methods say so.",
        }
    ],
    "input_tokens": 812,
    "output_tokens": 95,
    "cost_usd": 0.0021,
    "timings": {"llm_extraction": 2.4},
}


class PredictionsApi(ApiView):
    class PredictionBatchInputSerializer(serializers.Serializer):
        # Each document is checked by the prediction readers in the service, so every problem of every
        # document is reported at once with its index; here only the envelope.
        documents = serializers.ListField(
            allow_empty=False,
            help_text=f"Up to {MAX_DOCUMENTS_PER_BATCH} documents, each one line of the prediction JSONL "
            "of the run's kind. Spans: `document_id`, `entities` [{`start`, `end` (code points, end "
            "exclusive), `entity_type`, optional `text`}], optional `text`. Attributes: `document_id`, "
            "`context`, `annotations` [{`attribute_id`, `output_data`, `additional_text`, `reasoning`}], "
            "optional `status`, `error`, `input_tokens`, `output_tokens`, `cost_usd`, `timings`.",
        )

    class PredictionQuerySerializer(serializers.Serializer):
        replace = serializers.BooleanField(
            default=False, help_text="Replace documents posted before with other content (else 409)."
        )

    query_serializers = {"post": PredictionQuerySerializer}

    @extend_schema(
        operation_id="predictions_create",
        request=PredictionBatchInputSerializer,
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                str,
                location=OpenApiParameter.HEADER,
                description=f"At most {IDEMPOTENCY_KEY_MAX_LENGTH} characters. The same key and body get the first answer back.",
            )
        ],
        responses={201: PredictionsOutput, 200: PredictionsOutput},
        examples=[
            OpenApiExample("A span batch", value={"documents": [SPAN_EXAMPLE]}, request_only=True),
            OpenApiExample("An attribute batch", value={"documents": [ATTRIBUTE_EXAMPLE]}, request_only=True),
        ],
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Post a batch of predictions, checked whole and stored whole or not at all (400 lists every
        problem by document). Pipelines and managers."""
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.PIPELINE)
        query = self.PredictionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = self.PredictionBatchInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key = request.headers.get(IDEMPOTENCY_HEADER) or None
        why = None if key is None else text_problem(key, max_length=IDEMPOTENCY_KEY_MAX_LENGTH)
        if why is not None:
            raise serializers.ValidationError({IDEMPOTENCY_HEADER: why})
        outcome = predictions_ingest(
            run=run,
            documents=data.validated_data["documents"],
            replace=query.validated_data["replace"],
            idempotency_key=key,
        )
        return Response(outcome.body, status=outcome.status_code)
