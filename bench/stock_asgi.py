"""Django's stock ASGIHandler for the project, for benchmarks only (bench/bench_memory_load.py):
what bloom.asgi served before its one-hop handler (bloom/asgi_handler.py), to compare the two over
real HTTP. Not for deployment: bloom.asgi:application is the application."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bloom.settings")

from django.core.asgi import get_asgi_application

application = get_asgi_application()
