"""Job warnings and errors stored as bare strings (scoring did so) become problem dicts.

The API reads one shape (`ImportProblem.as_dict`); a string made `/jobs/{id}/` answer 500. A stored
traceback is not carried over: tracebacks belong in the worker log, never in a response.
"""

from django.db import migrations

PROBLEM_KEYS = ("message", "file", "line", "document_id", "field")
TRACEBACK_MARK = "Traceback (most recent call last)"


def _shaped(problem):
    if isinstance(problem, dict):
        shaped = {key: problem.get(key) for key in PROBLEM_KEYS}
        shaped["message"] = str(shaped["message"] or "")
        if problem.get("documents"):
            shaped["documents"] = list(problem["documents"])
        return shaped
    message = str(problem)
    if TRACEBACK_MARK in message:
        message = "internal error; see the worker log"
    return {"message": message, "file": None, "line": None, "document_id": None, "field": None}


def problems_as_dicts(apps, schema_editor):
    Job = apps.get_model("annotations", "Job")
    changed = []
    for job in Job.objects.only("id", "warnings", "errors").iterator(chunk_size=500):
        warnings = [_shaped(problem) for problem in job.warnings or []]
        errors = [_shaped(problem) for problem in job.errors or []]
        if warnings != job.warnings or errors != job.errors:
            job.warnings, job.errors = warnings, errors
            changed.append(job)
    Job.objects.bulk_update(changed, ["warnings", "errors"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("annotations", "0002_goldversiondocument")]

    operations = [migrations.RunPython(problems_as_dicts, migrations.RunPython.noop)]
