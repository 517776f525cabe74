//! `gpu-doctor snapshot FILE`: reads a torch CUDA memory snapshot
//! (`torch.cuda.memory._dump_snapshot()`) natively, analyses it, runs the memory rules and
//! prints a summary, `--json`, or a self-contained `--html` page. `snapshot diff A B` shows
//! what grew between two snapshots.
//!
//! Exit status: 0 nothing wrong, 1 a warn/error finding (an OOM, a leak, stranded memory),
//! 2 the file could not be read (including a pickle that tries to import code).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::{self, Style};
use crate::progress::FileProgress;
use clap::{Args, Subcommand};
use gpu_doctor_model::{Finding, Severity};
use gpu_doctor_rules::memory::growth::{self, GrowthFacts, SiteGrowth};
use gpu_doctor_rules::memory::{self, LeakFacts, MemoryFacts, OomFacts};
use gpu_doctor_snapshot::{
    Analysis, AnalyzeOptions, Snapshot, SnapshotDiff, analyze, diff, format_bytes,
};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Points of the memory-over-time series in `--json` and in the HTML page.
const JSON_TIMELINE_POINTS: usize = 64;
const HTML_TIMELINE_POINTS: usize = 800;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    command: Option<SnapshotCommand>,
    /// The snapshot pickle (`torch.cuda.memory._dump_snapshot("snap.pickle")`).
    #[arg(required = true, value_name = "FILE")]
    file: Option<PathBuf>,
    #[command(flatten)]
    common: Common,
    /// Also write a self-contained HTML page (timeline, segment map, tables) to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct Common {
    /// Print JSON (schema in docs/snapshot.md) instead of the summary.
    #[arg(long)]
    json: bool,
    /// How many allocation sites to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// The CUDA device to analyse (default: the one with the OOM, else the most reserved).
    #[arg(long, value_name = "N")]
    device: Option<i64>,
}

#[derive(Debug, Subcommand)]
enum SnapshotCommand {
    /// What grew between two snapshots of the same program (by allocation site).
    Diff {
        /// The earlier snapshot.
        before: PathBuf,
        /// The later snapshot.
        after: PathBuf,
        #[command(flatten)]
        common: Common,
    },
}

pub fn run(ctx: &Context, args: SnapshotArgs) -> anyhow::Result<ExitStatus> {
    let style = Style { color: ctx.color };
    match args.command {
        Some(SnapshotCommand::Diff {
            before,
            after,
            common,
        }) => run_diff(style, &before, &after, &common),
        None => {
            let Some(file) = args.file else {
                return Err(Hinted::new(
                    "no snapshot file given",
                    "gpu-doctor snapshot FILE, or gpu-doctor snapshot diff A B",
                ));
            };
            run_one(style, &file, &args.common, args.html.as_deref())
        }
    }
}

/// Reads a snapshot, with a progress bar for a large file on a terminal.
fn load(path: &Path) -> anyhow::Result<Snapshot> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let bar = FileProgress::for_file(&format!("reading {}", file_name(path)), len);
    let mut progress = |at: u64| {
        if let Some(bar) = &bar {
            bar.set(at);
        }
    };
    let result = gpu_doctor_snapshot::read_file(path, &mut progress);
    drop(bar);
    result.map_err(|e| Hinted::new(format!("{}: {e}", path.display()), e.hint()))
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The analysis as the rules' facts.
fn facts(source: &str, a: &Analysis) -> MemoryFacts {
    MemoryFacts {
        source: source.to_owned(),
        gpu: None,
        allocated_bytes: a.allocated_bytes,
        reserved_bytes: a.reserved_bytes,
        stranded_free_bytes: a.fragmentation.stranded_free_bytes,
        largest_free_block_bytes: a.largest_free_block_bytes,
        expandable_segments: a.fragmentation.expandable_segments,
        expandable_reusable_bytes: a.fragmentation.expandable_reusable_bytes,
        device_total_bytes: None,
        oom: a.oom.as_ref().map(|o| OomFacts {
            requested_bytes: o.requested_bytes,
            device_free_bytes: o.device_free_bytes,
            allocated_bytes: o.allocated_bytes,
            reserved_bytes: o.reserved_bytes,
            largest_free_block_bytes: o.largest_free_block_bytes,
            site: o.python_stack.first().cloned(),
        }),
        leaks: a
            .leak_candidates
            .iter()
            .map(|l| LeakFacts {
                site: l.label.clone(),
                growth_bytes: l.growth_bytes,
                live_bytes: l.live_bytes,
                live_allocations: l.live_allocations,
                frees: l.frees,
            })
            .collect(),
    }
}

fn status(findings: &[Finding]) -> ExitStatus {
    if findings.iter().any(|f| f.severity >= Severity::Warn) {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    }
}

fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn run_one(
    style: Style,
    path: &Path,
    common: &Common,
    html: Option<&Path>,
) -> anyhow::Result<ExitStatus> {
    let snap = load(path)?;
    let opts = AnalyzeOptions {
        device: common.device,
        top: common.top,
        timeline_points: JSON_TIMELINE_POINTS,
    };
    if let Some(d) = common.device
        && !snap.devices().contains(&d)
    {
        return Err(Hinted::new(
            format!("{}: device {d} is not in this snapshot", path.display()),
            format!("devices in it: {:?}", snap.devices()),
        ));
    }
    let analysis = analyze(&snap, &opts);
    let source = file_name(path);
    let findings = memory::diagnose(&facts(&source, &analysis));

    if let Some(out) = html {
        let dense = analyze(
            &snap,
            &AnalyzeOptions {
                timeline_points: HTML_TIMELINE_POINTS,
                ..opts
            },
        );
        let page = gpu_doctor_snapshot::html::render(
            &source,
            &snap,
            &analysis,
            &dense.timeline,
            &findings,
        );
        std::fs::write(out, page).map_err(|e| {
            Hinted::new(
                format!("cannot write {}: {e}", out.display()),
                "choose a writable path for --html",
            )
        })?;
        eprintln!("wrote {}", out.display());
    }

    if common.json {
        let mut extra = serde_json::Map::new();
        extra.insert("file".into(), path.display().to_string().into());
        let mut a = serde_json::to_value(&analysis)?;
        if let Some(obj) = a.as_object_mut() {
            // The per-segment list belongs in the HTML page, not in every script's input.
            if let Some(f) = obj.get_mut("fragmentation").and_then(|f| f.as_object_mut()) {
                f.remove("per_segment");
            }
            for (k, v) in std::mem::take(obj) {
                extra.insert(k, v);
            }
        }
        extra.insert("pickle_protocol".into(), snap.protocol.into());
        extra.insert("legacy_history".into(), snap.legacy_history.into());
        let doc = printer::findings_json(&findings, extra);
        print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        print(&summary(style, &source, &snap, &analysis, &findings))?;
    }
    Ok(status(&findings))
}

/// A small picture of allocated memory over the trace.
fn sparkline(values: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().max().unwrap_or(0).max(1);
    values
        .iter()
        .map(|&v| BARS[((v as f64 / max as f64) * 7.0).round() as usize])
        .collect()
}

fn summary(
    style: Style,
    source: &str,
    snap: &Snapshot,
    a: &Analysis,
    findings: &[Finding],
) -> String {
    let mut s = String::new();
    let device = a
        .device
        .map_or_else(|| "none".to_owned(), |d| format!("cuda:{d}"));
    let span = match (a.trace.first_time_us, a.trace.last_time_us) {
        (Some(x), Some(y)) if y >= x => format!(" over {:.1} ms", (y - x) as f64 / 1000.0),
        _ => String::new(),
    };
    let _ = writeln!(
        s,
        "{} {source}: {device}, {} segments, {} trace entries{span}",
        style.bold("Snapshot"),
        a.fragmentation.segments,
        a.trace.entries
    );
    if a.devices.len() > 1 {
        let _ = writeln!(
            s,
            "  devices in the file: {:?} (choose with --device)",
            a.devices
        );
    }
    if snap.legacy_history {
        let _ = writeln!(s, "  torch 2.0 layout (per-block history)");
    }
    let row = |s: &mut String, k: &str, v: String| {
        let _ = writeln!(s, "  {k:<26}{v}");
    };
    let _ = writeln!(s, "\n{}", style.bold("Memory at dump"));
    row(&mut s, "allocated", format_bytes(a.allocated_bytes));
    row(
        &mut s,
        "reserved",
        format!(
            "{} ({} reserved but unallocated)",
            format_bytes(a.reserved_bytes),
            format_bytes(a.reserved_bytes.saturating_sub(a.allocated_bytes))
        ),
    );
    row(
        &mut s,
        "largest free block",
        format_bytes(a.largest_free_block_bytes),
    );
    if let Some(p) = &a.peak {
        row(
            &mut s,
            "peak allocated",
            format!(
                "{} at trace entry {}",
                format_bytes(p.allocated_bytes),
                p.trace_index
            ),
        );
        row(&mut s, "peak reserved", format_bytes(p.max_reserved_bytes));
    }
    if !a.timeline.is_empty() {
        let values: Vec<u64> = a.timeline.iter().map(|p| p.allocated_bytes).collect();
        row(&mut s, "allocated over time", sparkline(&values));
    }

    if let Some(o) = &a.oom {
        let at = o
            .python_stack
            .first()
            .map(|f| format!(", {f}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "\n{} (trace entry {}{at})",
            style.bold("Out of memory"),
            o.trace_index
        );
        row(&mut s, "asked", format_bytes(o.requested_bytes));
        row(
            &mut s,
            "free on the device",
            o.device_free_bytes
                .map_or_else(|| "unknown".into(), format_bytes),
        );
        row(&mut s, "allocated", format_bytes(o.allocated_bytes));
        row(
            &mut s,
            "reserved but unallocated",
            format_bytes(o.cached_free_bytes),
        );
        row(
            &mut s,
            "largest free block",
            format_bytes(o.largest_free_block_bytes),
        );
        row(&mut s, "blocked by", o.blocked_by.to_owned());
    }

    let f = &a.fragmentation;
    let _ = writeln!(s, "\n{}", style.bold("Fragmentation"));
    row(
        &mut s,
        "free, partly used segs",
        format!(
            "{} (empty_cache() cannot return it)",
            format_bytes(f.stranded_free_bytes)
        ),
    );
    row(
        &mut s,
        "free, empty segments",
        format_bytes(f.releasable_free_bytes),
    );
    row(
        &mut s,
        "rounding inside blocks",
        format_bytes(f.internal_waste_bytes),
    );
    row(
        &mut s,
        "free blocks",
        format!(
            "{} (score {:.2}: 0 one hole, 1 slivers)",
            f.free_blocks, f.score
        ),
    );
    for b in f.free_block_histogram.iter().filter(|b| b.blocks > 0) {
        row(
            &mut s,
            &format!("  {}", b.label),
            format!("{} blocks, {}", b.blocks, format_bytes(b.bytes)),
        );
    }
    if let Some(set) = &f.allocator_settings {
        let conf = set.alloc_conf.as_deref().unwrap_or("");
        row(
            &mut s,
            "allocator settings",
            format!(
                "expandable_segments={}, max_split_size={}, PYTORCH_CUDA_ALLOC_CONF=\"{conf}\"",
                set.expandable_segments,
                set.max_split_size
                    .map_or_else(|| "unlimited".into(), format_bytes)
            ),
        );
    }
    match f.expandable_would_avoid_oom {
        Some(true) => row(
            &mut s,
            "expandable_segments",
            "would likely have avoided the OOM".into(),
        ),
        Some(false) => row(
            &mut s,
            "expandable_segments",
            "would not have avoided the OOM".into(),
        ),
        None => {}
    }

    if !a.top_sites.is_empty() {
        let _ = writeln!(
            s,
            "\n{} (alive at dump, blocks, alive at peak)",
            style.bold("Top allocation sites")
        );
        for site in &a.top_sites {
            let _ = writeln!(
                s,
                "  {:>12} {:>6} {:>12}  {}",
                format_bytes(site.live_bytes),
                site.live_blocks,
                format_bytes(site.peak_bytes),
                site.label
            );
        }
    }
    if !a.leak_candidates.is_empty() {
        let _ = writeln!(s, "\n{}", style.bold("Leak candidates"));
        for l in &a.leak_candidates {
            let _ = writeln!(
                s,
                "  +{:<11} {} ({} of {} allocations still alive)",
                format_bytes(l.growth_bytes),
                l.label,
                l.live_allocations,
                l.allocations
            );
        }
    }
    s.push('\n');
    if findings.is_empty() {
        let _ = writeln!(s, "{}", style.green("No problems found."));
    } else {
        s.push_str(&printer::findings_text(findings, style));
    }
    s
}

fn run_diff(
    style: Style,
    before: &Path,
    after: &Path,
    common: &Common,
) -> anyhow::Result<ExitStatus> {
    let a = load(before)?;
    let b = load(after)?;
    let opts = AnalyzeOptions {
        device: common.device,
        top: common.top,
        timeline_points: 0,
    };
    let d = diff(&a, &b, &opts);
    let findings: Vec<Finding> = growth::check(&GrowthFacts {
        source: file_name(after),
        allocated_before_bytes: d.allocated_bytes.0,
        allocated_after_bytes: d.allocated_bytes.1,
        grown: d
            .grown_sites
            .iter()
            .map(|s| SiteGrowth {
                site: s.label.clone(),
                before_bytes: s.before_bytes,
                after_bytes: s.after_bytes,
            })
            .collect(),
    })
    .into_iter()
    .collect();
    if common.json {
        let mut extra = serde_json::Map::new();
        let side = |path: &Path, alloc: u64, reserved: u64, segments: usize| {
            serde_json::json!({
                "file": path.display().to_string(),
                "allocated_bytes": alloc,
                "reserved_bytes": reserved,
                "segments": segments,
            })
        };
        extra.insert(
            "before".into(),
            side(
                before,
                d.allocated_bytes.0,
                d.reserved_bytes.0,
                d.segments.0,
            ),
        );
        extra.insert(
            "after".into(),
            side(after, d.allocated_bytes.1, d.reserved_bytes.1, d.segments.1),
        );
        extra.insert(
            "allocated_delta_bytes".into(),
            d.allocated_delta_bytes.into(),
        );
        extra.insert("reserved_delta_bytes".into(), d.reserved_delta_bytes.into());
        extra.insert("grown_sites".into(), serde_json::to_value(&d.grown_sites)?);
        extra.insert(
            "shrunk_sites".into(),
            serde_json::to_value(&d.shrunk_sites)?,
        );
        let doc = printer::findings_json(&findings, extra);
        print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        print(&diff_text(style, before, after, &d, &findings))?;
    }
    Ok(status(&findings))
}

fn signed(delta: i64) -> String {
    let sign = if delta < 0 { "-" } else { "+" };
    format!("{sign}{}", format_bytes(delta.unsigned_abs()))
}

fn diff_text(
    style: Style,
    before: &Path,
    after: &Path,
    d: &SnapshotDiff,
    findings: &[Finding],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} {} -> {}",
        style.bold("Snapshot diff"),
        file_name(before),
        file_name(after)
    );
    let _ = writeln!(
        s,
        "  {:<12}{} -> {} ({})",
        "allocated",
        format_bytes(d.allocated_bytes.0),
        format_bytes(d.allocated_bytes.1),
        signed(d.allocated_delta_bytes)
    );
    let _ = writeln!(
        s,
        "  {:<12}{} -> {} ({})",
        "reserved",
        format_bytes(d.reserved_bytes.0),
        format_bytes(d.reserved_bytes.1),
        signed(d.reserved_delta_bytes)
    );
    let _ = writeln!(
        s,
        "  {:<12}{} -> {}",
        "segments", d.segments.0, d.segments.1
    );
    for (title, list) in [
        ("Grown sites", &d.grown_sites),
        ("Shrunk sites", &d.shrunk_sites),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "\n{} (change, before -> after, blocks)",
            style.bold(title)
        );
        for site in list {
            let _ = writeln!(
                s,
                "  {:>13}  {} -> {}, {} -> {}  {}",
                signed(site.delta_bytes),
                format_bytes(site.before_bytes),
                format_bytes(site.after_bytes),
                site.before_blocks,
                site.after_blocks,
                site.label
            );
        }
    }
    s.push('\n');
    if findings.is_empty() {
        let _ = writeln!(s, "{}", style.green("No growth worth a finding."));
    } else {
        s.push_str(&printer::findings_text(findings, style));
    }
    s
}
