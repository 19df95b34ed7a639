import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")

# Django's base class: importing core.env would run bloom/__init__.py, which loads the settings
# (through the Celery app) before the try below could catch a bad variable.
from django.core.exceptions import ImproperlyConfigured as ConfigError

try:
    import django

    django.setup(set_prefix=False)  # what django.core.asgi.get_asgi_application does first
    from bloom.asgi_handler import OneHopASGIHandler

    application = OneHopASGIHandler()
except ConfigError as exc:
    print(f"bloom: configuration error: {exc}", file=sys.stderr)
    raise SystemExit(2) from None
