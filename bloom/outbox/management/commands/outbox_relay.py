import time

from django.core.management.base import BaseCommand

from bloom.outbox.services import outbox_relay


class Command(BaseCommand):
    help = "Publish outbox messages a broker outage left pending (once, or forever with --forever)."

    def add_arguments(self, parser):
        parser.add_argument("--forever", action="store_true")
        parser.add_argument("--interval", type=float, default=5.0)

    def handle(self, *args, forever: bool, interval: float, **options):
        while True:
            sent = outbox_relay()
            if sent or not forever:
                self.stdout.write(f"outbox: published {sent} pending message(s)")
            if not forever:
                return
            time.sleep(interval)
