//! Drawing one frame from the [`App`] state. Nothing here reads a clock or a device.

use crate::app::{App, WINDOW_MS};
use gpu_doctor_model::history::DevicePoint;
use gpu_doctor_model::units::format_bytes;
use gpu_doctor_model::{DeviceState, Reading, Severity};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Clear, Dataset, GraphType, Paragraph, Row, Table, Wrap,
};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

pub fn draw(frame: &mut Frame, app: &App) {
    let gpus = app.latest.as_ref().map_or(0, |s| s.devices.len());
    let [header, list, charts, lower, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(u16::try_from(gpus.clamp(1, 8)).unwrap_or(8) + 2),
        Constraint::Min(10),
        Constraint::Length(12),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    draw_header(frame, app, header);
    draw_gpu_list(frame, app, list);
    draw_charts(frame, app, charts);
    let [processes, alerts] =
        Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(lower);
    draw_processes(frame, app, processes);
    draw_alerts(frame, app, alerts);
    draw_footer(frame, app, footer);
    if app.show_help {
        draw_help(frame);
    }
}

fn draw_header(frame: &mut Frame, app: &App, area: Rect) {
    let version = |r: &Reading<String>| r.value().cloned().unwrap_or_else(|| "?".into());
    let mut spans = vec![
        Span::styled(
            " gpu-doctor watch ",
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ),
        Span::raw(format!(
            "  driver {}  CUDA {}  source {}  every {} ms",
            version(&app.inventory.driver_version),
            version(&app.inventory.cuda_driver_version),
            app.source_label,
            app.interval_ms
        )),
    ];
    if app.paused {
        spans.push(Span::styled("  PAUSED", Style::new().fg(Color::Yellow)));
    }
    if let Some(why) = &app.ended {
        spans.push(Span::styled(
            format!("  {why}"),
            Style::new().fg(Color::Yellow),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_gpu_list(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::default().borders(Borders::ALL).title(" GPUs ");
    let Some(sample) = &app.latest else {
        frame.render_widget(
            Paragraph::new("waiting for the first sample…").block(block),
            area,
        );
        return;
    };
    let rows = sample.devices.iter().enumerate().map(|(i, d)| {
        let name = app
            .inventory
            .devices
            .iter()
            .find(|info| info.index == d.index)
            .map_or("?", |info| info.name.as_str());
        let name = name.strip_prefix("NVIDIA ").unwrap_or(name).to_owned();
        let style = if i == app.selected {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        if let DeviceState::Lost { reason } = &d.state {
            return Row::new(vec![
                Cell::from(d.index.0.to_string()),
                Cell::from(name),
                Cell::from(Span::styled(
                    format!("LOST: {reason}"),
                    Style::new().fg(Color::Red),
                )),
            ])
            .style(style);
        }
        let memory = match (d.memory_used_bytes.get(), d.memory_total_bytes.get()) {
            (Some(u), Some(t)) if t > 0 => {
                let f = u as f64 / t as f64;
                let filled = (f * 12.0).round() as usize;
                let color = if f > 0.95 {
                    Color::Red
                } else if f > 0.8 {
                    Color::Yellow
                } else {
                    Color::Green
                };
                Line::from(vec![
                    Span::styled("█".repeat(filled.min(12)), Style::new().fg(color)),
                    Span::raw("░".repeat(12 - filled.min(12))),
                    Span::raw(format!(
                        " {:>6.1}/{:.0} GiB",
                        u as f64 / GIB,
                        t as f64 / GIB
                    )),
                ])
            }
            _ => Line::from("n/a"),
        };
        let opt =
            |r: Option<u32>, unit: &str| r.map_or_else(|| "n/a".into(), |v| format!("{v}{unit}"));
        let mut health: Vec<String> = Vec::new();
        if let Reading::Value(reasons) = &d.throttle_reasons {
            health.extend(
                reasons
                    .iter()
                    .filter(|r| r.is_problem())
                    .map(|r| r.describe().to_owned()),
            );
        }
        if d.ecc_errors
            .value()
            .is_some_and(|e| e.volatile_uncorrected > 0)
        {
            health.push("ECC".into());
        }
        if d.remapped_rows
            .value()
            .is_some_and(|r| r.pending || r.failure)
        {
            health.push("remap".into());
        }
        let health = if health.is_empty() {
            Span::styled("ok", Style::new().fg(Color::Green))
        } else {
            Span::styled(health.join(","), Style::new().fg(Color::Yellow))
        };
        Row::new(vec![
            Cell::from(d.index.0.to_string()),
            Cell::from(name),
            Cell::from(memory),
            Cell::from(opt(d.utilization_gpu_percent.get(), "%")),
            Cell::from(opt(d.temperature_celsius.get(), "°C")),
            Cell::from(opt(d.power_draw_milliwatts.get().map(|mw| mw / 1000), " W")),
            Cell::from(health),
        ])
        .style(style)
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(3),
            Constraint::Length(14),
            Constraint::Length(30),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(7),
            Constraint::Min(6),
        ],
    )
    .block(block);
    frame.render_widget(table, area);
}

/// A series as (seconds before the newest sample, value), for a chart whose x axis runs
/// from -window to 0.
fn series(
    points: &[DevicePoint],
    now: u64,
    f: impl Fn(&DevicePoint) -> Option<f64>,
) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter_map(|p| Some((-((now.saturating_sub(p.t_ms)) as f64) / 1000.0, f(p)?)))
        .collect()
}

fn chart(
    title: String,
    data: &[(f64, f64)],
    color: Color,
    y_max: f64,
    y_label: fn(f64) -> String,
) -> Chart<'_> {
    let window_s = WINDOW_MS as f64 / 1000.0;
    let dataset = Dataset::default()
        .marker(symbols::Marker::Braille)
        .graph_type(GraphType::Line)
        .style(Style::new().fg(color))
        .data(data);
    Chart::new(vec![dataset])
        .block(Block::default().borders(Borders::ALL).title(title))
        .x_axis(Axis::default().bounds([-window_s, 0.0]).labels(vec![
            Span::raw(format!("-{:.0}m", window_s / 60.0)),
            Span::raw("now"),
        ]))
        .y_axis(
            Axis::default()
                .bounds([0.0, y_max])
                .labels(vec![Span::raw(y_label(0.0)), Span::raw(y_label(y_max))]),
        )
}

fn draw_charts(frame: &mut Frame, app: &App, area: Rect) {
    let Some(sample) = &app.latest else {
        return;
    };
    let Some(device) = sample.devices.get(app.selected) else {
        return;
    };
    let gpu = device.index;
    let points = app.history.devices.get(&gpu).map_or(&[][..], Vec::as_slice);
    let now = sample.timestamp_ms;
    let memory = series(points, now, |p| p.memory_used_bytes.map(|b| b as f64 / GIB));
    let util = series(points, now, |p| p.utilization_gpu_percent);
    let temp = series(points, now, |p| p.temperature_celsius);
    let power = series(points, now, |p| p.power_draw_watts);
    let total = device.memory_total_bytes.get().map_or_else(
        || memory.iter().map(|p| p.1).fold(1.0, f64::max),
        |t| t as f64 / GIB,
    );
    let slowdown = app
        .inventory
        .devices
        .iter()
        .find(|i| i.index == gpu)
        .and_then(|i| i.temperature_slowdown_celsius.get())
        .map_or(100.0, f64::from);
    let power_max = device.power_limit_milliwatts.get().map_or_else(
        || power.iter().map(|p| p.1).fold(1.0, f64::max),
        |mw| f64::from(mw) / 1000.0,
    );
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let [a, b] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);
    let [c, d] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    frame.render_widget(
        chart(
            format!(" GPU {gpu} memory (GiB) "),
            &memory,
            Color::Cyan,
            total,
            |v| format!("{v:.0}"),
        ),
        a,
    );
    frame.render_widget(
        chart(
            format!(" GPU {gpu} utilisation (%) "),
            &util,
            Color::Green,
            100.0,
            |v| format!("{v:.0}"),
        ),
        b,
    );
    frame.render_widget(
        chart(
            format!(" GPU {gpu} temperature (°C) "),
            &temp,
            Color::Yellow,
            slowdown,
            |v| format!("{v:.0}"),
        ),
        c,
    );
    frame.render_widget(
        chart(
            format!(" GPU {gpu} power (W) "),
            &power,
            Color::Magenta,
            power_max,
            |v| format!("{v:.0}"),
        ),
        d,
    );
}

fn draw_processes(frame: &mut Frame, app: &App, area: Rect) {
    let title = format!(" Processes (sorted by {}; s to change) ", app.sort.label());
    let header = Row::new(vec![
        "GPU",
        "PID",
        "USER",
        "MEMORY",
        "TREND/min",
        "CONTAINER",
        "COMMAND",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = app.sorted_processes().into_iter().map(|p| {
        let trend = app.trend_bytes_per_min(p).map_or_else(
            || Span::raw("…"),
            |t| {
                if t.abs() < 1024.0 * 1024.0 {
                    Span::raw("=")
                } else if t > 0.0 {
                    Span::styled(
                        format!("▲{}", format_bytes(t as u64)),
                        Style::new().fg(Color::Yellow),
                    )
                } else {
                    Span::styled(
                        format!("▼{}", format_bytes((-t) as u64)),
                        Style::new().fg(Color::Green),
                    )
                }
            },
        );
        Row::new(vec![
            Cell::from(p.gpu.0.to_string()),
            Cell::from(p.pid.0.to_string()),
            Cell::from(p.user.clone().unwrap_or_else(|| "?".into())),
            Cell::from(
                p.used_memory_bytes
                    .get()
                    .map_or_else(|| "n/a".into(), format_bytes),
            ),
            Cell::from(trend),
            Cell::from(
                p.container
                    .as_deref()
                    .map_or_else(|| "-".into(), |c| c.chars().take(12).collect::<String>()),
            ),
            Cell::from(p.command.clone().unwrap_or_else(|| "?".into())),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(3),
            Constraint::Length(8),
            Constraint::Length(9),
            Constraint::Length(10),
            Constraint::Length(11),
            Constraint::Length(12),
            Constraint::Min(10),
        ],
    )
    .header(header)
    .block(Block::default().borders(Borders::ALL).title(title));
    frame.render_widget(table, area);
}

fn draw_alerts(frame: &mut Frame, app: &App, area: Rect) {
    let lines: Vec<Line> = if app.alerts.is_empty() {
        vec![Line::styled("no alerts", Style::new().fg(Color::Green))]
    } else {
        app.alerts
            .iter()
            .map(|a| {
                let color = match a.finding.severity {
                    Severity::Error => Color::Red,
                    Severity::Warn => Color::Yellow,
                    Severity::Info => Color::Cyan,
                };
                Line::from(vec![
                    Span::styled(format!("{} ", a.finding.code), Style::new().fg(color)),
                    Span::raw(a.finding.message.clone()),
                ])
            })
            .collect()
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(Block::default().borders(Borders::ALL).title(" Alerts ")),
        area,
    );
}

fn draw_footer(frame: &mut Frame, _app: &App, area: Rect) {
    frame.render_widget(
        Paragraph::new(" q quit   ↑/↓ GPU   s sort   p pause   ? help")
            .style(Style::new().add_modifier(Modifier::DIM)),
        area,
    );
}

fn draw_help(frame: &mut Frame) {
    let area = frame.area();
    let w = 56.min(area.width);
    let h = 12.min(area.height);
    let popup = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let text = vec![
        Line::from("q, Esc      quit"),
        Line::from("↑/k, ↓/j    select the GPU shown in the charts"),
        Line::from("s           sort processes: memory, trend, pid, user, command"),
        Line::from("p           pause (samples are dropped while paused)"),
        Line::from("?           this help"),
        Line::from(""),
        Line::from("Charts show the last 5 minutes. TREND is the change of a"),
        Line::from("process's memory over the last 30 s; alerts come from the"),
        Line::from("same rules as `gpu-doctor report`."),
    ];
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(text).block(Block::default().borders(Borders::ALL).title(" Help ")),
        popup,
    );
}
