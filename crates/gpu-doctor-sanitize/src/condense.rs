//! Grouping reports into distinct defects.
//!
//! compute-sanitizer prints one report per faulting thread (or per hazard, per leaked
//! allocation, per failing API call), so one bug in a kernel launched over 16 384 threads
//! is 16 384 reports. This module owns the rule that decides which reports are the same
//! defect, the [`Defect`] that stands for them (count, first occurrence verbatim, thread and
//! block ranges), and the bounds that keep memory flat however long the log is.

use crate::parse::{
    AddressProblem, Dim3, Event, HostFrame, Location, Report, ReportKind, Space, Tool, short_name,
};
use std::collections::HashMap;

/// The most distinct defects kept; reports of further defects are only counted.
pub const MAX_DEFECTS: usize = 256;

/// What makes two reports the same defect: the tool, the kind of report, the kernel, the
/// access kind and size, the address space, the source line, and the first host frame in
/// the user's code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DefectKey {
    pub tool: Tool,
    pub kind: DefectKind,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The first host frame in the user's code (`main`, `launch_scale(...)`).
    pub user_frame: Option<String>,
}

/// The part of the key that depends on the kind of report.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DefectKind {
    InvalidAccess {
        space: Space,
        access: String,
        size: u32,
        problem: AddressProblem,
    },
    Exception {
        name: String,
    },
    Uninitialized {
        space: Space,
        size: u32,
    },
    /// A race between two places (sorted, so either order is one defect).
    Race {
        warning: bool,
        accesses: Vec<(String, Location)>,
    },
    Barrier {
        detail: String,
    },
    ApiError {
        error: String,
        api: String,
    },
    Leak,
    ToolError {
        text: String,
    },
}

/// Inclusive ranges of `(x,y,z)` indices seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimRange {
    pub min: Dim3,
    pub max: Dim3,
}

impl DimRange {
    fn new(d: Dim3) -> Self {
        DimRange { min: d, max: d }
    }

    fn add(&mut self, d: Dim3) {
        for ((lo, hi), v) in self.min.iter_mut().zip(self.max.iter_mut()).zip(d) {
            *lo = (*lo).min(v);
            *hi = (*hi).max(v);
        }
    }

    /// `232..255` for x alone, or `(0,0,0)..(31,1,0)`.
    pub fn render(&self) -> String {
        let one_d = self.min[1..] == [0, 0] && self.max[1..] == [0, 0];
        if one_d {
            if self.min[0] == self.max[0] {
                self.min[0].to_string()
            } else {
                format!("{}..{}", self.min[0], self.max[0])
            }
        } else if self.min == self.max {
            dim(self.min)
        } else {
            format!("{}..{}", dim(self.min), dim(self.max))
        }
    }
}

fn dim(d: Dim3) -> String {
    format!("({},{},{})", d[0], d[1], d[2])
}

/// Many reports of one defect.
#[derive(Debug, Clone, PartialEq)]
pub struct Defect {
    pub key: DefectKey,
    /// Reports grouped here.
    pub count: u64,
    /// Hazards racecheck counted (`[16 hazards]`), for races.
    pub hazards: u64,
    /// The first report, as read.
    pub first: Report,
    pub threads: Option<DimRange>,
    pub blocks: Option<DimRange>,
    /// For out-of-bounds accesses: the smallest and largest byte offset from the start
    /// of the nearest allocation, and that allocation's size. `None` when the reports
    /// name allocations of different sizes (offsets into different buffers do not add up).
    pub offsets: Option<(i64, i64, u64)>,
    /// Reports whose nearest allocation differed from the first one's.
    pub mixed_allocations: bool,
    /// For leaks: bytes leaked in all.
    pub leaked_bytes: u64,
    /// Order of first appearance.
    pub order: usize,
}

/// Totals over the whole log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Reports read.
    pub reports: u64,
    /// Reports of defects past [`MAX_DEFECTS`], counted but not grouped.
    pub ungrouped: u64,
    /// `ERROR SUMMARY: N errors`, the last one seen.
    pub error_summary: Option<u64>,
    /// Reports that count as errors in compute-sanitizer's summary (all but its own
    /// tool errors).
    pub error_reports: u64,
    /// Whether anything showed this is a compute-sanitizer log.
    pub recognised: bool,
    /// `ERROR SUMMARY: N errors were not printed`.
    pub not_printed: Option<u64>,
    /// `LEAK SUMMARY` bytes and allocations.
    pub leak_summary: Option<(u64, u64)>,
}

/// Accumulates [`Event`]s into [`Defect`]s.
#[derive(Debug)]
pub struct Condenser {
    /// The tool the run used, when known (saved logs do not say).
    tool: Option<Tool>,
    index: HashMap<DefectKey, usize>,
    defects: Vec<Defect>,
    totals: Totals,
}

impl Condenser {
    /// `tool`: the `--tool` the run used, if known; otherwise each report's kind tells.
    pub fn new(tool: Option<Tool>) -> Self {
        Condenser {
            tool,
            index: HashMap::new(),
            defects: Vec::new(),
            totals: Totals::default(),
        }
    }

    pub fn totals(&self) -> Totals {
        self.totals
    }

    pub fn defects(&self) -> &[Defect] {
        &self.defects
    }

    pub fn tool(&self) -> Option<Tool> {
        self.tool
    }

    pub fn add(&mut self, event: Event) {
        self.totals.recognised = true;
        match event {
            Event::Report(report) => self.add_report(*report),
            Event::ErrorSummary { errors } => self.totals.error_summary = Some(errors),
            Event::LeakSummary { bytes, allocations } => {
                self.totals.leak_summary = Some((bytes, allocations));
            }
            Event::NotPrinted { errors } => self.totals.not_printed = Some(errors),
            Event::RacecheckSummary { .. } | Event::Banner => {}
        }
    }

    fn add_report(&mut self, report: Report) {
        self.totals.reports += 1;
        if !matches!(report.kind, ReportKind::ToolError { .. }) {
            self.totals.error_reports += 1;
        }
        let key = self.key(&report);
        if let Some(&i) = self.index.get(&key) {
            merge(&mut self.defects[i], &report);
            return;
        }
        if self.defects.len() >= MAX_DEFECTS {
            self.totals.ungrouped += 1;
            return;
        }
        let order = self.defects.len();
        let mut defect = Defect {
            key: key.clone(),
            count: 0,
            hazards: 0,
            threads: report.thread.map(DimRange::new),
            blocks: report.block.map(DimRange::new),
            offsets: None,
            mixed_allocations: false,
            leaked_bytes: 0,
            order,
            first: report,
        };
        let first = defect.first.clone();
        merge(&mut defect, &first);
        self.index.insert(key, order);
        self.defects.push(defect);
    }

    fn key(&self, report: &Report) -> DefectKey {
        let (tool, kind) = match &report.kind {
            ReportKind::InvalidAccess {
                space,
                access,
                size,
                problem,
                ..
            } => (
                Tool::Memcheck,
                DefectKind::InvalidAccess {
                    space: *space,
                    access: access.clone(),
                    size: *size,
                    problem: *problem,
                },
            ),
            ReportKind::Exception { name } => {
                (Tool::Memcheck, DefectKind::Exception { name: name.clone() })
            }
            ReportKind::Uninitialized { space, size } => (
                Tool::Initcheck,
                DefectKind::Uninitialized {
                    space: *space,
                    size: *size,
                },
            ),
            ReportKind::Race {
                warning,
                first_access,
                first,
                partners,
            } => {
                let mut accesses = vec![(first_access.clone(), first.clone())];
                accesses.extend(partners.iter().map(|(a, l, _)| (a.clone(), l.clone())));
                (
                    Tool::Racecheck,
                    DefectKind::Race {
                        warning: *warning,
                        accesses: normalise(accesses),
                    },
                )
            }
            ReportKind::Hazard {
                warning, accesses, ..
            } => (
                Tool::Racecheck,
                DefectKind::Race {
                    warning: *warning,
                    accesses: normalise(accesses.clone()),
                },
            ),
            ReportKind::Barrier { detail } => (
                Tool::Synccheck,
                DefectKind::Barrier {
                    detail: detail.clone(),
                },
            ),
            ReportKind::ApiError { error, api, .. } => (
                self.tool.unwrap_or(Tool::Memcheck),
                DefectKind::ApiError {
                    error: error.clone(),
                    api: api.clone(),
                },
            ),
            ReportKind::Leak { .. } => (Tool::Memcheck, DefectKind::Leak),
            ReportKind::ToolError { text } => (
                self.tool.unwrap_or(Tool::Memcheck),
                DefectKind::ToolError { text: text.clone() },
            ),
        };
        // Races are keyed by their pair of places; the first place alone would split one
        // race in two when racecheck prints the pair in the other order.
        let location = match kind {
            DefectKind::Race { .. } => None,
            _ => report.location.as_ref(),
        };
        DefectKey {
            tool,
            kind,
            function: location.map(|l| l.function.clone()),
            file: location.and_then(|l| l.file.clone()),
            line: location.and_then(|l| l.line),
            user_frame: user_frame(&report.host_frames, kernel_function(report)).map(frame_label),
        }
    }
}

/// The device function a report is about: its `at` line, or a hazard's first access.
pub fn kernel_function(report: &Report) -> Option<&str> {
    if let Some(loc) = &report.location {
        return Some(loc.function.as_str());
    }
    match &report.kind {
        ReportKind::Hazard { accesses, .. } => accesses.first().map(|(_, l)| l.function.as_str()),
        _ => None,
    }
}

/// Sorts a race's accesses and drops duplicates, so the order racecheck printed them in
/// does not split one race into two defects.
fn normalise(mut accesses: Vec<(String, Location)>) -> Vec<(String, Location)> {
    accesses.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    accesses.dedup();
    accesses
}

fn merge(defect: &mut Defect, report: &Report) {
    defect.count += 1;
    if let Some(t) = report.thread {
        defect.threads.get_or_insert(DimRange::new(t)).add(t);
    }
    if let Some(b) = report.block {
        defect.blocks.get_or_insert(DimRange::new(b)).add(b);
    }
    match &report.kind {
        ReportKind::InvalidAccess {
            nearest: Some(n), ..
        } => {
            // Offset of the access from the allocation's start: `1 bytes after` an
            // allocation of 4000 bytes is byte 4000.
            let offset = if n.distance_bytes >= 0 {
                i64::try_from(n.allocation_bytes)
                    .unwrap_or(i64::MAX)
                    .saturating_add(n.distance_bytes - 1)
            } else {
                n.distance_bytes
            };
            if defect.mixed_allocations {
                return;
            }
            let entry = defect
                .offsets
                .get_or_insert((offset, offset, n.allocation_bytes));
            if entry.2 == n.allocation_bytes {
                entry.0 = entry.0.min(offset);
                entry.1 = entry.1.max(offset);
            } else {
                defect.offsets = None;
                defect.mixed_allocations = true;
            }
        }
        ReportKind::Race { partners, .. } => {
            defect.hazards = defect
                .hazards
                .saturating_add(partners.iter().map(|p| p.2).sum::<u64>().max(1));
        }
        ReportKind::Hazard { .. } => defect.hazards = defect.hazards.saturating_add(1),
        ReportKind::Leak { bytes } => {
            defect.leaked_bytes = defect.leaked_bytes.saturating_add(*bytes);
        }
        _ => {}
    }
}

/// Libraries and functions that are never the user's code: the CUDA driver and runtime,
/// the C library, Python, and the frameworks.
const SYSTEM_MODULES: &[&str] = &[
    "libcuda.so",
    "libcudart",
    "libcublas",
    "libcudnn",
    "libnccl",
    "libnvrtc",
    "libcufft",
    "libcurand",
    "libcusparse",
    "libcusolver",
    "libc.so",
    "libc-",
    "ld-linux",
    "libpthread",
    "libstdc++",
    "libgcc",
    "libtorch",
    "libc10",
    "libpython",
    "python",
    "_C.cpython",
    "libtriton",
    "libjax",
    "libxla",
    "cuda_utils.cpython",
    "__triton_launcher",
];

const SYSTEM_PATHS: &[&str] = &[
    "/site-packages/torch/",
    "/site-packages/triton/",
    "/site-packages/jax",
    "/site-packages/cupy",
    "/site-packages/nvidia/",
    "/.triton/cache/",
];

/// Function prefixes of launch wrappers and runtimes; those marked `true` count only when
/// an upper-case letter follows (`cudaMemcpy`, `cuLaunchKernel`, `PyEval_...`), so a user's
/// `cuda_helper` is still the user's.
const SYSTEM_FUNCTIONS: &[(&str, bool)] = &[
    ("cudaError cudaLaunchKernel", false),
    ("__cudart", false),
    ("libcudart_static", false),
    ("__device_stub", false),
    ("__libc_start", false),
    ("_start", false),
    ("_Py", true),
    ("Py", true),
    ("cuda", true),
    ("cu", true),
];

fn is_system_function(function: &str) -> bool {
    SYSTEM_FUNCTIONS.iter().any(|(prefix, upper_next)| {
        function
            .strip_prefix(prefix)
            .is_some_and(|rest| !upper_next || rest.chars().next().is_some_and(char::is_uppercase))
    })
}

/// Python files of the frameworks that show in compute-sanitizer's Python backtraces
/// (it prints base names only: `__call__ in driver.py:713`).
const LIBRARY_PY_FILES: &[&str] = &[
    "driver.py",
    "jit.py",
    "autotuner.py",
    "compiler.py",
    "__init__.py",
    "module.py",
    "functional.py",
    "_ops.py",
    "_tensor.py",
    "function.py",
    "graph.py",
    "eval_frame.py",
    "_jit_internal.py",
    "interpreter.py",
    "runtime.py",
    "build.py",
];

/// The first host frame that is the user's own code. `kernel` (the device function) is
/// skipped too: its host-side launch stub carries the kernel's name.
pub fn user_frame<'a>(frames: &'a [HostFrame], kernel: Option<&str>) -> Option<&'a HostFrame> {
    let kernel = kernel.map(short_name);
    frames.iter().find(|f| {
        let Some(function) = f.function.as_deref() else {
            return false;
        };
        if kernel.as_deref() == Some(short_name(function).as_str()) {
            return false;
        }
        if let Some(file) = f.module.as_deref().and_then(python_file) {
            return !LIBRARY_PY_FILES.contains(&file);
        }
        let module_is_system = f.module.as_deref().is_some_and(|m| {
            let base = m.rsplit('/').next().unwrap_or(m);
            SYSTEM_MODULES.iter().any(|s| base.starts_with(s))
                || SYSTEM_PATHS.iter().any(|s| m.contains(s))
        });
        let function_is_system = is_system_function(function);
        !module_is_system && !function_is_system
    })
}

/// `driver.py` from a Python frame's `driver.py:713`; `None` for native modules.
fn python_file(module: &str) -> Option<&str> {
    let (file, line) = module.rsplit_once(':')?;
    let is_python = std::path::Path::new(file)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("py"));
    (is_python && line.bytes().all(|b| b.is_ascii_digit())).then_some(file)
}

/// How a host frame is named in keys and messages: its function, and for Python frames
/// the file and line (`main (triton_oob.py:28)`).
pub fn frame_label(frame: &HostFrame) -> String {
    let function = frame.function.clone().unwrap_or_default();
    match frame.module.as_deref() {
        Some(module) if python_file(module).is_some() => format!("{function} ({module})"),
        _ => function,
    }
}
