"""Who may read what learners wrote.

One permission, `review.view_message_text`, is the switch for seeing message text, fact and summary
text, entity names, telemetry prompt/response content and staff notes that quote them. Everyone
else (researchers in particular) still sees ids, counts, timings and labels, never the words.

The policy lives here, in one table, rather than in each admin: an admin opts in by mixing in
`MessageTextAdminMixin` (or `TextGuardedAdminMixin`, which also guards its custom views), and the
mixin looks the model up in `TEXT_FIELDS`. A test walks every
registered ModelAdmin and fails if a model listed here is served by an admin without the mixin.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import models
from django.urls import URLPattern

TEXT_PERMISSION = "review.view_message_text"

# model label (lower case, concrete model) -> fields whose value is, or quotes, learner/coach text.
TEXT_FIELDS: dict[str, frozenset[str]] = {
    "identity.message": frozenset({"content"}),
    "coaching.turn": frozenset({"context_snapshot", "tool_calls", "guard_events", "offered_options", "code_text",
                                "reading"}),
    "coaching.learnerprofile": frozenset({"primary_goal"}),
    "memory.fact": frozenset({"content"}),
    "memory.summary": frozenset({"text"}),
    "memory.mention": frozenset({"text"}),
    "memory.entity": frozenset({"canonical_name", "display_name"}),
    "memory.facthistory": frozenset({"before", "after"}),
    "telemetry.modelcall": frozenset({"prompt_content", "response_content", "error_message"}),
    "evaluation.transcript": frozenset({"learner_turns", "memory_snapshot", "prior_messages", "starting_profile",
                                        "expected_behaviour"}),
    "evaluation.replyresult": frozenset({"learner_text", "reply_text", "tool_calls", "raw_texts", "guard_events",
                                         "routing_reason", "checks", "raw_checks"}),
    # The judge's reasons quote the reply it scored.
    "evaluation.judgescore": frozenset({"reason"}),
    "review.defecttag": frozenset({"note"}),
}

# Models whose __str__ contains text: a foreign key to one of them renders that text in list
# columns, read-only widgets and filters, so such keys are hidden too.
STR_LEAKS_TEXT: frozenset[str] = frozenset({"identity.message", "memory.fact", "memory.mention", "memory.entity"})

# list_display methods of other apps' admins that render text (the scan test finds new ones).
EXTRA_TEXT_DISPLAY: dict[str, frozenset[str]] = {
    "memory.fact": frozenset({"short", "conflicting"}),
}

# Names that, anywhere in a lookup path, mean "searching this searches text". Searching is a leak
# as well: a result count answers "did anyone write X?".
TEXT_LOOKUP_NAMES: frozenset[str] = frozenset(
    name for names in TEXT_FIELDS.values() for name in names
) | {"learner_message", "reply", "source_message", "message"}


def can_view_text(user: Any) -> bool:
    return bool(user is not None and user.is_active and user.has_perm(TEXT_PERMISSION))


def _label(model: type[models.Model]) -> str:
    return model._meta.concrete_model._meta.label_lower


def hidden_fields_for(model: type[models.Model]) -> frozenset[str]:
    """Text fields plus foreign keys into models whose string form is text."""
    hidden = set(TEXT_FIELDS.get(_label(model), frozenset()))
    for field in model._meta.get_fields():
        if getattr(field, "concrete", False) and field.is_relation and field.related_model is not None \
                and _label(field.related_model) in STR_LEAKS_TEXT:
            hidden.add(field.name)
    return frozenset(hidden)


def needs_redaction(model_admin: Any) -> bool:
    """An admin shows text if its model, or the model of one of its inlines, holds text."""
    if hidden_fields_for(model_admin.model):
        return True
    return any(hidden_fields_for(inline.model) for inline in getattr(model_admin, "inlines", ()))


def _lookup_is_text(lookup: str) -> bool:
    return any(part in TEXT_LOOKUP_NAMES for part in lookup.lstrip("^=@").split("__"))


class _RedactedObject:
    """Stands in for `original`/`object` in admin templates: keeps the pk for URLs, drops __str__."""

    def __init__(self, obj: models.Model) -> None:
        self.pk = obj.pk
        self._meta = obj._meta
        self._label = f"{obj._meta.verbose_name} #{obj.pk}"

    def __str__(self) -> str:
        return self._label


class MessageTextAdminMixin:
    """Hide text from users without `review.view_message_text`: list columns, search, filters,
    change-form fields, inlines, breadcrumbs/titles and autocomplete results.

    `text_display` names extra list_display entries (methods) that render text."""

    text_display: tuple[str, ...] = ()

    # -- helpers ---------------------------------------------------------------------------------
    def _hides_text(self, request) -> bool:
        return not can_view_text(request.user)

    def _hidden(self) -> frozenset[str]:
        return (hidden_fields_for(self.model) | frozenset(self.text_display)
                | EXTRA_TEXT_DISPLAY.get(_label(self.model), frozenset()))

    # -- changelist ------------------------------------------------------------------------------
    def get_list_display(self, request):
        columns = super().get_list_display(request)
        if not self._hides_text(request):
            return columns
        hidden = self._hidden()
        kept = [c for c in columns if not (isinstance(c, str) and (c in hidden or _lookup_is_text(c)))]
        return kept or ["pk"]

    def get_list_display_links(self, request, list_display):
        links = super().get_list_display_links(request, list_display)
        if links and self._hides_text(request):
            links = [link for link in links if link in list_display] or list(list_display[:1])
        return links

    def get_search_fields(self, request):
        fields = super().get_search_fields(request)
        if not self._hides_text(request):
            return fields
        return [f for f in fields if not _lookup_is_text(f)]

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        if not self._hides_text(request):
            return filters
        hidden = self._hidden()
        return [f for f in filters if not (isinstance(f, str) and (f in hidden or _lookup_is_text(f)))]

    # -- change form -----------------------------------------------------------------------------
    def get_exclude(self, request, obj=None):
        exclude = super().get_exclude(request, obj)
        if not self._hides_text(request):
            return exclude
        return [*(exclude or ()), *sorted(hidden_fields_for(self.model))]

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        if not self._hides_text(request):
            return fields
        hidden = self._hidden()
        return [f for f in fields if not (isinstance(f, str) and f in hidden)]

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if not self._hides_text(request):
            return fields
        hidden = self._hidden()
        return [f for f in fields if not (isinstance(f, str) and f in hidden)]

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if not self._hides_text(request):
            return fieldsets
        hidden = self._hidden()
        redacted = []
        for name, options in fieldsets:
            fields = [f for f in options.get("fields", ()) if isinstance(f, (list, tuple)) or f not in hidden]
            fields = [tuple(x for x in f if x not in hidden) if isinstance(f, (list, tuple)) else f for f in fields]
            redacted.append((name, {**options, "fields": [f for f in fields if f]}))
        return redacted

    def get_inline_instances(self, request, obj=None):
        inlines = super().get_inline_instances(request, obj)
        if not self._hides_text(request):
            return inlines
        # Only inlines that redact themselves may show rows to someone without the permission.
        return [inline for inline in inlines if isinstance(inline, MessageTextAdminMixin)]

    # -- object titles ---------------------------------------------------------------------------
    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and self._hides_text(request) and _label(self.model) in STR_LEAKS_TEXT:
            context = {**context, "original": _RedactedObject(obj), "subtitle": str(_RedactedObject(obj))}
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def history_view(self, request, object_id, extra_context=None):
        if self._hides_text(request) and _label(self.model) in STR_LEAKS_TEXT:
            obj = self.get_object(request, object_id)
            if obj is not None:
                redacted = _RedactedObject(obj)
                extra_context = {**(extra_context or {}), "object": redacted,
                                 "title": f"Change history: {redacted}"}
        return super().history_view(request, object_id, extra_context=extra_context)

    def autocomplete_view(self, request):
        # Autocomplete answers with str(obj), which is text for these models.
        if self._hides_text(request) and _label(self.model) in STR_LEAKS_TEXT:
            raise PermissionDenied
        return super().autocomplete_view(request)



# Standard ModelAdmin views; anything else an admin adds to get_urls is a custom view.
_STANDARD_VIEWS = frozenset({"changelist", "add", "history", "delete", "change", "autocomplete"})


class TextGuardedAdminMixin(MessageTextAdminMixin):
    """For admins written before the text permission existed (other apps' admins, evaluation's):
    the redaction above, and their custom views (trace pages, graphs, reports…) also require the
    view permission and the text permission, since nothing in those views hides text."""

    def get_urls(self):
        opts = self.model._meta
        prefix = f"{opts.app_label}_{opts.model_name}_"
        guarded = []
        for pattern in super().get_urls():
            name = pattern.name or ""
            if isinstance(pattern, URLPattern) and name and not (
                    name.startswith(prefix) and name[len(prefix):] in _STANDARD_VIEWS):
                pattern = URLPattern(pattern.pattern, _text_guarded(self, pattern.callback), pattern.default_args,
                                     pattern.name)
            guarded.append(pattern)
        return guarded


def _text_guarded(model_admin: Any, view: Any) -> Any:
    def guarded_view(request, *args, **kwargs):
        # Anonymous and non-staff users fall through to admin_view, which sends them to log in.
        if model_admin.admin_site.has_permission(request) and not (
                model_admin.has_view_permission(request) and can_view_text(request.user)):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    guarded_view.__name__ = getattr(view, "__name__", "guarded_view")
    # Keep the csrf/cache attributes admin_view put on the original.
    guarded_view.__dict__.update(getattr(view, "__dict__", {}))
    return guarded_view
