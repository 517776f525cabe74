//! Charts for `report`: an HTML page with inline SVG (no network, no scripts to load) and a
//! PNG drawn with plotters. Both show, per GPU, memory, utilisation, temperature and power
//! over the window, and per-process memory, with the alerts marked as vertical lines.

use gpu_doctor_model::history::{DevicePoint, History};
use gpu_doctor_model::units::format_bytes;
use gpu_doctor_rules::history::Alert;
use std::fmt::Write as _;
use std::path::Path;

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// One line on a chart.
struct Line {
    label: String,
    color: &'static str,
    points: Vec<(u64, f64)>,
}

/// One chart: a title, lines and a value formatter.
struct Chart {
    title: String,
    lines: Vec<Line>,
    format: fn(f64) -> String,
}

fn gib(v: f64) -> String {
    format_bytes(v.max(0.0) as u64)
}
fn percent(v: f64) -> String {
    format!("{v:.0}%")
}
fn celsius(v: f64) -> String {
    format!("{v:.0}°C")
}
fn watts(v: f64) -> String {
    format!("{v:.0} W")
}

fn metric(points: &[DevicePoint], f: fn(&DevicePoint) -> Option<f64>) -> Vec<(u64, f64)> {
    points
        .iter()
        .filter_map(|p| Some((p.t_ms, f(p)?)))
        .collect()
}

fn charts(history: &History) -> Vec<Chart> {
    let mut charts = Vec::new();
    for (&gpu, points) in &history.devices {
        let mut memory = vec![Line {
            label: "used".into(),
            color: PALETTE[0],
            points: metric(points, |p| p.memory_used_bytes.map(|b| b as f64)),
        }];
        let total = metric(points, |p| p.memory_total_bytes.map(|b| b as f64));
        if !total.is_empty() {
            memory.push(Line {
                label: "total".into(),
                color: "#999999",
                points: total,
            });
        }
        charts.push(Chart {
            title: format!("GPU {gpu} memory"),
            lines: memory,
            format: gib,
        });
        for (title, color, f, format) in [
            (
                "utilisation",
                PALETTE[2],
                (|p: &DevicePoint| p.utilization_gpu_percent) as fn(&DevicePoint) -> Option<f64>,
                percent as fn(f64) -> String,
            ),
            (
                "temperature",
                PALETTE[3],
                |p| p.temperature_celsius,
                celsius,
            ),
            ("power", PALETTE[4], |p| p.power_draw_watts, watts),
        ] {
            let series = metric(points, f);
            if series.is_empty() {
                continue;
            }
            charts.push(Chart {
                title: format!("GPU {gpu} {title}"),
                lines: vec![Line {
                    label: title.into(),
                    color,
                    points: series,
                }],
                format,
            });
        }
        let processes: Vec<Line> = history
            .processes
            .iter()
            .filter(|p| p.gpu == gpu)
            .enumerate()
            .take(PALETTE.len())
            .map(|(i, p)| Line {
                label: format!("pid {} {}", p.pid, p.command.as_deref().unwrap_or(""))
                    .chars()
                    .take(40)
                    .collect(),
                color: PALETTE[i % PALETTE.len()],
                points: p.points.iter().map(|&(t, b)| (t, b as f64)).collect(),
            })
            .collect();
        if !processes.is_empty() {
            charts.push(Chart {
                title: format!("GPU {gpu} memory per process"),
                lines: processes,
                format: gib,
            });
        }
    }
    charts
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The value range of a chart, with 0 as the floor for sizes and percentages.
fn y_range(chart: &Chart) -> (f64, f64) {
    let max = chart
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    (0.0, if max > 0.0 { max * 1.05 } else { 1.0 })
}

// Chart geometry reads best with the short names of the drawing: w, h, x, y.
#[allow(clippy::many_single_char_names)]
fn svg(chart: &Chart, t0: u64, t1: u64, alerts: &[Alert]) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 200.0, 70.0, 10.0, 24.0, 28.0);
    let span = (t1.saturating_sub(t0)).max(1) as f64;
    let (y0, y1) = y_range(chart);
    let x = |t: u64| left + (t.saturating_sub(t0)) as f64 / span * (w - left - right);
    let y = |v: f64| top + (1.0 - (v - y0) / (y1 - y0)) * (h - top - bottom);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<text x="{left}" y="15" font-weight="bold">{}</text>"#,
        escape(&chart.title)
    );
    for i in 0..=4 {
        let v = y0 + (y1 - y0) * f64::from(i) / 4.0;
        let yy = y(v);
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            w - right,
            left - 4.0,
            yy + 4.0,
            escape(&(chart.format)(v))
        );
    }
    let _ = write!(
        s,
        r#"<text x="{left}" y="{}">0 s</text><text x="{}" y="{}" text-anchor="end">{:.0} s</text>"#,
        h - 8.0,
        w - right,
        h - 8.0,
        span / 1000.0
    );
    for alert in alerts {
        if let Some(t) = alert.t_ms.filter(|&t| t >= t0 && t <= t1) {
            let xx = x(t);
            let _ = write!(
                s,
                r##"<line x1="{xx:.1}" x2="{xx:.1}" y1="{top}" y2="{}" stroke="#d62728" stroke-dasharray="4 3"><title>{}</title></line>"##,
                h - bottom,
                escape(&alert.finding.message)
            );
        }
    }
    for (i, line) in chart.lines.iter().enumerate() {
        let mut d = String::new();
        // At most ~2 points per pixel: a week of samples stays a small page.
        let stride = (line.points.len() / 1800).max(1);
        for (j, &(t, v)) in line.points.iter().step_by(stride).enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if j == 0 { "M" } else { " L" },
                x(t),
                y(v)
            );
        }
        let _ = write!(
            s,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.5"/><text x="{}" y="{}" fill="{}" text-anchor="end">{}</text>"#,
            line.color,
            w - right,
            15.0 + 12.0 * i as f64,
            line.color,
            escape(&line.label)
        );
    }
    s.push_str("</svg>");
    s
}

/// A self-contained HTML page.
pub fn html(history: &History, alerts: &[Alert]) -> String {
    let (t0, t1) = (history.since_ms, history.until_ms);
    let mut page = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>gpu-doctor report</title>\
         <style>body{font-family:sans-serif;margin:2em;max-width:960px}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.error{color:#b00}.warn{color:#a60}\
         svg{display:block;margin:1em 0}</style></head><body>",
    );
    let _ = write!(
        page,
        "<h1>gpu-doctor report</h1><p>{:.0} s of history, {} GPU(s).</p>",
        t1.saturating_sub(t0) as f64 / 1000.0,
        history.devices.len()
    );
    page.push_str("<h2>Alerts</h2>");
    if alerts.is_empty() {
        page.push_str("<p>None.</p>");
    } else {
        page.push_str("<table><tr><th>severity</th><th>code</th><th>cause</th><th>at</th><th>message</th></tr>");
        for a in alerts {
            let f = &a.finding;
            let at = a
                .t_ms
                .map(|t| format!("{:.0} s", t.saturating_sub(t0) as f64 / 1000.0))
                .unwrap_or_default();
            let _ = write!(
                page,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{at}</td><td>{}</td></tr>",
                f.severity,
                f.severity,
                f.code,
                f.cause,
                escape(&f.message)
            );
        }
        page.push_str("</table>");
    }
    page.push_str("<h2>Charts</h2>");
    for chart in charts(history) {
        page.push_str(&svg(&chart, t0, t1, alerts));
    }
    page.push_str("</body></html>\n");
    page
}

/// The same charts as a PNG, stacked vertically.
pub fn png(history: &History, alerts: &[Alert], path: &Path) -> anyhow::Result<()> {
    use plotters::prelude::*;
    register_font();
    let charts = charts(history);
    let (t0, t1) = (history.since_ms, history.until_ms.max(history.since_ms + 1));
    let height = 220 * u32::try_from(charts.len().max(1)).unwrap_or(1);
    let root = BitMapBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((charts.len().max(1), 1));
    for (chart, area) in charts.iter().zip(areas) {
        let (y0, y1) = y_range(chart);
        let span_s = (t1 - t0) as f64 / 1000.0;
        let mut ctx = ChartBuilder::on(&area)
            .caption(&chart.title, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(24)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..span_s, y0..y1)?;
        let format = chart.format;
        ctx.configure_mesh()
            .x_desc("seconds")
            .y_label_formatter(&|v| format(*v))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()?;
        for alert in alerts {
            if let Some(t) = alert.t_ms.filter(|&t| t >= t0 && t <= t1) {
                let xs = (t - t0) as f64 / 1000.0;
                ctx.draw_series(LineSeries::new([(xs, y0), (xs, y1)], RED.stroke_width(1)))?;
            }
        }
        for line in &chart.lines {
            let color = hex(line.color);
            ctx.draw_series(LineSeries::new(
                line.points
                    .iter()
                    .map(|&(t, v)| ((t.saturating_sub(t0)) as f64 / 1000.0, v)),
                color.stroke_width(2),
            ))?
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        ctx.configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

fn hex(color: &str) -> plotters::style::RGBColor {
    let c = u32::from_str_radix(color.trim_start_matches('#'), 16).unwrap_or(0);
    plotters::style::RGBColor((c >> 16) as u8, (c >> 8) as u8, c as u8)
}

/// plotters draws text with a font we ship (DejaVu Sans, a free licence), so a PNG renders
/// the same on a server with no fonts installed.
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font(
            "sans-serif",
            plotters::style::FontStyle::Normal,
            include_bytes!("../assets/DejaVuSans.ttf"),
        );
    });
}
