"""Derived data: scorings, metric values and comparison rows. All of it can be recomputed from gold
and predictions, so it is written in bulk and never edited by hand."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotations.models import Attribute, Document, GoldVersion, Job
from experiments.models import ExperimentRun
from metrics.fields import OrderedJSONField


class Scoring(models.Model):
    """One scoring of a run against one gold version. A rescore adds another; older ones stay readable."""

    run = models.ForeignKey(ExperimentRun, on_delete=models.CASCADE, related_name="scorings")
    number = models.PositiveIntegerField()
    gold_version = models.ForeignKey(GoldVersion, on_delete=models.PROTECT, related_name="scorings")
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="scorings")
    settings = models.JSONField(default=dict, blank=True, help_text="Threshold, number format... as used.")
    document_ids = models.JSONField(
        default=list, blank=True, help_text="External ids of the documents scored."
    )
    # The whole report: results.json for span runs, metrics.json for attribute runs.
    report = OrderedJSONField(default=dict, blank=True)
    is_complete = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="scoring_number_unique_per_run"),
            # A scoring job stores its results once, even when a redelivered task runs it again.
            models.UniqueConstraint(
                fields=["job"], condition=Q(job__isnull=False), name="scoring_one_per_job"
            ),
        ]

    def __str__(self) -> str:
        return f"scoring {self.number} of run {self.run_id}"


class MetricScope(models.TextChoices):
    OVERALL = "overall", "Overall"
    ENTITY_TYPE = "entity_type", "Entity type"
    ATTRIBUTE = "attribute", "Attribute"


class MetricValue(models.Model):
    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="metric_values")
    run = models.ForeignKey(ExperimentRun, on_delete=models.CASCADE, related_name="metric_values")
    scope = models.CharField(max_length=20, choices=MetricScope.choices)
    # The entity type or attribute_id; empty for overall.
    scope_key = models.CharField(max_length=100, blank=True)
    name = models.CharField(max_length=200, help_text="e.g. micro.chars.all.f1, accuracy_given_good_source")
    value = models.FloatField(null=True, blank=True)
    n = models.IntegerField(null=True, blank=True, help_text="How many items entered the value.")
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    ci = models.JSONField(null=True, blank=True, help_text="level, method, resamples, seed")

    class Meta:
        ordering = ["scoring", "scope", "scope_key", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["scoring", "scope", "scope_key", "name"], name="metric_value_unique_per_scoring"
            ),
            models.CheckConstraint(
                name="metric_value_interval_ordered",
                condition=Q(ci_low__isnull=True)
                | Q(ci_high__isnull=True)
                | Q(ci_low__lte=models.F("ci_high")),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope}:{self.scope_key} {self.name}={self.value}"


# The attribute's indexes of comparison rows hold attribute runs' rows only (a span row has none): a
# query naming attributes (`attribute_id IN (...)`) implies the condition.
_WITH_ATTRIBUTE = Q(attribute__isnull=False)


class ComparisonRow(models.Model):
    """One row of the comparison export (attribute runs: document × attribute; span runs: per gold or
    predicted span with its outcome). `columns` holds every export column; the filter fields are
    copied out so they can be indexed.

    A scoring writes millions of these at once, and each key PostgreSQL checks or indexes per row is
    paid millions of times (bench/server/README.md). So only the scoring's key is checked by the
    database: a write that races the deletion of its scoring (a new claim of the job) must fail. The
    run, document and attribute are copied from rows the scoring itself read, and Django's on_delete
    deletes the rows with them, as it does for every cascade here; their indexes serve those deletes.
    The scoring has no index of its own: every index below starts with it."""

    scoring = models.ForeignKey(
        Scoring, on_delete=models.CASCADE, related_name="comparison_rows", db_index=False
    )
    run = models.ForeignKey(
        ExperimentRun, on_delete=models.CASCADE, related_name="comparison_rows", db_constraint=False
    )
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="comparison_rows", db_constraint=False
    )
    attribute = models.ForeignKey(
        Attribute,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="comparison_rows",
        db_constraint=False,
        db_index=False,
    )
    entity_type = models.CharField(max_length=100, blank=True)
    match_status = models.CharField(max_length=40, blank=True)
    attribute_presence = models.BooleanField(null=True)
    is_correct = models.BooleanField(null=True)
    position = models.PositiveIntegerField(help_text="Order in the export: document order, then attribute.")
    columns = models.JSONField(default=dict)

    class Meta:
        ordering = ["scoring", "position"]
        indexes = [
            # GET /runs/{id}/comparison/?attribute=&match_status= pages through one scoring by id.
            models.Index(
                fields=["scoring", "attribute", "match_status", "id"],
                name="comparison_filter",
                condition=_WITH_ATTRIBUTE,
            ),
            models.Index(fields=["scoring", "document", "id"], name="comparison_by_document"),
            # ?attribute= alone and ?match_status= alone: pages read in id order straight off the index,
            # instead of sorting every row of the attribute (or status) for each page.
            models.Index(
                fields=["scoring", "attribute", "id"],
                name="comparison_by_attribute",
                condition=_WITH_ATTRIBUTE,
            ),
            models.Index(fields=["scoring", "match_status", "id"], name="comparison_by_status"),
            # Deleting an attribute deletes its rows (on_delete).
            models.Index(fields=["attribute"], name="comparison_attribute", condition=_WITH_ATTRIBUTE),
        ]
        constraints = [
            models.UniqueConstraint(fields=["scoring", "position"], name="comparison_row_position_unique"),
        ]

    def __str__(self) -> str:
        return f"row {self.position} of scoring {self.scoring_id}"


class HumanCeilingPair(models.Model):
    """The paired test of one scoring against a human run's scoring on the same gold version, for the
    human ceiling (metrics.services.human_ceiling). Computed once, when the later of the two is scored (or on
    first read): both scorings are immutable, and the test reads the gold and both runs' predictions
    again, over a second per pair."""

    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="human_ceiling_pairs")
    human_scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="+")
    settings = models.JSONField(help_text="The interval settings of the paired test.")
    # {"documents_compared": n, "metrics": {"scope|scope_key|name": {"a", "b", "delta", "ci_low", ...}}}
    result = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scoring", "human_scoring"], name="human_ceiling_pair_unique")
        ]

    def __str__(self) -> str:
        return f"scoring {self.scoring_id} against human scoring {self.human_scoring_id}"


class ScoringChunk(models.Model):
    """One chunk of a scoring job fanned out over the Celery workers, pending (no `partial`) until its
    task stores its partial result under the job's current claim, deleted by the final merge; a pending
    one is what a lost task left undone (docs/operations.md, "Scoring over every worker")."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="scoring_chunks")
    claim_token = models.CharField(max_length=32)
    index = models.PositiveIntegerField()
    # The chunk's documents (external ids) and the position of its first in the scoring's order.
    first_position = models.PositiveIntegerField(default=0)
    document_ids = models.JSONField(default=list)
    documents = models.PositiveIntegerField()
    # The pickled partial result (metrics.pipeline), written and read by this code only; null: pending.
    partial = models.BinaryField(null=True)
    # The chunk's comparison rows as COPY text (metrics.services.writes), when it encoded them:
    # how many, and whether they were written into the job's scoring (then `rows` is let go).
    rows = models.BinaryField(null=True)
    row_count = models.PositiveIntegerField(default=0)
    # The id of its first row: the job's rows take ids in position order (metrics.services.writes).
    first_row_id = models.BigIntegerField(null=True)
    written = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="scoring_chunk_unique_per_job"),
        ]

    def __str__(self) -> str:
        return f"job {self.job_id}, chunk {self.index}"
