"""Webhooks: URLs a project's managers register, called when a job of the project ends; and every
delivery attempt, kept for the managers (API) and the operators (admin) to see what happened."""

from __future__ import annotations

from django.conf import settings as django_settings
from django.core.validators import URLValidator
from django.db import models

from annotations.models import Job, Project


class Webhook(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500, validators=[URLValidator(schemes=["http", "https"])])
    description = models.CharField(max_length=200, blank=True)
    # Kept in clear, unlike API tokens (stored as hashes): the server signs every delivery with an
    # HMAC keyed by this secret, and an HMAC cannot be computed from a hash of its key.
    secret = models.CharField(max_length=100, editable=False)
    is_active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.url} ({self.project.slug})"


class WebhookDelivery(models.Model):
    """One attempt to deliver one event to one webhook: what was sent and what came back."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=50)
    # Which event this attempt belongs to: the attempts of one event share it.
    event_id = models.CharField(max_length=32, db_index=True)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    attempt = models.PositiveSmallIntegerField()
    payload = models.JSONField(help_text="The body sent, as JSON.")
    status_code = models.PositiveSmallIntegerField(null=True, blank=True, help_text="None: no answer.")
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    succeeded = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["webhook", "-id"], name="webhook_delivery_latest")]

    def __str__(self) -> str:
        return f"{self.event} #{self.attempt} -> {self.status_code or self.error[:40]}"
