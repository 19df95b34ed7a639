import logging
import time

from django.core.management.base import BaseCommand
from django.db import DatabaseError, close_old_connections

from core.outbox.services import outbox_relay

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Publish outbox messages a broker outage left pending (once, or forever with --forever)."

    def add_arguments(self, parser):
        parser.add_argument("--forever", action="store_true")
        parser.add_argument("--interval", type=float, default=5.0)

    def handle(self, *args, forever: bool, interval: float, **options):
        while True:
            # A long-running loop has no request cycle: recycle broken/old connections here, so a
            # PostgreSQL restart (or a terminated backend) is survived like in the web process.
            close_old_connections()
            try:
                sent = outbox_relay()
            except DatabaseError as exc:
                if not forever:
                    raise
                logger.warning("outbox relay: database unavailable (%s); retrying", exc)
                sent = 0
            if sent or not forever:
                self.stdout.write(f"outbox: published {sent} pending message(s)")
            if not forever:
                return
            time.sleep(interval)
