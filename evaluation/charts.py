"""Small server-rendered SVG bar charts for the admin report (no JavaScript, no chart library)."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def bar_chart(rows: list[tuple[str, float | None, float | None]], *, max_value: float, width: int = 420,
              bar_height: int = 16, label_width: int = 190, fmt: str = "{:.2f}") -> SafeString:
    """Horizontal bars. Each row: (label, value, optional second value drawn as a thin marker,
    e.g. the raw-output rate behind the guard)."""
    gap = 6
    plot = width - label_width - 50
    height = len(rows) * (bar_height + gap) + gap
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'style="font:11px sans-serif">']
    for i, (label, value, marker) in enumerate(rows):
        y = gap + i * (bar_height + gap)
        v = max(0.0, min(float(value or 0.0), max_value))
        w = int(plot * v / max_value) if max_value else 0
        parts.append(f'<text x="0" y="{y + bar_height - 4}">{escape(label)}</text>')
        parts.append(f'<rect x="{label_width}" y="{y}" width="{plot}" height="{bar_height}" fill="#eee"/>')
        parts.append(f'<rect x="{label_width}" y="{y}" width="{w}" height="{bar_height}" fill="#417690"/>')
        if marker is not None:
            mx = label_width + int(plot * max(0.0, min(float(marker), max_value)) / max_value)
            parts.append(f'<rect x="{mx - 1}" y="{y - 2}" width="3" height="{bar_height + 4}" fill="#ba2121"/>')
        text = "—" if value is None else fmt.format(value)
        parts.append(f'<text x="{label_width + plot + 6}" y="{y + bar_height - 4}">{escape(text)}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))
