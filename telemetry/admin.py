"""Read-only admin for model calls: list with filters/search, a per-trace drill-down (calls in
order with their loop index) and a server-rendered SVG chart of latency and tokens per model."""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from core.errors import ApplicationError
from core.readonly_admin import ReadOnlyAdmin
from telemetry import selectors
from telemetry.charts import latency_and_token_charts
from telemetry.models import ModelCall


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnlyAdmin):
    # Deleting rows goes through the reset endpoint (its own permission + confirmation).
    list_display = ("created_at", "operation", "provider", "request_model", "status", "duration_ms_display",
                    "input_tokens", "output_tokens", "agent", "loop_iteration", "trace_link")
    list_filter = ("operation", "status", "provider", "request_model", "agent", "created_at")
    search_fields = ("=call_id", "=trace_id", "request_model", "error_type", "error_message", "agent", "service")
    date_hierarchy = "created_at"
    show_full_result_count = False  # COUNT(*) over millions of rows on every page load is not worth it
    list_per_page = 100
    ordering = ("-created_at",)
    change_list_template = "admin/telemetry/modelcall/change_list.html"

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in ModelCall._meta.fields]

    @admin.display(description="duration (ms)", ordering="duration_ms")
    def duration_ms_display(self, obj: ModelCall) -> str:
        return "" if obj.duration_ms is None else f"{obj.duration_ms:,.0f}"

    @admin.display(description="trace")
    def trace_link(self, obj: ModelCall):
        if not obj.trace_id:
            return ""
        url = reverse("admin:telemetry_modelcall_trace", args=[obj.trace_id])
        return format_html('<a href="{}">{}…</a>', url, obj.trace_id[:8])

    def get_urls(self):
        custom = [
            path("trace/<str:trace_id>/", self.admin_site.admin_view(self.trace_view),
                 name="telemetry_modelcall_trace"),
            path("chart/", self.admin_site.admin_view(self.chart_view), name="telemetry_modelcall_chart"),
        ]
        return custom + super().get_urls()

    def _check_view(self, request) -> None:
        if not self.has_view_permission(request):
            raise PermissionDenied

    def trace_view(self, request, trace_id: str):
        self._check_view(request)
        calls = selectors.trace_calls(trace_id=trace_id)
        depth: dict[str, int] = {}
        rows = []
        for call in calls:
            depth[call.call_id] = depth.get(call.parent_call_id, -1) + 1 if call.parent_call_id in depth else 0
            rows.append({"call": call, "indent": depth[call.call_id] * 24})
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "title": f"Trace {trace_id}",
                   "trace_id": trace_id, "rows": rows,
                   "total_ms": sum(c.duration_ms or 0 for c in calls),
                   "total_in": sum(c.input_tokens or 0 for c in calls),
                   "total_out": sum(c.output_tokens or 0 for c in calls)}
        return TemplateResponse(request, "admin/telemetry/modelcall/trace.html", context)

    def chart_view(self, request):
        self._check_view(request)
        raw = request.GET.get("window", "24h")
        try:
            window = selectors.parse_window(raw)
            error = ""
        except ApplicationError as exc:
            window, error, raw = selectors.parse_window("24h"), str(exc), "24h"
        rows = selectors.call_timeseries(window=window)
        charts = latency_and_token_charts(rows)
        context = {**self.admin_site.each_context(request), "opts": self.model._meta,
                   "title": "Model calls: latency and tokens", "window": raw, "error": error,
                   "windows": ("1h", "24h", "7d", "30d"),
                   "latency_svg": mark_safe(charts["latency"]),  # built with html.escape() in telemetry.charts
                   "tokens_svg": mark_safe(charts["tokens"]),
                   "aggregates": selectors.call_aggregates(window=window)}
        return TemplateResponse(request, "admin/telemetry/modelcall/chart.html", context)
