"""Read-only memory admin: facts, summaries, entities with filters; the surprise review queue (a
proxy changelist of surprise facts next to the fact they conflict with); an entity graph per
learner (server-rendered table of weighted relations). Changes go through services, not forms."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse
from django.utils.html import format_html

from core.readonly_admin import ReadOnlyAdmin
from memory.models import Entity, Fact, FactHistory, Mention, Relation, Summary, SurpriseFact


class FactHistoryInline(admin.TabularInline):
    model = FactHistory
    extra = 0
    can_delete = False
    fields = ("at", "change", "service", "before", "after")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Fact)
class FactAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "fact_type", "short", "confidence", "tier", "archived", "surprise",
                    "hubness", "superseded_by_id", "valid_to", "access_count", "created_at", "last_accessed_at")
    list_filter = ("fact_type", "tier", "archived", "surprise", "source_agent")
    search_fields = ("content", "learner__display_name")
    raw_id_fields = ("learner", "source_message", "conflicts_with", "superseded_by", "summary")
    exclude = ("embedding",)
    inlines = [FactHistoryInline]
    list_select_related = ("learner",)
    show_full_result_count = False

    @admin.display(description="content")
    def short(self, obj: Fact) -> str:
        return obj.content[:100]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("embedding")


@admin.register(SurpriseFact)
class SurpriseReviewAdmin(ReadOnlyAdmin):
    """New facts flagged as conflicting with an older one. Nothing was overwritten: both are shown."""

    list_display = ("id", "learner", "content", "surprise_reason", "conflicting", "created_at")
    list_filter = ("surprise_reason",)
    search_fields = ("content",)
    list_select_related = ("learner", "conflicts_with")
    show_full_result_count = False
    exclude = ("embedding",)

    def get_queryset(self, request):
        return super().get_queryset(request).filter(surprise=True).select_related("conflicts_with", "learner") \
            .defer("embedding", "conflicts_with__embedding")

    actions = ["new_replaces_old", "keep_both", "reject_new"]

    def has_resolve_permission(self, request: HttpRequest) -> bool:
        # Resolving rewrites validity (never content): editors of facts only, not auditors.
        return request.user.has_perm("memory.change_fact")

    def _resolve(self, request: HttpRequest, queryset, resolution: str) -> None:
        from memory.revisions import surprise_resolve
        from memory.rules import ApplicationError

        done, failed = 0, []
        for fact_id in queryset.values_list("pk", flat=True):
            try:
                surprise_resolve(fact_id=fact_id, resolution=resolution, service="memory.admin")
                done += 1
            except ApplicationError as exc:
                failed.append(f"#{fact_id}: {exc}")
        self.message_user(request, f"{done} surprise(s) resolved: {resolution.replace('_', ' ')}.")
        if failed:
            self.message_user(request, "Not resolved: " + "; ".join(failed), level="warning")

    @admin.action(description="New replaces old (the older fact is superseded)", permissions=["resolve"])
    def new_replaces_old(self, request, queryset):
        self._resolve(request, queryset, "new_replaces_old")

    @admin.action(description="Keep both (no real conflict)", permissions=["resolve"])
    def keep_both(self, request, queryset):
        self._resolve(request, queryset, "keep_both")

    @admin.action(description="Reject new (the new fact is superseded by the older one)", permissions=["resolve"])
    def reject_new(self, request, queryset):
        self._resolve(request, queryset, "reject_new")

    @admin.display(description="conflicts with (older fact)")
    def conflicting(self, obj: Fact) -> str:
        old = obj.conflicts_with
        if old is None:
            return "—"
        url = reverse("admin:memory_fact_change", args=[old.pk])
        return format_html('<a href="{}">#{}</a> {}', url, old.pk, old.content[:100])


@admin.register(Summary)
class SummaryAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "period_start", "period_end", "fact_count", "model", "created_at")
    list_filter = ("model",)
    search_fields = ("text",)
    raw_id_fields = ("learner",)
    list_select_related = ("learner",)


class MentionInline(admin.TabularInline):
    model = Mention
    extra = 0
    can_delete = False
    fields = ("fact", "start", "end", "text", "score")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Entity)
class EntityAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "display_name", "canonical_name", "label", "mention_count", "graph_link")
    list_filter = ("label",)
    search_fields = ("canonical_name", "display_name")
    raw_id_fields = ("learner",)
    list_select_related = ("learner",)
    inlines = [MentionInline]

    def get_urls(self):
        return [path("graph/<int:learner_id>/", self.admin_site.admin_view(self.graph_view),
                     name="memory_entity_graph"), *super().get_urls()]

    @admin.display(description="graph")
    def graph_link(self, obj: Entity) -> str:
        return format_html('<a href="{}">graph</a>', reverse("admin:memory_entity_graph", args=[obj.learner_id]))

    def graph_view(self, request: HttpRequest, learner_id: int) -> HttpResponse:
        entities = list(Entity.objects.filter(learner_id=learner_id).annotate(n=Count("mentions"))
                        .order_by("-n", "canonical_name")[:200])
        relations = list(Relation.objects.filter(learner_id=learner_id)
                         .select_related("entity_a", "entity_b").order_by("-weight")[:500])
        context = {**self.admin_site.each_context(request), "title": f"Entity graph of learner {learner_id}",
                   "entities": entities, "relations": relations, "learner_id": learner_id,
                   "opts": self.model._meta}
        return render(request, "admin/memory/entity_graph.html", context)


@admin.register(Relation)
class RelationAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "entity_a", "kind", "entity_b", "weight", "evidence_fact")
    list_filter = ("kind",)
    search_fields = ("entity_a__canonical_name", "entity_b__canonical_name")
    raw_id_fields = ("learner", "entity_a", "entity_b", "evidence_fact")
    list_select_related = ("learner", "entity_a", "entity_b", "evidence_fact")
