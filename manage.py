#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")
    # Catch Django's base class, not core.env.ConfigError: importing anything under `bloom`
    # runs bloom/__init__.py, which loads the Celery app and thus the settings, so a bad variable
    # would raise before an `except ConfigError` could even be set up.
    from django.core.exceptions import ImproperlyConfigured

    try:
        from django.core.management import execute_from_command_line

        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # One clear line naming the variable, not a traceback.
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(f"bloom: configuration error: {first_line}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
