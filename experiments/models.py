"""Experiment runs, their posted predictions and per-document records, and the split audit trail."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotations.models import Attribute, Document, GoldVersion, Job, Project


class RunKind(models.TextChoices):
    SPANS = "spans", "Spans (de-identification)"
    ATTRIBUTES = "attributes", "Attributes (data extraction)"


class RunSource(models.TextChoices):
    LLM = "llm", "LLM pipeline"
    HUMAN = "human", "Human annotator (agreement, the human ceiling)"


class RunStatus(models.TextChoices):
    OPEN = "open", "Open: accepts predictions"
    SCORING = "scoring", "Scoring"
    SCORED = "scored", "Scored"
    FAILED = "failed", "Failed"


class Split(models.TextChoices):
    DEVELOPMENT = "development", "Development"
    VALIDATION = "validation", "Validation"
    TEST = "test", "Test"


class RunStage(models.TextChoices):
    ALL = "all", "All documents (null strategy)"
    DEVELOPMENT = "development", "Development"
    VALIDATION = "validation", "Validation"
    TEST = "test", "Test"


class ExperimentRun(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=200)
    # Notes for people (what changed in this run); the one field besides the name editable in the admin.
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=20, choices=RunKind.choices)
    source = models.CharField(max_length=20, choices=RunSource.choices, default=RunSource.LLM)
    config = models.JSONField(default=dict, blank=True, help_text="Snapshot of the pipeline configuration.")
    config_yaml = models.TextField(blank=True)
    config_hash = models.CharField(max_length=64, db_index=True)
    prompts = models.JSONField(default=list, blank=True, help_text="Snapshot of the prompts used.")
    model = models.CharField(max_length=200, blank=True)
    provider = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.OPEN)
    stage = models.CharField(max_length=20, choices=RunStage.choices, default=RunStage.ALL)
    gold_version = models.ForeignKey(
        GoldVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    # The test run's result is final: scored once, never rescored.
    is_final = models.BooleanField(default=False)
    total_cost_usd = models.FloatField(null=True, blank=True)
    total_input_tokens = models.BigIntegerField(null=True, blank=True)
    total_output_tokens = models.BigIntegerField(null=True, blank=True)
    total_duration_seconds = models.FloatField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finalized_at = models.DateTimeField(null=True, blank=True)
    # The latest scoring job (finalize or rescore): the run's progress is read from it.
    scoring_job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "status"], name="run_project_status")]

    def __str__(self) -> str:
        return f"run {self.pk} {self.name}"


class DocumentStatus(models.TextChoices):
    OK = "ok", "OK"
    FAILED = "failed", "Failed"


class RunDocument(models.Model):
    """What a run did with one document: the context the model read, cost, tokens and timings."""

    run = models.ForeignKey(ExperimentRun, on_delete=models.CASCADE, related_name="run_documents")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="run_documents")
    # Null when the pipeline had no text for the document: scored without source or verbatim checks.
    context = models.TextField(null=True, blank=True)  # noqa: DJ001 (null and "" differ, see above)
    status = models.CharField(max_length=10, choices=DocumentStatus.choices, default=DocumentStatus.OK)
    # Null when the pipeline sent none: the artefacts tell "no error text" from an empty one.
    error = models.TextField(null=True, blank=True)  # noqa: DJ001 (null and "" differ, see above)
    input_tokens = models.BigIntegerField(null=True, blank=True)
    output_tokens = models.BigIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    # Hash of the posted document object: the same content posted again is recognised as unchanged.
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "document"], name="run_document_one_per_run_and_document"),
            models.CheckConstraint(
                name="run_document_tokens_not_negative",
                condition=(Q(input_tokens__isnull=True) | Q(input_tokens__gte=0))
                & (Q(output_tokens__isnull=True) | Q(output_tokens__gte=0)),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.document_id} in run {self.run_id}"


class PredictedSpan(models.Model):
    run_document = models.ForeignKey(RunDocument, on_delete=models.CASCADE, related_name="spans")
    start = models.IntegerField()
    end = models.IntegerField()
    entity_type = models.CharField(max_length=100)
    label = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["run_document", "start", "end", "entity_type"]
        constraints = [
            models.CheckConstraint(
                name="predicted_span_offsets_valid", condition=Q(start__gte=0) & Q(start__lt=F("end"))
            ),
        ]

    def __str__(self) -> str:
        return f"{self.entity_type} [{self.start}:{self.end}]"


class PredictedValue(models.Model):
    """One posted value. Two values for one attribute are kept: they make a missing prediction."""

    run_document = models.ForeignKey(RunDocument, on_delete=models.CASCADE, related_name="values")
    attribute = models.ForeignKey(Attribute, on_delete=models.CASCADE, related_name="predicted_values")
    output_data = models.JSONField(null=True, blank=True)
    # Null when the pipeline sent none, as in the prediction JSONL (the artefacts keep the difference).
    additional_text = models.TextField(null=True, blank=True)  # noqa: DJ001 (null and "" differ)
    reasoning = models.TextField(null=True, blank=True)  # noqa: DJ001 (null and "" differ)
    position = models.PositiveIntegerField(default=0, help_text="Order within the posted annotations.")

    class Meta:
        ordering = ["run_document", "position"]

    def __str__(self) -> str:
        return f"{self.attribute_id} in {self.run_document_id}"


class IdempotencyKey(models.Model):
    """A batch posted with an Idempotency-Key: a retry gets the first answer instead of a second write."""

    run = models.ForeignKey(ExperimentRun, on_delete=models.CASCADE, related_name="idempotency_keys")
    key = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "key"], name="idempotency_key_unique_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.key} for run {self.run_id}"


class SplitAssignment(models.Model):
    """Which split a document is in. Changed only by the strategy's transitions (experiments.splits)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="split_assignments")
    # RESTRICT: a document with a split cannot be deleted on its own (that would change a sealed test set
    # and erase its audit trail); deleting the whole project still removes both.
    document = models.OneToOneField(Document, on_delete=models.RESTRICT, related_name="split_assignment")
    split = models.CharField(max_length=20, choices=Split.choices)
    # Sealed after acceptance: the test result is final and no split may change.
    sealed = models.BooleanField(default=False)
    assigned_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "document"]
        indexes = [models.Index(fields=["project", "split"], name="split_assignment_project_split")]

    def __str__(self) -> str:
        return f"{self.document} in {self.split}"


class SplitEvent(models.Model):
    """One change to one document's split (or a project-level transition when document is null)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="split_events")
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.CASCADE, related_name="split_events"
    )
    action = models.CharField(
        max_length=40, help_text="assign_development, move_to_validation, accept, reject..."
    )
    from_split = models.CharField(max_length=20, choices=Split.choices, blank=True)
    to_split = models.CharField(max_length=20, choices=Split.choices, blank=True)
    phase = models.CharField(max_length=20, help_text="The project phase when it happened.")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.TextField(blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    run = models.ForeignKey(ExperimentRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Counts per split just after this event: the project's split history at a glance.
    counts_after = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["project", "created_at"], name="split_event_project_time")]

    def __str__(self) -> str:
        return f"{self.action} {self.document or self.project}: {self.from_split or '-'} → {self.to_split or '-'}"


class SplitHistory(Project):
    """A project seen through its splits: the admin's split history, with the transitions as actions."""

    class Meta:
        proxy = True
        verbose_name = "project split history"
        verbose_name_plural = "project split histories"
