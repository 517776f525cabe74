//! The streaming parser for compute-sanitizer's text report.
//!
//! It owns one thing: turning lines into [`Event`]s, one per report (an invalid access, a
//! race, an uninitialised read, a barrier error, a CUDA API error, a leak, a tool error) or
//! summary line. It keeps only the report being read, so memory does not grow with the
//! log, and every line is cut at [`MAX_LINE_BYTES`] and every report at
//! [`MAX_REPORT_LINES`] verbatim lines, so a hostile log costs bounded time and memory.
//!
//! Every report line starts with the sanitizer's prefix (`========= `). Lines without it
//! (the job's own output) are ignored, and the prefix is found anywhere in the line so
//! that logs with CI timestamps in front still parse. The formats of CUDA 11 to 13
//! (`at kernel(args)+0x70 in file.cu:12`, and the older `at 0x70 in file.cu:12:kernel`)
//! are both understood.

use std::fmt;

/// The longest line kept; longer lines are cut (on a character boundary).
pub const MAX_LINE_BYTES: usize = 4096;
/// The most verbatim lines kept for one report (the rest are still parsed).
pub const MAX_REPORT_LINES: usize = 48;
/// The most host frames kept for one report.
pub const MAX_HOST_FRAMES: usize = 64;
/// The most `and ... access at` partners kept for one race.
pub const MAX_RACE_PARTNERS: usize = 16;

const PREFIX: &str = "=========";

/// Which compute-sanitizer tool a report comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    Memcheck,
    Racecheck,
    Initcheck,
    Synccheck,
}

impl Tool {
    pub const ALL: [Tool; 4] = [
        Tool::Memcheck,
        Tool::Racecheck,
        Tool::Initcheck,
        Tool::Synccheck,
    ];

    /// The name compute-sanitizer's `--tool` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Initcheck => "initcheck",
            Tool::Synccheck => "synccheck",
        }
    }

    pub fn parse(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in device code something happened: `kernel(args)+0x70 in file.cu:12`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Location {
    /// The function as printed, without its `+0x..` offset.
    pub function: String,
    /// The source file, when the code was built with line information.
    pub file: Option<String>,
    pub line: Option<u32>,
}

impl Location {
    /// The function's name without its parameter list or return type: `scale`,
    /// `ns::kernel<float>`.
    pub fn short_function(&self) -> String {
        short_name(&self.function)
    }

    /// `file.cu:12` (the file's last path component), when known.
    pub fn short_place(&self) -> Option<String> {
        let file = self.file.as_deref()?;
        let base = file.rsplit('/').next().unwrap_or(file);
        Some(match self.line {
            Some(line) => format!("{base}:{line}"),
            None => base.to_owned(),
        })
    }

    /// `path/file.cu:12` as printed, when known.
    pub fn place(&self) -> Option<String> {
        let file = self.file.as_deref()?;
        Some(match self.line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_owned(),
        })
    }
}

/// One host frame of a saved backtrace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostFrame {
    /// The function, when the binary kept its symbols.
    pub function: Option<String>,
    /// The library or program it is in.
    pub module: Option<String>,
}

/// A `(x,y,z)` thread or block index.
pub type Dim3 = [u32; 3];

/// The memory space an access touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Space {
    Global,
    Shared,
    Local,
    Generic,
    Other,
}

impl Space {
    fn parse(word: &str) -> Space {
        match word {
            "__global__" => Space::Global,
            "__shared__" => Space::Shared,
            "__local__" => Space::Local,
            "__generic__" => Space::Generic,
            _ => Space::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Space::Global => "__global__",
            Space::Shared => "__shared__",
            Space::Local => "__local__",
            Space::Generic => "__generic__",
            Space::Other => "device",
        }
    }
}

/// What an invalid access did wrong, from its `Address ...` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddressProblem {
    OutOfBounds,
    Misaligned,
    /// No `Address` line, or one this parser does not know.
    Unknown,
}

/// Where an out-of-bounds address lies against the nearest allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NearestAllocation {
    /// Bytes past the allocation's last byte (positive) or before its first (negative),
    /// as compute-sanitizer counts them (`1 bytes after` is the first byte past the end).
    pub distance_bytes: i64,
    pub allocation_bytes: u64,
}

/// What kind of report it is, with the facts that tell defects apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportKind {
    /// memcheck: `Invalid __global__ write of size 4 bytes`.
    InvalidAccess {
        space: Space,
        access: String,
        size: u32,
        problem: AddressProblem,
        nearest: Option<NearestAllocation>,
    },
    /// memcheck: a hardware exception (`Out-of-range Shared or Local Address`, `Illegal
    /// Instruction`, `Malloc/Free error encountered : Double free`, ...).
    Exception { name: String },
    /// initcheck: `Uninitialized __global__ memory read of size 4 bytes`.
    Uninitialized { space: Space, size: u32 },
    /// racecheck, analysis report: `Race reported between Write access at A and Read
    /// access at B [N hazards]`.
    Race {
        warning: bool,
        first_access: String,
        first: Location,
        partners: Vec<(String, Location, u64)>,
    },
    /// racecheck, hazard report: `Potential WAW hazard detected at __shared__ 0x0 in block
    /// (0,0,0) :` with its two threads.
    Hazard {
        warning: bool,
        hazard: String,
        space: Space,
        accesses: Vec<(String, Location)>,
    },
    /// synccheck: `Barrier error detected. Divergent thread(s) in block`.
    Barrier { detail: String },
    /// `Program hit cudaErrorLaunchFailure (error 719) due to "..." on CUDA API call to X.`
    ApiError {
        error: String,
        code: Option<i64>,
        message: String,
        api: String,
    },
    /// memcheck `--leak-check full`: `Leaked 4096 bytes at 0x...`.
    Leak { bytes: u64 },
    /// compute-sanitizer could not do its job: `Error: Device not supported`, ...
    ToolError { text: String },
}

/// One report: its kind, where it happened, and its first lines verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub kind: ReportKind,
    /// The device function and source line (`at ...`), when printed.
    pub location: Option<Location>,
    pub thread: Option<Dim3>,
    pub block: Option<Dim3>,
    pub address: Option<u64>,
    pub host_frames: Vec<HostFrame>,
    /// 1-based line number of the report's first line in the input.
    pub first_line: u64,
    /// The report's lines, prefix included, as read (at most [`MAX_REPORT_LINES`]).
    pub lines: Vec<String>,
}

/// What the parser yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Report(Box<Report>),
    /// `ERROR SUMMARY: N errors`.
    ErrorSummary {
        errors: u64,
    },
    /// `ERROR SUMMARY: N errors were not printed` (the print limit was reached).
    NotPrinted {
        errors: u64,
    },
    /// `LEAK SUMMARY: N bytes leaked in M allocations`.
    LeakSummary {
        bytes: u64,
        allocations: u64,
    },
    /// `RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)`.
    RacecheckSummary {
        hazards: u64,
        errors: u64,
        warnings: u64,
    },
    /// The `COMPUTE-SANITIZER` (or `CUDA-MEMCHECK`) banner.
    Banner,
}

/// Feeds on lines and yields [`Event`]s; call [`Parser::finish`] at the end of input.
#[derive(Debug, Default)]
pub struct Parser {
    line_no: u64,
    current: Option<Report>,
    /// Inside `Saved host backtrace`: `Host Frame` lines belong to the current report.
    in_backtrace: bool,
    /// Lines that carried the sanitizer prefix.
    prefixed_lines: u64,
}

impl Parser {
    pub fn new() -> Self {
        Parser::default()
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.line_no
    }

    /// Lines read so far that carried the sanitizer's prefix.
    pub fn prefixed_lines(&self) -> u64 {
        self.prefixed_lines
    }

    /// Reads one line (with or without its newline, in any encoding: bytes that are not
    /// UTF-8 are replaced). Returns the events it completes: at most two (the report it
    /// ends, and the line's own summary or one-line report).
    pub fn push_bytes(&mut self, line: &[u8]) -> Vec<Event> {
        let cut = &line[..line.len().min(MAX_LINE_BYTES)];
        self.push_line(&String::from_utf8_lossy(cut))
    }

    /// Reads one line; see [`Parser::push_bytes`].
    pub fn push_line(&mut self, line: &str) -> Vec<Event> {
        self.line_no += 1;
        let line = cut_line(line.trim_end_matches(['\n', '\r']));
        let mut out = Vec::new();
        let Some(at) = line.find(PREFIX) else {
            return out;
        };
        self.prefixed_lines += 1;
        let body = line[at..].trim_start_matches('=');
        // Report headers follow the prefix after one space, details after several.
        let indented = body.starts_with("  ");
        let body = body.trim();
        if body.is_empty() {
            // A bare prefix line closes the report.
            self.close(&mut out);
            return out;
        }
        if !indented {
            if let Some(summary) = parse_summary(body) {
                self.close(&mut out);
                out.push(summary);
                return out;
            }
            if let Some(kind) = parse_header(body) {
                self.close(&mut out);
                self.open(kind, line);
                return out;
            }
        }
        if self.current.is_some() {
            self.detail(body, line);
        }
        out
    }

    /// Ends the input: yields the report still open, if any.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        self.close(&mut out);
        out
    }

    fn close(&mut self, out: &mut Vec<Event>) {
        self.in_backtrace = false;
        if let Some(mut report) = self.current.take() {
            settle_module(report.host_frames.last_mut());
            out.push(Event::Report(Box::new(report)));
        }
    }

    fn open(&mut self, kind: ReportKind, line: &str) {
        // Races carry their first location on the header line.
        let location = match &kind {
            ReportKind::Race { first, .. } if !first.function.is_empty() => Some(first.clone()),
            _ => None,
        };
        self.current = Some(Report {
            kind,
            location,
            thread: None,
            block: None,
            address: None,
            host_frames: Vec::new(),
            first_line: self.line_no,
            lines: vec![line.to_owned()],
        });
    }

    /// A line inside the open report.
    fn detail(&mut self, body: &str, line: &str) {
        let Some(report) = self.current.as_mut() else {
            return;
        };
        if report.lines.len() < MAX_REPORT_LINES {
            report.lines.push(line.to_owned());
        }
        if body.starts_with("Saved host backtrace") {
            self.in_backtrace = true;
            return;
        }
        if let Some(frame) = body.strip_prefix("Host Frame:") {
            if self.in_backtrace && report.host_frames.len() < MAX_HOST_FRAMES {
                settle_module(report.host_frames.last_mut());
                report.host_frames.push(parse_host_frame(frame.trim()));
            }
            return;
        }
        if self.in_backtrace {
            // `in /path/lib.so` on its own line names the previous frame's module.
            if let Some(module) = body.strip_prefix("in ")
                && let Some(frame) = report.host_frames.last_mut()
                && frame.module.is_none()
            {
                frame.module = Some(module.trim().to_owned());
            }
            return;
        }
        if let Some(rest) = body.strip_prefix("at ") {
            if report.location.is_none() {
                report.location = Some(parse_location(rest));
            }
            return;
        }
        if let Some(rest) = body.strip_prefix("Device Frame:") {
            // `-G` builds print the inlined device frames; the first one is the
            // innermost, and is the place when `at` had no line.
            if let Some(loc) = report.location.as_mut()
                && loc.file.is_none()
            {
                let frame = parse_location(rest.trim());
                if frame.file.is_some() {
                    *loc = frame;
                }
            }
            return;
        }
        if let Some(rest) = body.strip_prefix("by thread ") {
            let (thread, block) = parse_thread_block(rest);
            report.thread = thread;
            report.block = block;
            return;
        }
        if let Some(rest) = body
            .strip_prefix("Address ")
            .or_else(|| body.strip_prefix("Access at "))
            .or_else(|| body.strip_prefix("Access to "))
        {
            report.address = parse_hex(rest.split_whitespace().next().unwrap_or(""));
            if let ReportKind::InvalidAccess { problem, .. } = &mut report.kind {
                if rest.contains("out of bounds") || rest.contains("out-of-bounds") {
                    *problem = AddressProblem::OutOfBounds;
                } else if rest.contains("misaligned") {
                    *problem = AddressProblem::Misaligned;
                }
            }
            return;
        }
        if let Some(rest) = body.strip_prefix("and is ") {
            if let ReportKind::InvalidAccess { nearest, .. } = &mut report.kind {
                *nearest = parse_nearest(rest);
            }
            return;
        }
        if let Some(rest) = body.strip_prefix("and ")
            && let ReportKind::Race { partners, .. } = &mut report.kind
        {
            if let Some((access, loc, hazards)) = parse_race_partner(rest)
                && partners.len() < MAX_RACE_PARTNERS
            {
                partners.push((access, loc, hazards));
            }
            return;
        }
        if let ReportKind::Hazard { accesses, .. } = &mut report.kind
            && let Some((access, rest)) = body.split_once(" Thread ")
            && matches!(access, "Read" | "Write" | "Atomic")
        {
            // `Write Thread (31,0,0) at last_writer(int *)+0x30 in race.cu:9`
            let (thread, after) = match rest.split_once(')') {
                Some((t, after)) => (parse_dim3(&format!("{t})")), after),
                None => (None, rest),
            };
            if report.thread.is_none() {
                report.thread = thread;
            }
            if let Some(loc) = after.trim().strip_prefix("at ")
                && accesses.len() < 2
            {
                accesses.push((access.to_owned(), parse_location(loc)));
            }
        }
    }
}

/// Cuts a line at [`MAX_LINE_BYTES`] on a character boundary.
fn cut_line(line: &str) -> &str {
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

fn parse_summary(body: &str) -> Option<Event> {
    if body == "COMPUTE-SANITIZER" || body == "CUDA-MEMCHECK" {
        return Some(Event::Banner);
    }
    if let Some(rest) = body.strip_prefix("ERROR SUMMARY:") {
        // `ERROR SUMMARY: 16286 errors were not printed. Use --print-limit ...`
        if rest.contains("not printed") {
            return Some(Event::NotPrinted {
                errors: first_number(rest)?,
            });
        }
        return Some(Event::ErrorSummary {
            errors: first_number(rest)?,
        });
    }
    if let Some(rest) = body.strip_prefix("LEAK SUMMARY:") {
        let nums = numbers(rest);
        return Some(Event::LeakSummary {
            bytes: *nums.first()?,
            allocations: nums.get(1).copied().unwrap_or(0),
        });
    }
    if let Some(rest) = body.strip_prefix("RACECHECK SUMMARY:") {
        let nums = numbers(rest);
        return Some(Event::RacecheckSummary {
            hazards: *nums.first()?,
            errors: nums.get(1).copied().unwrap_or(0),
            warnings: nums.get(2).copied().unwrap_or(0),
        });
    }
    None
}

/// Hardware exceptions memcheck reports by name alone.
const EXCEPTIONS: &[&str] = &[
    "Out-of-range Shared or Local Address",
    "Misaligned Shared or Local Address",
    "Warp Out-of-range Address",
    "Warp Misaligned Address",
    "Warp Illegal Address",
    "Warp Invalid PC",
    "Warp Hardware Stack Overflow",
    "Warp Illegal Instruction",
    "Warp Invalid Address Space",
    "Warp Assert",
    "Lane User Stack Overflow",
    "Lane Illegal Address",
    "Lane Misaligned Address",
    "Lane Invalid PC",
    "Lane Hardware Stack Overflow",
    "Illegal Instruction",
    "Illegal Address",
    "Invalid PC",
    "Invalid Address Space",
    "Hardware Stack Overflow",
    "Call Stack Overflow",
    "Malloc/Free error encountered",
    "Cuda Error",
    "Device-side assert",
    "Device Assert",
    "Unknown Error",
];

fn parse_header(body: &str) -> Option<ReportKind> {
    if let Some(rest) = body.strip_prefix("Invalid ") {
        // `Invalid __global__ write of size 4 bytes`; the space is absent in old logs.
        let (space, rest) = match rest.split_once(' ') {
            Some((word, after)) if word.starts_with("__") => (Space::parse(word), after),
            _ => (Space::Other, rest),
        };
        let (access, rest) = rest.split_once(" of size ")?;
        return Some(ReportKind::InvalidAccess {
            space,
            access: access.trim().to_owned(),
            size: first_number(rest).and_then(|n| u32::try_from(n).ok())?,
            problem: AddressProblem::Unknown,
            nearest: None,
        });
    }
    if let Some(rest) = body.strip_prefix("Uninitialized ") {
        let space = Space::parse(rest.split_whitespace().next().unwrap_or(""));
        let size = rest
            .split_once(" of size ")
            .and_then(|(_, s)| first_number(s))
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0);
        return Some(ReportKind::Uninitialized { space, size });
    }
    if let Some(rest) = body.strip_prefix("Barrier error detected") {
        let detail = rest
            .trim_start_matches(['.', ':', ' '])
            .trim()
            .trim_end_matches('.');
        return Some(ReportKind::Barrier {
            detail: detail.to_owned(),
        });
    }
    if let Some(rest) = body.strip_prefix("Program hit ") {
        return parse_api_error(rest);
    }
    if let Some(rest) = body.strip_prefix("Leaked ") {
        return Some(ReportKind::Leak {
            bytes: first_number(rest)?,
        });
    }
    let (warning, rest) = strip_severity(body);
    if let Some(rest) = rest {
        let rest = rest.trim();
        if let Some(race) = rest.strip_prefix("Race reported between ") {
            return Some(parse_race(race, warning));
        }
        if let Some(hazard) = rest.strip_prefix("Potential ") {
            // `WAW hazard detected at __shared__ 0x0 in block (0,0,0) :`
            let kind = hazard.split_whitespace().next().unwrap_or("").to_owned();
            let space = hazard
                .split_once(" detected at ")
                .map_or(Space::Other, |(_, s)| {
                    Space::parse(s.split_whitespace().next().unwrap_or(""))
                });
            return Some(ReportKind::Hazard {
                warning,
                hazard: kind,
                space,
                accesses: Vec::new(),
            });
        }
        if !warning {
            // Any other `Error: ...` at the top level is the tool failing.
            return Some(ReportKind::ToolError {
                text: rest.to_owned(),
            });
        }
        return None;
    }
    if body.starts_with("Internal Sanitizer Error") {
        return Some(ReportKind::ToolError {
            text: body.to_owned(),
        });
    }
    EXCEPTIONS
        .iter()
        .find(|name| body.starts_with(**name))
        .map(|_| ReportKind::Exception {
            name: body.trim_end_matches(['.', ':', ' ']).to_owned(),
        })
}

/// `Error:` / `ERROR:` / `Warning:` / `WARN:(Warp Level Programming)` in front of racecheck
/// and tool messages. Returns whether it is a warning, and the rest.
fn strip_severity(body: &str) -> (bool, Option<&str>) {
    for (word, warning) in [
        ("Error:", false),
        ("ERROR:", false),
        ("Warning:", true),
        ("WARNING:", true),
        ("WARN:", true),
        ("INFO:", true),
    ] {
        if let Some(rest) = body.strip_prefix(word) {
            let rest = rest.trim_start();
            // `WARN:(Warp Level Programming) Potential ...`
            let rest = if rest.starts_with('(') {
                rest.split_once(')').map_or(rest, |(_, r)| r)
            } else {
                rest
            };
            return (warning, Some(rest));
        }
    }
    (false, None)
}

/// `Write access at A` (the rest of the header of a race).
fn parse_race(rest: &str, warning: bool) -> ReportKind {
    let (access, loc) = rest
        .split_once(" access at ")
        .map_or((rest, ""), |(a, l)| (a, l));
    ReportKind::Race {
        warning,
        first_access: access.trim().to_owned(),
        first: parse_location(loc.trim()),
        partners: Vec::new(),
    }
}

/// `Read access at B [16 hazards]` (after `and `).
fn parse_race_partner(rest: &str) -> Option<(String, Location, u64)> {
    let (access, loc) = rest.split_once(" access at ")?;
    let (loc, hazards) = match loc.rfind(" [") {
        Some(i) if loc.ends_with(']') => (&loc[..i], first_number(&loc[i..]).unwrap_or(1)),
        _ => (loc, 1),
    };
    Some((
        access.trim().to_owned(),
        parse_location(loc.trim()),
        hazards,
    ))
}

/// `cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API
/// call to cudaDeviceSynchronize.`
fn parse_api_error(rest: &str) -> Option<ReportKind> {
    let error = rest.split_whitespace().next()?.to_owned();
    let code = rest
        .split_once("(error ")
        .and_then(|(_, r)| r.split(')').next())
        .and_then(|n| n.trim().parse().ok());
    let message = rest
        .split_once("due to \"")
        .and_then(|(_, r)| r.rsplit_once('"'))
        .map(|(m, _)| m.to_owned())
        .unwrap_or_default();
    let api = rest
        .rsplit_once(" call to ")
        .map(|(_, a)| a.trim().trim_end_matches('.').to_owned())
        .unwrap_or_default();
    Some(ReportKind::ApiError {
        error,
        code,
        message,
        api,
    })
}

/// `kernel(float *, int)+0x70 in /path/file.cu:12`, `kernel+0x70`, or the old
/// `0x000000c8 in /path/file.cu:75:void kernel<double>(double*, int)`.
pub fn parse_location(text: &str) -> Location {
    let text = text.trim();
    if text.starts_with("0x") {
        let rest = text.split_once(" in ").map_or("", |(_, r)| r);
        // `file:line:function`
        if let Some((file, line, function)) = split_file_line_function(rest) {
            return Location {
                function: function.to_owned(),
                file: Some(file.to_owned()),
                line: Some(line),
            };
        }
        return Location {
            function: rest.to_owned(),
            file: None,
            line: None,
        };
    }
    let (function, file, line) = match text.rfind(" in ") {
        Some(i) => {
            let place = text[i + 4..].trim();
            match place.rsplit_once(':') {
                Some((file, line))
                    if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    (&text[..i], Some(file.to_owned()), line.parse().ok())
                }
                _ => (&text[..i], Some(place.to_owned()), None),
            }
        }
        None => (text, None, None),
    };
    Location {
        function: strip_offset(function.trim()).to_owned(),
        file: file.filter(|f| !f.is_empty()),
        line,
    }
}

/// `/path/file.cu:75:void kernel(...)` into its three parts.
fn split_file_line_function(text: &str) -> Option<(&str, u32, &str)> {
    let mut search = 0;
    while let Some(i) = text[search..].find(':') {
        let colon = search + i;
        let after = &text[colon + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after.as_bytes().get(digits) == Some(&b':') {
            let line = after[..digits].parse().ok()?;
            return Some((&text[..colon], line, &after[digits + 1..]));
        }
        search = colon + 1;
    }
    None
}

/// `kernel(int *)+0x70` into `kernel(int *)`.
fn strip_offset(function: &str) -> &str {
    match function.rfind("+0x") {
        Some(i) if function[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => &function[..i],
        _ => function,
    }
}

/// A function's name without parameters or return type: `void ns::k<int>(int*)` gives
/// `ns::k<int>`.
pub fn short_name(function: &str) -> String {
    let mut depth = 0i32;
    let mut end = function.len();
    for (i, c) in function.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth <= 0 && i > 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let name = function[..end].trim();
    // Old logs print a return type: keep the last word at template depth 0.
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in name.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let short = &name[start..];
    if short.is_empty() {
        function.to_owned()
    } else {
        short.to_owned()
    }
}

/// A frame printed as `name [0x..]` with no `in module` after it, on its line or the
/// next, is the old format's module without a symbol (`Host Frame:app [0xadb1a]`).
fn settle_module(frame: Option<&mut HostFrame>) {
    if let Some(frame) = frame
        && frame.module.is_none()
        && frame
            .function
            .as_deref()
            .is_some_and(|f| !f.contains(['(', ' ', ':']))
    {
        frame.module = frame.function.take();
    }
}

/// `Host Frame:` text, in any of the formats seen: `/lib/libcuda.so.1 (cuLaunchKernel +
/// 0x2b8) [0x222dc8]`, `main [0x9c0b] in /path/app`, `main [0x9c0b]`, `[0x2dcdbf] in
/// libcuda.so.1`.
fn parse_host_frame(text: &str) -> HostFrame {
    let text = text.trim();
    // CUDA 11: `module (function + 0xoff) [0xaddr]`
    if let Some((module, rest)) = text.split_once(" (")
        && !module.contains(' ')
        && (module.contains('/') || module.contains(".so") || rest.contains(" + 0x"))
    {
        let function = rest
            .rsplit_once(')')
            .map_or(rest, |(f, _)| f)
            .split(" + 0x")
            .next()
            .unwrap_or("")
            .trim();
        return HostFrame {
            function: (!function.is_empty()).then(|| function.to_owned()),
            module: Some(module.to_owned()),
        };
    }
    let (before, module) = match text.rfind("] in ") {
        Some(i) => (&text[..=i], Some(text[i + 5..].trim().to_owned())),
        None => match text.rfind(" in ") {
            Some(i) if !text[..i].contains('[') => {
                (&text[..i], Some(text[i + 4..].trim().to_owned()))
            }
            _ => (text, None),
        },
    };
    let function = match before.rfind(" [0x").or_else(|| before.find("[0x")) {
        Some(i) => before[..i].trim(),
        None => before.trim(),
    };
    // `main in main.cu:688`: the host source line, when the host code has debug info.
    let function = function.split(" in ").next().unwrap_or(function).trim();
    // `/usr/local/cuda/lib64/libcudart.so.7.5 [0x146ad]`: a module, no symbol.
    if module.is_none() && (function.starts_with('/') || function.contains(".so")) {
        return HostFrame {
            function: None,
            module: Some(function.to_owned()),
        };
    }
    HostFrame {
        function: (!function.is_empty()).then(|| function.to_owned()),
        module,
    }
}

/// `(232,0,0) in block (3,0,0)`.
fn parse_thread_block(text: &str) -> (Option<Dim3>, Option<Dim3>) {
    let (thread, block) = text.split_once(" in block ").unwrap_or((text, ""));
    (parse_dim3(thread), parse_dim3(block))
}

/// `(232,0,0)` or `(232, 0, 0)`.
fn parse_dim3(text: &str) -> Option<Dim3> {
    let inner = text.trim().strip_prefix('(')?.split(')').next()?;
    let mut out = [0u32; 3];
    let mut parts = inner.split(',');
    for slot in &mut out {
        *slot = parts.next()?.trim().parse().ok()?;
    }
    Some(out)
}

/// `1 bytes after the nearest allocation at 0x7f.. of size 4000 bytes`.
fn parse_nearest(text: &str) -> Option<NearestAllocation> {
    let distance = i64::try_from(first_number(text)?).ok()?;
    let distance_bytes = if text.contains(" before ") {
        -distance
    } else if text.contains(" after ") {
        distance
    } else {
        return None;
    };
    let allocation_bytes = text
        .split_once(" of size ")
        .and_then(|(_, s)| first_number(s))?;
    Some(NearestAllocation {
        distance_bytes,
        allocation_bytes,
    })
}

fn parse_hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim().strip_prefix("0x")?, 16).ok()
}

/// The first run of decimal digits in `text`.
fn first_number(text: &str) -> Option<u64> {
    numbers(text).first().copied()
}

/// Every run of decimal digits in `text` (hex numbers are skipped whole).
/// `5,026,885,797` (thousands separators, as newer versions print) reads as one number.
fn numbers(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if !b.is_ascii_digit() || !starts_word {
            i += 1;
            continue;
        }
        let mut value: u64 = 0;
        let mut overflow = false;
        let mut j = i;
        while j < bytes.len() {
            if bytes[j].is_ascii_digit() {
                match value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(bytes[j] - b'0')))
                {
                    Some(v) => value = v,
                    None => overflow = true,
                }
                j += 1;
            } else if bytes[j] == b','
                && bytes
                    .get(j + 1..j + 4)
                    .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
                && !bytes.get(j + 4).is_some_and(u8::is_ascii_digit)
            {
                j += 1;
            } else {
                break;
            }
        }
        // `0x7f..` and `12abc` are not decimal numbers.
        let ends_word = !bytes.get(j).is_some_and(u8::is_ascii_alphanumeric);
        if ends_word && !overflow {
            out.push(value);
        }
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_in_every_format() {
        let new = parse_location("scale(float *, const float *, int)+0x70 in /w/oob_write.cu:10");
        assert_eq!(new.function, "scale(float *, const float *, int)");
        assert_eq!(new.file.as_deref(), Some("/w/oob_write.cu"));
        assert_eq!(new.line, Some(10));
        assert_eq!(new.short_function(), "scale");
        let bare = parse_location("compress(const unsigned int *, uint2 *, int)+0xb0");
        assert_eq!(
            (bare.short_function().as_str(), bare.file),
            ("compress", None)
        );
        let old =
            parse_location("0x000000c8 in /p/helper.cuh:75:void project<double>(double*, int)");
        assert_eq!(old.file.as_deref(), Some("/p/helper.cuh"));
        assert_eq!(old.line, Some(75));
        assert_eq!(old.short_function(), "project<double>");
        let triton = parse_location("gather_kernel+0x1d0 in /w/triton_oob.py:21");
        assert_eq!(
            (triton.short_function().as_str(), triton.line),
            ("gather_kernel", Some(21))
        );
    }

    #[test]
    fn host_frames_in_every_format() {
        let f = parse_host_frame("/usr/lib/libcuda.so.1 (cuLaunchKernel + 0x2cd) [0x15865d]");
        assert_eq!(f.function.as_deref(), Some("cuLaunchKernel"));
        assert_eq!(f.module.as_deref(), Some("/usr/lib/libcuda.so.1"));
        let f = parse_host_frame("cu-vector-test (cudaF_add_diag + 0xdc) [0xbb9bc]");
        assert_eq!(f.function.as_deref(), Some("cudaF_add_diag"));
        let f = parse_host_frame("main in main.cu:688 [0xab50] in main");
        assert_eq!(
            (f.function.as_deref(), f.module.as_deref()),
            (Some("main"), Some("main"))
        );
        let f = parse_host_frame("[0x2dcdbf] in libcuda.so.1");
        assert_eq!(
            (f.function, f.module.as_deref()),
            (None, Some("libcuda.so.1"))
        );
        let f = parse_host_frame("/usr/local/cuda/lib64/libcudart.so.7.5 [0x146ad]");
        assert_eq!(f.function, None);
    }

    #[test]
    fn numbers_with_separators_and_hex() {
        assert_eq!(
            numbers("5,026,885,797 bytes after 0x78b6 of size 8,388,608 bytes"),
            vec![5_026_885_797, 8_388_608]
        );
        assert_eq!(
            numbers("(error 719) 12abc 99999999999999999999999 7"),
            vec![719, 7]
        );
        assert_eq!(
            numbers("3 hazards displayed (1 error, 2 warnings)"),
            vec![3, 1, 2]
        );
    }

    #[test]
    fn access_at_is_an_address_line() {
        let mut p = Parser::new();
        let mut events = Vec::new();
        for line in [
            "========= Invalid __global__ read of size 4 bytes",
            "=========     at compress(const unsigned int *)+0xb0",
            "=========     Access at 0x7f698ba00144 is out of bounds",
            "=========     and is 1 bytes after the nearest allocation at 0x7f698ba00000 of size 324 bytes",
        ] {
            events.extend(p.push_line(line));
        }
        events.extend(p.finish());
        let [Event::Report(r)] = events.as_slice() else {
            panic!("{events:?}")
        };
        assert_eq!(r.address, Some(0x7f69_8ba0_0144));
        assert!(matches!(
            r.kind,
            ReportKind::InvalidAccess {
                problem: AddressProblem::OutOfBounds,
                nearest: Some(NearestAllocation {
                    distance_bytes: 1,
                    allocation_bytes: 324
                }),
                ..
            }
        ));
    }
}
