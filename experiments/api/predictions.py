"""POST /runs/{id}/predictions/: a batch of documents in the prediction JSONL shapes.

201 when something was stored, 200 when every document was already there unchanged. `?replace=true`
replaces documents posted before with other content (409 otherwise). An `Idempotency-Key` header makes
the whole request safe to retry: the same key and body get the first answer back.
"""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.roles import Role
from experiments.selectors import run_get_for_user
from experiments.services import predictions_ingest

IDEMPOTENCY_HEADER = "Idempotency-Key"


class PredictionsApi(APIView):
    class InputSerializer(serializers.Serializer):
        # Each document is checked by the prediction readers in the service, so every problem of every
        # document is reported at once with its index; here only the envelope.
        documents = serializers.ListField(allow_empty=False)

    class QuerySerializer(serializers.Serializer):
        replace = serializers.BooleanField(default=False)

    def post(self, request: Request, run_id: int) -> Response:
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.PIPELINE)
        query = self.QuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key = request.headers.get(IDEMPOTENCY_HEADER) or None
        if key is not None and len(key) > 200:
            raise serializers.ValidationError({IDEMPOTENCY_HEADER: "at most 200 characters"})
        outcome = predictions_ingest(
            run=run,
            documents=data.validated_data["documents"],
            replace=query.validated_data["replace"],
            idempotency_key=key,
        )
        return Response(outcome.body, status=outcome.status_code)
