"""A dependency-free SVG line chart for the admin dashboard (no CDN, no JavaScript)."""

from __future__ import annotations

from django.utils.html import escape

PALETTE = ["#2563eb", "#d97706", "#059669", "#dc2626"]


def line_chart_svg(series: dict[str, dict[int, float | None]], *, n_weeks: int, width: int = 640,
                   height: int = 260, y_label: str = "mean adherence") -> str:
    """`series`: label -> {week: value in [0, 1] or None}. Missing values break the line."""
    left, right, top, bottom = 48, 120, 16, 36
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(week: int) -> float:
        return left + (plot_w * (week - 1) / max(1, n_weeks - 1))

    def y(value: float) -> float:
        return top + plot_h * (1 - max(0.0, min(1.0, value)))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(y_label)} by study week and arm" font-family="sans-serif" font-size="11">'
    ]
    for tick in (0, 0.2, 0.4, 0.6, 0.8, 1.0):
        ty = y(tick)
        parts.append(f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_w}" y2="{ty:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end">{tick:.1f}</text>')
    for week in range(1, n_weeks + 1):
        parts.append(f'<text x="{x(week):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{week}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">study week</text>')
    for i, (label, points) in enumerate(sorted(series.items())):
        color = PALETTE[i % len(PALETTE)]
        segment: list[str] = []
        segments: list[list[str]] = []
        for week in range(1, n_weeks + 1):
            value = points.get(week)
            if value is None:
                if segment:
                    segments.append(segment)
                segment = []
                continue
            segment.append(f"{x(week):.1f},{y(value):.1f}")
            parts.append(f'<circle cx="{x(week):.1f}" cy="{y(value):.1f}" r="2.5" fill="{color}">'
                         f'<title>{escape(label)} week {week}: {value:.2f}</title></circle>')
        if segment:
            segments.append(segment)
        for seg in segments:
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(seg)}"/>')
        ly = top + 14 + 18 * i
        parts.append(f'<line x1="{left + plot_w + 12}" y1="{ly - 4}" x2="{left + plot_w + 32}" y2="{ly - 4}" '
                     f'stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{left + plot_w + 36}" y="{ly}">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
