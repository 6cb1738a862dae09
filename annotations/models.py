"""Projects, their members and schema, documents, versioned gold, API tokens and jobs.

Constraints live in the database and are named, so a bad row is refused whatever code path wrote it.
"""

from __future__ import annotations

import hashlib

from django.conf import settings as django_settings
from django.db import models
from django.db.models import F, Q

from annotations.roles import Role
from metrics.engine.attributes.types import AttributeType as EngineAttributeType


class EvaluationStrategy(models.TextChoices):
    NULL = "null", "Null: every document is evaluated"
    DEV_VAL_TEST = "dev_val_test", "Development, validation, test"


class ProjectPhase(models.TextChoices):
    NONE = "", "No phases (null strategy)"
    DEVELOPMENT = "development", "Development"
    VALIDATION = "validation", "Validation"
    FINISHED = "finished", "Finished"


class NumberFormat(models.TextChoices):
    EN = "en", "1,250.5"
    DE = "de", "1.250,5"


DEFAULT_PROJECT_SETTINGS = {"edit_distance_match_threshold": 0.90, "number_format": "en"}


def default_project_settings() -> dict:
    return dict(DEFAULT_PROJECT_SETTINGS)


class Project(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    settings = models.JSONField(default=default_project_settings, blank=True)
    strategy = models.CharField(
        max_length=20, choices=EvaluationStrategy.choices, default=EvaluationStrategy.NULL
    )
    phase = models.CharField(
        max_length=20, choices=ProjectPhase.choices, default=ProjectPhase.NONE, blank=True
    )
    # The configuration hash chosen for validation and test (dev_val_test); empty before the first move.
    chosen_config_hash = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    members = models.ManyToManyField(
        django_settings.AUTH_USER_MODEL, through="Membership", related_name="projects"
    )

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                name="project_phase_matches_strategy",
                condition=(Q(strategy="null", phase="") | Q(strategy="dev_val_test") & ~Q(phase="")),
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def edit_distance_match_threshold(self) -> float:
        return float(self.settings.get("edit_distance_match_threshold", 0.90))

    @property
    def number_format(self) -> str:
        return str(self.settings.get("number_format", "en"))


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "user"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_one_per_user_and_project"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} as {self.role}"


class ApiToken(models.Model):
    """An API key, stored as its SHA-256 only: a database leak does not leak usable keys."""

    user = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters of the key, so a user can tell tokens apart; not enough to use one.
    prefix = models.CharField(max_length=12, editable=False)
    read_only = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def hash_key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()


class Document(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=255, help_text="The document_id of the imports.")
    name = models.CharField(max_length=500, blank=True)
    text = models.TextField(blank=True, help_text="The full text, exactly as the pipeline sees it.")
    content_hash = models.CharField(max_length=64, editable=False)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="document_external_id_unique_in_project"
            ),
        ]

    def __str__(self) -> str:
        return self.external_id

    def save(self, *args, **kwargs):
        self.content_hash = self.hash_text(self.text)
        super().save(*args, **kwargs)

    @staticmethod
    def hash_text(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()


class EntityType(models.Model):
    """A canonical span type of the project's schema (PERSON_NAME, DATE_OF_BIRTH, ...)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="entity_types")
    name = models.CharField(max_length=100)
    label = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="entity_type_name_unique_in_project"),
        ]

    def __str__(self) -> str:
        return self.name


# The engine's types, as the choices of a column: one list of types (metrics.engine is beneath every app).
AttributeType = models.TextChoices(
    "AttributeType", [(member.name, member.value) for member in EngineAttributeType]
)


class Attribute(models.Model):
    """An attribute to extract. Only attributes with a prompt are scored."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="attributes")
    attribute_id = models.CharField(max_length=100)
    label = models.CharField(max_length=300)
    type = models.CharField(max_length=10, choices=AttributeType.choices)
    prompt = models.TextField(blank=True)
    # When uses_type_default is False, missing_default holds the gold value for an absent
    # annotation (JSON null allowed); otherwise the type's default applies (docs/semantics.md §2).
    uses_type_default = models.BooleanField(default=True)
    missing_default = models.JSONField(null=True, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["project", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "attribute_id"], name="attribute_id_unique_in_project"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.attribute_id} {self.label}"


class GoldKind(models.TextChoices):
    SPANS = "spans", "Spans"
    ATTRIBUTES = "attributes", "Attributes"


class GoldVersion(models.Model):
    """One state of a project's gold. A change makes a new version; scores name the version they used."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_versions")
    kind = models.CharField(max_length=20, choices=GoldKind.choices)
    number = models.PositiveIntegerField()
    source = models.CharField(max_length=500, blank=True, help_text="The uploaded file or path.")
    content_hash = models.CharField(
        max_length=64, help_text="Hash of the whole gold content of this version."
    )
    annotator = models.CharField(max_length=150, blank=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    counts = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["project", "kind", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "kind", "number"], name="gold_version_number_unique"),
            models.CheckConstraint(name="gold_version_number_positive", condition=Q(number__gte=1)),
        ]

    def __str__(self) -> str:
        return f"{self.project} {self.kind} gold v{self.number}"


class GoldVersionDocument(models.Model):
    """A document that a gold version covers, with the hash of its gold in that version.

    A version is a full snapshot: the documents listed here are its gold set, including documents
    whose gold is empty (a de-identification document with nothing to remove is still scored for
    false positives). The per-document hash lets an import tell "identical again" from "changed"
    without reading the gold rows themselves.
    """

    gold_version = models.ForeignKey(GoldVersion, on_delete=models.CASCADE, related_name="version_documents")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="gold_version_documents")
    content_hash = models.CharField(max_length=64, help_text="Hash of this document's gold in this version.")

    class Meta:
        ordering = ["gold_version", "document"]
        constraints = [
            models.UniqueConstraint(
                fields=["gold_version", "document"], name="gold_version_document_once_per_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.document_id} in gold version {self.gold_version_id}"


class GoldSpan(models.Model):
    gold_version = models.ForeignKey(GoldVersion, on_delete=models.CASCADE, related_name="spans")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="gold_spans")
    start = models.IntegerField(help_text="Code point offset, inclusive.")
    end = models.IntegerField(help_text="Code point offset, exclusive.")
    entity_type = models.CharField(max_length=100, help_text="Canonical type.")
    label = models.CharField(max_length=200, blank=True, help_text="The raw label, as annotated.")

    class Meta:
        ordering = ["document", "start", "end", "entity_type"]
        indexes = [models.Index(fields=["gold_version", "document"], name="gold_span_version_document")]
        constraints = [
            models.CheckConstraint(
                name="gold_span_offsets_valid", condition=Q(start__gte=0) & Q(start__lt=F("end"))
            ),
        ]

    def __str__(self) -> str:
        return f"{self.entity_type} [{self.start}:{self.end}] in {self.document_id}"


class GoldAttributeValue(models.Model):
    gold_version = models.ForeignKey(GoldVersion, on_delete=models.CASCADE, related_name="attribute_values")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="gold_attribute_values")
    attribute = models.ForeignKey(Attribute, on_delete=models.CASCADE, related_name="gold_values")
    output_data = models.JSONField(
        null=True, blank=True, help_text="The raw gold value, coerced when scored."
    )
    additional_text = models.TextField(blank=True)
    # EPPI ItemAttributeFullTextDetails: [{"text", "item_document_id", "item_arm"}]
    full_text_details = models.JSONField(default=list, blank=True)
    citation_page = models.CharField(max_length=50, blank=True)
    citation_highlight_text = models.TextField(blank=True)

    class Meta:
        ordering = ["document", "attribute"]
        constraints = [
            models.UniqueConstraint(
                fields=["gold_version", "document", "attribute"], name="gold_value_one_per_document_attribute"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.attribute_id} of {self.document_id}"


class JobKind(models.TextChoices):
    IMPORT = "import", "Import"
    SCORING = "scoring", "Scoring"
    EXPORT = "export", "Export"
    AGREEMENT = "agreement", "Agreement between annotators"
    PURGE = "purge", "Purge a project"


class JobState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class Job(models.Model):
    """A long piece of work done by a worker. The API reads this row, never the broker.

    It lives in `annotations`, the lowest app, because imports (here), scoring and exports (metrics)
    all use it and dependencies point only downwards.
    """

    kind = models.CharField(max_length=20, choices=JobKind.choices)
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs")
    # What the job works on, e.g. {"run_id": 7} or {"format": "cas", "label_map": {...}}.
    params = models.JSONField(default=dict, blank=True)
    input_file = models.FileField(upload_to="job-inputs/%Y/%m/", blank=True)
    state = models.CharField(max_length=20, choices=JobState.choices, default=JobState.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # A scoring's progress in chunks of documents (the unit a worker takes), beside its documents.
    chunks_done = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True, help_text="Counts and outcome.")
    warnings = models.JSONField(default=list, blank=True)
    errors = models.JSONField(default=list, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The outbox: when the task's message was last sent (null: never, e.g. the broker was down), and
    # when the worker running the job last proved it alive. The dispatcher reads both.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Set by each claim: only the worker holding the current claim may beat or finish the job, so a
    # worker that was given up for dead and comes back writes nothing.
    claim_token = models.CharField(max_length=32, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["project", "kind", "state"], name="job_project_kind_state"),
            # jobs_dispatch: the queued and running jobs, a handful among every job ever run.
            models.Index(
                fields=["state"],
                name="job_unfinished_state",
                condition=Q(state__in=["queued", "running"]),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                name="job_progress_within_total",
                condition=Q(progress_done__lte=F("progress_total")) | Q(progress_total=0),
            ),
        ]

    def __str__(self) -> str:
        return f"job {self.pk} {self.kind} {self.state}"


class ProjectPurge(models.Model):
    """The audit record of a project's purge: who asked, when, the slug and the counts, no content.

    It names the project by slug and id only, so it survives the purge it records (no foreign key
    to the project, whose rows it outlives).
    """

    slug = models.SlugField(max_length=100)
    project_id_purged = models.PositiveBigIntegerField(help_text="The id the project had.")
    requested_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept beside the key: the audit must still say who after that user is deleted.
    requested_by_username = models.CharField(max_length=150)
    requested_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Rows deleted per model ("annotations.Document": 120, ...) and files deleted.
    counts = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        return f"purge of {self.slug} by {self.requested_by_username}"
