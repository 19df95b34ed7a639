from django.contrib import admin

from coaching import services
from coaching.models import (
    ApiClient,
    ApiToken,
    CheckIn,
    CompletionSource,
    Conversation,
    Learner,
    LearnerProfile,
    Message,
    Plan,
    PlannedSession,
    Turn,
)


class ApiTokenInline(admin.TabularInline):
    model = ApiToken
    extra = 0
    fields = ["name", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]  # the hash is never shown


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "is_active", "created_at"]
    list_filter = ["is_active", "created_at"]
    search_fields = ["name"]
    list_select_related = ["owner"]
    inlines = [ApiTokenInline]


class ProfileInline(admin.StackedInline):
    model = LearnerProfile
    extra = 0


@admin.register(Learner)
class LearnerAdmin(admin.ModelAdmin):
    list_display = ["research_id", "display_name", "client", "study_arm", "timezone", "created_at"]
    list_filter = ["study_arm", "client"]
    search_fields = ["research_id", "display_name"]
    list_select_related = ["client"]
    inlines = [ProfileInline]


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ["created_at", "role", "specialist", "status", "content", "trace_id"]
    readonly_fields = fields


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["id", "learner", "created_at"]
    list_filter = ["created_at", "learner__study_arm"]
    search_fields = ["=id", "learner__display_name"]
    list_select_related = ["learner"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["id", "conversation", "role", "specialist", "status", "created_at"]
    list_filter = ["role", "status", "specialist"]
    search_fields = ["trace_id", "idempotency_key"]
    list_select_related = ["conversation__learner"]  # Conversation.__str__ names the learner
    show_full_result_count = False


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ["trace_id", "specialist", "rule", "outcome", "model_calls", "created_at"]
    list_filter = ["specialist", "rule", "outcome"]
    search_fields = ["trace_id"]
    show_full_result_count = False
    readonly_fields = [f.name for f in Turn._meta.fields]


class SessionInline(admin.TabularInline):
    model = PlannedSession
    extra = 0
    # Completion follows the status and is set by the status service, never typed in by hand; the
    # time moves through services.session_move (audited), not a form field.
    readonly_fields = ["planned_start", "duration_minutes", "completed_at", "completion_source", "replaced_by"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # a planned session is never deleted: set its status to cancelled (audited)


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["learner", "week_start", "created_at"]
    list_filter = ["week_start"]
    search_fields = ["learner__display_name"]
    list_select_related = ["learner"]
    inlines = [SessionInline]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # deleting a plan would delete its sessions: history is kept (erasure aside)

    def save_formset(self, request, form, formset, change):
        """A status staff change in the inline goes through the one audited writer (source staff);
        the other fields save as usual."""
        if formset.model is not PlannedSession:
            return super().save_formset(request, form, formset, change)
        wanted = {}
        for session_form in formset.forms:
            session = session_form.instance
            if session.pk and "status" in session_form.changed_data:
                wanted[session.pk] = session_form.cleaned_data["status"]
                session.status = PlannedSession.objects.get(pk=session.pk).status  # saved below, audited
        super().save_formset(request, form, formset, change)
        for pk, status in wanted.items():
            services.session_status_set(session=PlannedSession.objects.get(pk=pk), to_status=status,
                                        source=services.StatusSource.STAFF, completion_source=CompletionSource.STAFF,
                                        detail=f"admin: {request.user.get_username()}")


@admin.register(CheckIn)
class CheckInAdmin(admin.ModelAdmin):
    list_display = ["id", "learner", "outcome", "session", "created_at"]
    list_filter = ["outcome", "created_at"]
    search_fields = ["learner__display_name"]
    list_select_related = ["learner", "session"]
    raw_id_fields = ["learner", "session", "message"]
