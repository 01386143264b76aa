"""bench.json as a picture: a bar per figure, grouped by size, CUDA beside where measured."""

from __future__ import annotations

from html import escape

BAR_H, GAP, LEFT, WIDTH = 14, 4, 230, 760


def bench_svg(bench: dict) -> str:
    rows = bench["results"]
    top = max([r["gbps"] for r in rows] + [r.get("cuda_gbps") or 0 for r in rows] + [1.0])
    scale = (WIDTH - LEFT - 80) / top
    y, parts = 40, []
    for r in rows:
        pair = "all cards" if r["op"] == "all" else f"{r['src_card']}->{r['dst_card']}"
        label = f"{r['op']} {pair} {r['bytes'] >> 20} MiB"
        parts.append(f'<text x="{LEFT - 6}" y="{y + 11}" text-anchor="end">{escape(label)}</text>')
        parts.append(f'<rect x="{LEFT}" y="{y}" width="{r["gbps"] * scale:.1f}" height="{BAR_H}" fill="#2b7bb9"/>')
        parts.append(f'<text x="{LEFT + r["gbps"] * scale + 4:.1f}" y="{y + 11}">{r["gbps"]:.0f}</text>')
        y += BAR_H + 1
        if r.get("cuda_gbps"):
            parts.append(f'<rect x="{LEFT}" y="{y}" width="{r["cuda_gbps"] * scale:.1f}" height="{BAR_H // 2}" '
                         f'fill="#8a8a8a"/>')
            y += BAR_H // 2
        y += GAP
    title = (f"rmpeer bench, {escape(bench['host']['label'])}, driver {escape(bench['driver'])}, "
             f"boost {'on' if bench['boost'] else 'off'}: GB/s (blue: copy engine through RM; grey: CUDA copy_)")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y + 20}" font-family="sans-serif" '
            f'font-size="11"><text x="10" y="20" font-size="13">{title}</text>{"".join(parts)}</svg>')
