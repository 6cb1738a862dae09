"""Response schemas of what every answer showing a scoring's numbers carries beside them: the gold
status of the scoring (metrics.selectors) and the human ceiling (metrics.services.human_ceiling),
docs/agreement.md."""

from __future__ import annotations

from rest_framework import serializers


class GoldStatusOutput(serializers.Serializer):
    scored_on = serializers.IntegerField(help_text="The gold version the scoring used.")
    latest = serializers.IntegerField(help_text="The project's newest gold version of the same kind.")
    is_latest = serializers.BooleanField(help_text="Whether the scoring used the newest gold.")
    rows_difference = serializers.IntegerField(
        required=False,
        help_text="Spans or values the newest version has more (negative: fewer), without held-back "
        "documents; absent when the scoring used the newest gold.",
    )
    text = serializers.CharField(help_text='e.g. "scored on gold v3; v4 has 12 more spans".')


class HumanCeilingOutput(serializers.Serializer):
    gold_version = serializers.IntegerField(help_text="The gold version the model and the humans share.")
    level = serializers.FloatField(help_text="Confidence level of the intervals.")
    method = serializers.CharField(help_text="How the paired intervals are computed.")
    human_runs = serializers.ListField(
        child=serializers.DictField(), help_text="The human runs compared: run, name, scoring."
    )
    metrics = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per headline metric: scope, scope_key, name, `model` (value, ci_low, ci_high), "
        "`annotators` (each human's value as scored, `paired`: human, model, delta, ci_low, ci_high, "
        "p_value, documents_compared; `model_below`) and `text`.",
    )
