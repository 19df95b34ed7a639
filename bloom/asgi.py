import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")

from bloom.config import ConfigError  # noqa: E402

try:
    from django.core.asgi import get_asgi_application

    application = get_asgi_application()
except ConfigError as exc:
    print(f"bloom: configuration error: {exc}", file=sys.stderr)
    raise SystemExit(2) from None
