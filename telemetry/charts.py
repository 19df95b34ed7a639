"""Server-rendered SVG line charts for the admin (no JavaScript, no CDN)."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def line_chart(series: dict[str, list[tuple[datetime, float]]], *, title: str, unit: str,
               width: int = 760, height: int = 240) -> str:
    """One SVG with a line per series name; x = time, y = value. Empty input → a labelled box."""
    pad_l, pad_r, pad_t, pad_b = 60, 170, 28, 36
    points = [p for values in series.values() for p in values if p[1] is not None]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{escape(title)}" style="background:#fff;border:1px solid #ddd">',
             f'<text x="{pad_l}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>']
    if not points:
        parts.append(f'<text x="{pad_l}" y="{height // 2}" font-size="12" fill="#888">no data in this window</text>')
        return "".join(parts) + "</svg>"
    t0 = min(p[0] for p in points).timestamp()
    t1 = max(p[0] for p in points).timestamp()
    vmax = max(p[1] for p in points) or 1.0
    span = (t1 - t0) or 1.0
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b

    def xy(t: datetime, v: float) -> tuple[float, float]:
        x = pad_l + (t.timestamp() - t0) / span * plot_w if t1 > t0 else pad_l + plot_w / 2
        return x, pad_t + plot_h - (v / vmax) * plot_h

    for i in range(5):  # horizontal grid with labels
        v = vmax * i / 4
        y = pad_t + plot_h - plot_h * i / 4
        parts.append(f'<line x1="{pad_l}" x2="{pad_l + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{pad_l - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{v:,.0f}</text>')
    parts.append(f'<text x="8" y="{pad_t + plot_h / 2:.0f}" font-size="10" '
                 f'transform="rotate(-90 8,{pad_t + plot_h / 2:.0f})">{escape(unit)}</text>')
    for label, t in ((min(p[0] for p in points), "start"), (max(p[0] for p in points), "end")):
        x, _ = xy(label, 0)
        parts.append(f'<text x="{x:.1f}" y="{height - 12}" font-size="10" text-anchor="{t}">'
                     f'{escape(label.strftime("%Y-%m-%d %H:%M"))}</text>')
    for n, (name, values) in enumerate(sorted(series.items())):
        color = PALETTE[n % len(PALETTE)]
        coords = [xy(t, v) for t, v in sorted(values) if v is not None]
        if len(coords) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        for x, y in coords:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color}"/>')
        ly = pad_t + 14 * n
        parts.append(f'<rect x="{width - pad_r + 10}" y="{ly}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{width - pad_r + 24}" y="{ly + 9}" font-size="10">{escape(name[:26])}</text>')
    return "".join(parts) + "</svg>"


def latency_and_token_charts(rows: list[dict[str, Any]]) -> dict[str, str]:
    latency: dict[str, list[tuple[datetime, float]]] = {}
    tokens: dict[str, list[tuple[datetime, float]]] = {}
    for r in rows:
        model = r["request_model"]
        latency.setdefault(f"{model} p50", []).append((r["bucket"], r["p50_ms"]))
        latency.setdefault(f"{model} p95", []).append((r["bucket"], r["p95_ms"]))
        tokens.setdefault(f"{model} in", []).append((r["bucket"], float(r["input_tokens"])))
        tokens.setdefault(f"{model} out", []).append((r["bucket"], float(r["output_tokens"])))
    return {"latency": line_chart(latency, title="Latency p50 / p95 per model", unit="ms"),
            "tokens": line_chart(tokens, title="Tokens per model", unit="tokens")}
