from django.contrib import admin

from core.outbox.models import OutboxMessage


@admin.register(OutboxMessage)
class OutboxMessageAdmin(admin.ModelAdmin):
    list_display = ("id", "task_name", "queue", "created_at", "sent_at", "attempts")
    list_filter = ("queue", ("sent_at", admin.EmptyFieldListFilter))
    search_fields = ("task_name", "dedup_key")
    show_full_result_count = False
    readonly_fields = [f.name for f in OutboxMessage._meta.fields]

    def has_add_permission(self, request):
        return False
