//! The `--html` page: one self-contained file (inline SVG and CSS, no script, no network)
//! with the memory timeline, a segment map and the tables.
//!
//! Big snapshots are exactly what browser viewers choke on, so the page holds only the
//! analysis: a downsampled timeline and at most [`MAX_SEGMENTS`] segments drawn.

use crate::analysis::{Analysis, TimelinePoint, format_bytes};
use crate::model::{BlockState, Snapshot};
use gpu_doctor_model::{Finding, Severity};
use std::fmt::Write as _;

/// Segments drawn in the map (the largest); the rest are counted.
pub const MAX_SEGMENTS: usize = 300;

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #eee}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f4f4;padding:1px 4px}
.error{color:#b00}.warn{color:#a60}.info{color:#066}.finding{margin:10px 0;padding:8px 12px;border-left:4px solid #ccc;background:#fafafa}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
svg text{font:11px system-ui,sans-serif}.muted{color:#777}";

/// Renders the page. `timeline` may be denser than `analysis.timeline`.
pub fn render(
    title: &str,
    snap: &Snapshot,
    analysis: &Analysis,
    timeline: &[TimelinePoint],
    findings: &[Finding],
) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpu-doctor snapshot: {t}</title><style>{STYLE}</style></head><body>\n<h1>Memory snapshot <code>{t}</code></h1>\n",
        t = esc(title)
    );
    let device = analysis
        .device
        .map_or_else(|| "none".to_owned(), |d| d.to_string());
    let _ = writeln!(
        h,
        "<table><tr><th>device</th><td>cuda:{device}</td></tr><tr><th>allocated</th><td class=n>{}</td></tr><tr><th>reserved</th><td class=n>{}</td></tr><tr><th>reserved but unallocated</th><td class=n>{}</td></tr><tr><th>largest free block</th><td class=n>{}</td></tr><tr><th>segments</th><td class=n>{}</td></tr><tr><th>trace entries</th><td class=n>{}</td></tr></table>",
        format_bytes(analysis.allocated_bytes),
        format_bytes(analysis.reserved_bytes),
        format_bytes(
            analysis
                .reserved_bytes
                .saturating_sub(analysis.allocated_bytes)
        ),
        format_bytes(analysis.largest_free_block_bytes),
        analysis.fragmentation.segments,
        analysis.trace.entries
    );

    h.push_str("<h2>Findings</h2>\n");
    if findings.is_empty() {
        h.push_str("<p>No problems found.</p>\n");
    }
    for f in findings {
        let class = match f.severity {
            Severity::Error => "error",
            Severity::Warn => "warn",
            Severity::Info => "info",
        };
        let _ = write!(
            h,
            "<div class=finding><b class={class}>{} [{}]</b> <b>{}</b>: {}",
            f.severity,
            esc(&f.code.0),
            f.cause,
            esc(&f.message)
        );
        if !f.evidence.is_empty() {
            h.push_str("<ul>");
            for e in &f.evidence {
                let _ = write!(h, "<li class=muted>{}</li>", esc(&e.text));
            }
            h.push_str("</ul>");
        }
        if !f.remedies.is_empty() {
            h.push_str("<ol>");
            for r in &f.remedies {
                let _ = write!(h, "<li>{}", esc(&r.action));
                if let Some(c) = &r.command {
                    let _ = write!(h, "<br><code>{}</code>", esc(c));
                }
                if let Some(d) = &r.detail {
                    let _ = write!(h, "<br><span class=muted>{}</span>", esc(d));
                }
                h.push_str("</li>");
            }
            h.push_str("</ol>");
        }
        h.push_str("</div>\n");
    }

    h.push_str("<h2>Memory over time</h2>\n");
    timeline_svg(&mut h, analysis, timeline);
    h.push_str("<h2>Segment map</h2>\n");
    segment_map(&mut h, snap, analysis);
    tables(&mut h, analysis);
    h.push_str("<p class=muted>Written by gpu-doctor. The page is self-contained: nothing is loaded from the network.</p>\n</body></html>\n");
    h
}

#[allow(clippy::many_single_char_names)] // x/y/w/h are the SVG coordinate names
fn timeline_svg(h: &mut String, analysis: &Analysis, timeline: &[TimelinePoint]) {
    if timeline.is_empty() {
        h.push_str("<p class=muted>The snapshot has no trace (record with <code>torch.cuda.memory._record_memory_history()</code>).</p>\n");
        return;
    }
    let (w, ht, left, bottom) = (1000.0f64, 260.0f64, 70.0f64, 24.0f64);
    let max_x = timeline.last().map_or(1, |p| p.trace_index).max(1) as f64;
    let max_y = timeline
        .iter()
        .map(|p| p.reserved_bytes.max(p.allocated_bytes))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let x = |i: usize| left + (i as f64 / max_x) * (w - left - 10.0);
    let y = |b: u64| 10.0 + (1.0 - b as f64 / max_y) * (ht - bottom - 10.0);
    let _ = write!(
        h,
        "<div class=legend><span style=\"background:#1f77b4\"></span>allocated<span style=\"background:#ff7f0e\"></span>reserved<span style=\"background:#d62728\"></span>out of memory<span style=\"background:#2ca02c\"></span>peak</div>\n<svg viewBox=\"0 0 {w} {ht}\" width=\"100%\" role=\"img\" aria-label=\"allocated and reserved memory over the trace\">"
    );
    for k in 0..=4 {
        let b = (max_y * f64::from(k) / 4.0) as u64;
        let _ = write!(
            h,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            w - 10.0,
            left - 4.0,
            y(b) + 4.0,
            esc(&format_bytes(b)),
            y = y(b)
        );
    }
    for (series, color) in [(true, "#ff7f0e"), (false, "#1f77b4")] {
        let mut pts = String::new();
        for p in timeline {
            let v = if series {
                p.reserved_bytes
            } else {
                p.allocated_bytes
            };
            let _ = write!(pts, "{:.1},{:.1} ", x(p.trace_index), y(v));
        }
        let _ = write!(
            h,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
            pts.trim_end()
        );
    }
    if let Some(p) = &analysis.peak {
        let _ = write!(
            h,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#2ca02c\"><title>peak allocated {} at trace entry {}</title></circle>",
            x(p.trace_index),
            y(p.allocated_bytes),
            esc(&format_bytes(p.allocated_bytes)),
            p.trace_index
        );
    }
    if let Some(o) = &analysis.oom {
        let _ = write!(
            h,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"10\" y2=\"{}\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"><title>out of memory: {} asked</title></line>",
            ht - bottom,
            esc(&format_bytes(o.requested_bytes)),
            x = x(o.trace_index)
        );
    }
    let _ = writeln!(
        h,
        "<text x=\"{left}\" y=\"{}\">trace entry 0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text></svg>",
        ht - 6.0,
        w - 10.0,
        ht - 6.0,
        max_x as u64
    );
}

fn segment_map(h: &mut String, snap: &Snapshot, analysis: &Analysis) {
    let mut segs: Vec<&crate::Segment> = snap
        .segments
        .iter()
        .filter(|s| Some(s.device) == analysis.device)
        .collect();
    if segs.is_empty() {
        h.push_str("<p class=muted>No segments.</p>\n");
        return;
    }
    segs.sort_by(|a, b| {
        b.total_size
            .cmp(&a.total_size)
            .then(a.address.cmp(&b.address))
    });
    let shown = segs.len().min(MAX_SEGMENTS);
    let largest = segs.first().map_or(1, |s| s.total_size).max(1) as f64;
    let row = 12.0f64;
    let (w, label_w) = (1000.0f64, 150.0f64);
    let height = row * shown as f64 + 4.0;
    let _ = write!(
        h,
        "<p class=muted>One row per segment, largest first, drawn to scale against the largest ({}). <span class=legend><span style=\"background:#1f77b4\"></span>allocated<span style=\"background:#9467bd\"></span>freed, awaiting other streams<span style=\"background:#ddd\"></span>free</span></p>\n<svg viewBox=\"0 0 {w} {height}\" width=\"100%\" role=\"img\" aria-label=\"segment map\">",
        esc(&format_bytes(largest as u64))
    );
    for (r, seg) in segs.iter().take(shown).enumerate() {
        let top = r as f64 * row + 2.0;
        let scale = (w - label_w - 10.0) / largest;
        let _ = write!(
            h,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{} {}</text>",
            label_w - 6.0,
            top + 9.0,
            esc(&format_bytes(seg.total_size)),
            if seg.is_expandable { "exp" } else { "" }
        );
        for b in &seg.blocks {
            let color = match b.state {
                BlockState::ActiveAllocated => "#1f77b4",
                BlockState::ActivePendingFree => "#9467bd",
                BlockState::Inactive | BlockState::Unknown => "#ddd",
            };
            let bx = label_w + b.address.saturating_sub(seg.address) as f64 * scale;
            let bw = (b.size as f64 * scale).max(0.5);
            let state = match b.state {
                BlockState::ActiveAllocated => "allocated",
                BlockState::ActivePendingFree => "awaiting free",
                BlockState::Inactive | BlockState::Unknown => "free",
            };
            let _ = write!(
                h,
                "<rect x=\"{bx:.2}\" y=\"{top:.1}\" width=\"{bw:.2}\" height=\"{:.0}\" fill=\"{color}\" stroke=\"#fff\" stroke-width=\"0.3\"><title>{state} {} at 0x{:x}</title></rect>",
                row - 2.0,
                esc(&format_bytes(b.size)),
                b.address
            );
        }
    }
    h.push_str("</svg>\n");
    if segs.len() > shown {
        let _ = writeln!(
            h,
            "<p class=muted>{} smaller segments not drawn.</p>",
            segs.len() - shown
        );
    }
}

fn tables(h: &mut String, a: &Analysis) {
    if let Some(o) = &a.oom {
        let _ = writeln!(
            h,
            "<h2>Out of memory</h2><table><tr><th>asked</th><td class=n>{}</td></tr><tr><th>free on the device</th><td class=n>{}</td></tr><tr><th>allocated</th><td class=n>{}</td></tr><tr><th>reserved but unallocated</th><td class=n>{}</td></tr><tr><th>largest free block</th><td class=n>{}</td></tr><tr><th>blocked by</th><td>{}</td></tr><tr><th>where</th><td>{}</td></tr></table>",
            format_bytes(o.requested_bytes),
            o.device_free_bytes
                .map_or_else(|| "unknown".into(), format_bytes),
            format_bytes(o.allocated_bytes),
            format_bytes(o.cached_free_bytes),
            format_bytes(o.largest_free_block_bytes),
            o.blocked_by,
            esc(&o.python_stack.join(" ← "))
        );
    }
    h.push_str("<h2>Top allocation sites</h2><table><tr><th class=n>alive at dump</th><th class=n>blocks</th><th class=n>alive at peak</th><th>site (Python stack, C++ frames folded)</th></tr>\n");
    for s in &a.top_sites {
        let _ = writeln!(
            h,
            "<tr><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}<br><span class=muted>{}</span></td></tr>",
            format_bytes(s.live_bytes),
            s.live_blocks,
            format_bytes(s.peak_bytes),
            esc(&s.label),
            esc(&s
                .python_stack
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ← "))
        );
    }
    h.push_str("</table>\n<h2>Leak candidates</h2>\n");
    if a.leak_candidates.is_empty() {
        h.push_str("<p>None: no site kept growing through the recording.</p>\n");
    } else {
        h.push_str("<table><tr><th class=n>growth</th><th class=n>alive</th><th class=n>allocations alive / made</th><th>site</th></tr>\n");
        for l in &a.leak_candidates {
            let _ = writeln!(
                h,
                "<tr><td class=n>+{}</td><td class=n>{}</td><td class=n>{} / {}</td><td>{}</td></tr>",
                format_bytes(l.growth_bytes),
                format_bytes(l.live_bytes),
                l.live_allocations,
                l.allocations,
                esc(&l.label)
            );
        }
        h.push_str("</table>\n");
    }
    let f = &a.fragmentation;
    let _ = writeln!(
        h,
        "<h2>Fragmentation</h2><table><tr><th>free in partly used segments</th><td class=n>{}</td></tr><tr><th>free in empty segments</th><td class=n>{}</td></tr><tr><th>rounding inside blocks</th><td class=n>{}</td></tr><tr><th>free blocks</th><td class=n>{}</td></tr><tr><th>score (0 one hole, 1 slivers)</th><td class=n>{:.2}</td></tr></table>",
        format_bytes(f.stranded_free_bytes),
        format_bytes(f.releasable_free_bytes),
        format_bytes(f.internal_waste_bytes),
        f.free_blocks,
        f.score
    );
    h.push_str(
        "<table><tr><th>free block size</th><th class=n>blocks</th><th class=n>bytes</th></tr>\n",
    );
    for b in &f.free_block_histogram {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            esc(b.label),
            b.blocks,
            format_bytes(b.bytes)
        );
    }
    h.push_str("</table>\n");
    if let Some(s) = &f.allocator_settings {
        h.push_str("<h2>Allocator settings</h2><table>\n");
        for (k, v) in &s.entries {
            let _ = writeln!(
                h,
                "<tr><th>{}</th><td><code>{}</code></td></tr>",
                esc(k),
                esc(v)
            );
        }
        h.push_str("</table>\n");
    }
}
