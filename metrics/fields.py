"""A JSON column that keeps the order of keys.

PostgreSQL's jsonb sorts the keys of every object (shortest first), which turns a report written as
`precision, recall, f1` into `f1, recall, precision`. A report is read whole and never queried inside,
so it is stored as JSON text: what the engine wrote is what the API serves and the zip holds.
"""

from __future__ import annotations

import json

from django.db import models


class OrderedJSONField(models.TextField):
    description = "JSON stored as text, key order kept"

    def from_db_value(self, value, expression, connection):
        return None if value is None else json.loads(value)

    def to_python(self, value):
        if isinstance(value, str):
            return json.loads(value)
        return value

    def get_prep_value(self, value):
        return None if value is None else json.dumps(value, ensure_ascii=False)

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))
