"""/health/: is the database answering, is the broker reachable, does a worker answer?

200 when everything the configuration needs is up; 503 otherwise. In the embedded default (no
broker) tasks run in-process, so the broker and worker are reported as "in-process" and count as up.

Anyone may ask (load balancers, monitors), but only a signed-in staff user sees the details (error
messages, worker names, database vendor): they describe the deployment. Others get "ok" or "fail"
per component.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from kombu import Connection


def _check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return {"ok": True, "vendor": connection.vendor}
    except Exception as error:  # any failure means "down"; the message helps the operator
        return {"ok": False, "error": str(error)}


def _check_broker_and_worker() -> tuple[dict, dict]:
    if not settings.CELERY_BROKER_URL:
        return {"ok": True, "mode": "in-process"}, {"ok": True, "mode": "in-process"}
    from evalproject.celery import app

    try:
        # A fresh connection to the configured URL: a pooled one could hide a broker that went away.
        with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        broker = {"ok": True}
    except Exception as error:
        return {"ok": False, "error": str(error)}, {"ok": False, "error": "broker unreachable"}
    try:
        replies = app.control.ping(timeout=1.0) or []
    except Exception as error:
        return broker, {"ok": False, "error": str(error)}
    workers = sorted(name for reply in replies for name in reply)
    if not workers:
        return broker, {"ok": False, "error": "no worker answered within 1 s", "workers": []}
    return broker, {"ok": True, "workers": workers}


def health(request):
    database = _check_database()
    broker, worker = _check_broker_and_worker()
    ok = database["ok"] and broker["ok"] and worker["ok"]
    components = {"database": database, "broker": broker, "worker": worker}
    if not request.user.is_staff:
        components = {name: "ok" if state["ok"] else "fail" for name, state in components.items()}
    body = {"status": "ok" if ok else "unavailable", **components}
    return JsonResponse(body, status=200 if ok else 503)
