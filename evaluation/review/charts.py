"""A small server-rendered SVG: defects per week, stacked by root-cause layer. No JavaScript, no
chart library; every label goes through html.escape, so the result is safe to mark_safe."""

from __future__ import annotations

import datetime as dt
from html import escape

LAYER_COLOURS = {
    "architecture": "#b03a2e",
    "prompt": "#2e86c1",
    "data_model": "#229954",
    "model_choice": "#d68910",
}


def weekly_stacked_svg(*, weeks: list[dt.date], rows: list[dict], layer_labels: dict[str, str],
                       width: int = 640, height: int = 220) -> str:
    left, bottom, top, right = 36, 34, 12, 150
    plot_w, plot_h = width - left - right, height - top - bottom
    per_layer = {layer: [0] * len(weeks) for layer in LAYER_COLOURS}
    for row in rows:
        series = per_layer.setdefault(row["layer"], [0] * len(weeks))
        for i, n in enumerate(row["counts"]):
            series[i] += n
    totals = [sum(series[i] for series in per_layer.values()) for i in range(len(weeks))]
    peak = max([*totals, 1])
    slot = plot_w / max(len(weeks), 1)
    bar_w = max(slot * 0.7, 2)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="Defects per week by root-cause layer" class="defect-chart">',
             f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#888"/>',
             f'<text x="{left - 4}" y="{top + 8}" font-size="10" text-anchor="end">{peak}</text>',
             f'<text x="{left - 4}" y="{top + plot_h}" font-size="10" text-anchor="end">0</text>']
    for i, week in enumerate(weeks):
        x = left + i * slot + (slot - bar_w) / 2
        y = top + plot_h
        for layer, series in per_layer.items():
            n = series[i]
            if not n:
                continue
            h = plot_h * n / peak
            y -= h
            colour = LAYER_COLOURS.get(layer, "#777")
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" fill="{colour}">'
                         f'<title>{escape(week.isoformat())} {escape(layer_labels.get(layer, layer))}: {n}'
                         f'</title></rect>')
        if i % max(1, len(weeks) // 6) == 0 or i == len(weeks) - 1:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h + 14}" font-size="9" '
                         f'text-anchor="middle">{escape(week.strftime("%d %b"))}</text>')
    for j, layer in enumerate(per_layer):
        ly = top + 6 + j * 16
        parts.append(f'<rect x="{width - right + 12}" y="{ly}" width="10" height="10" '
                     f'fill="{LAYER_COLOURS.get(layer, "#777")}"/>')
        parts.append(f'<text x="{width - right + 26}" y="{ly + 9}" font-size="11">'
                     f'{escape(layer_labels.get(layer, layer))}</text>')
    parts.append("</svg>")
    return "".join(parts)
