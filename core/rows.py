"""Model instances from the rows of a hand-written statement, for look-ups on every request.

The ORM builds and compiles a statement each time a queryset runs. The Bearer token look-up and
the learner look-up run on every learner API request, with statements that never change: they write
them once, and this turns their rows into the instances the ORM would have returned: the backend's and the
fields' converters applied as `SQLCompiler.apply_converters` applies them (SQLite hands datetimes
and UUIDs over as text), and fields not selected deferred, as with `.only()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Model

M = TypeVar("M", bound=Model)


def db_value(model: type[Model], name: str, value: Any) -> Any:
    """A parameter for a comparison with the field, prepared as the ORM prepares it (a UUID is text on SQLite)."""
    return model._meta.get_field(name).get_db_prep_value(value, connection)


def instance(model: type[M], names: Sequence[str], values: Sequence[Any]) -> M:
    """The instance for the values of `names` (attribute names, in select order)."""
    by_name = dict(zip(names, values, strict=True))
    fields = [f for f in model._meta.concrete_fields if f.attname in by_name]  # from_db wants the model's order
    converted = []
    for field in fields:
        value = by_name[field.attname]
        col = field.get_col(model._meta.db_table)
        for convert in connection.ops.get_db_converters(col) + col.get_db_converters(connection):
            value = convert(value, col, connection)
        converted.append(value)
    return model.from_db(connection.alias, [f.attname for f in fields], converted)
