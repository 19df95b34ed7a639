import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")

# Django's base class: importing core.env would run bloom/__init__.py, which loads the settings
# (through the Celery app) before the try below could catch a bad variable.
from django.core.exceptions import ImproperlyConfigured as ConfigError

try:
    from django.core.asgi import get_asgi_application

    application = get_asgi_application()
except ConfigError as exc:
    print(f"bloom: configuration error: {exc}", file=sys.stderr)
    raise SystemExit(2) from None
