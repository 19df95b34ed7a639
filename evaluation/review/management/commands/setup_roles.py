from django.core.management.base import BaseCommand

from evaluation.review.roles import setup_roles


class Command(BaseCommand):
    help = "Create or reset the staff groups auditor, researcher and admin (idempotent)."

    def handle(self, *args, **options) -> None:
        for name, info in setup_roles().items():
            line = f"{name}: {info['permissions']} permissions"
            if info["missing"]:
                line += f" (not found yet: {', '.join(info['missing'])})"
            self.stdout.write(line)
