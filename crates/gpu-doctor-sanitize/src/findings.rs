//! The rules GD601–GD610: one [`Finding`] per [`Defect`], with what to do next.
//!
//! Pure: defects and totals in, findings out. Each rule's documentation (`gpu-doctor rule GD6xx`) lives in
//! `gpu_doctor_rules::sanitize` with the other rules; its logic is one function below.
//!
//! Causes: memcheck's invalid accesses and hardware exceptions are `illegal_access` (the
//! job touched memory it must not; without the sanitizer they end in
//! `cudaErrorIllegalAddress`). Races, uninitialised reads, barrier errors, leaks and tool
//! failures are `other`: they are real defects, but not the illegal-access failure class
//! that `explain` and `run` classify.

use crate::condense::{Defect, DefectKind, Totals, kernel_function, user_frame};
use crate::parse::{AddressProblem, Location, ReportKind, Space, short_name};
use gpu_doctor_model::{Cause, Evidence, Finding, Severity};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The findings for a condensed log, most severe first, then in order of appearance.
/// `source` names where the text came from (`compute-sanitizer`, a file name).
pub fn findings(defects: &[Defect], totals: &Totals, source: &str) -> Vec<Finding> {
    let kernel_defects = defects.iter().any(|d| {
        !matches!(
            d.key.kind,
            DefectKind::ApiError { .. } | DefectKind::Leak | DefectKind::ToolError { .. }
        )
    });
    let mut out: Vec<(usize, Finding)> = defects
        .iter()
        .map(|d| (d.order, finding(d, totals, source, kernel_defects)))
        .collect();
    if let Some(f) = truncation(defects, totals) {
        out.push((usize::MAX, f));
    }
    out.sort_by(|a, b| b.1.severity.cmp(&a.1.severity).then(a.0.cmp(&b.0)));
    out.into_iter().map(|(_, f)| f).collect()
}

fn finding(d: &Defect, totals: &Totals, source: &str, kernel_defects: bool) -> Finding {
    let f = match &d.key.kind {
        DefectKind::InvalidAccess {
            space,
            access,
            size,
            problem,
        } => invalid_access(d, *space, access, *size, *problem),
        DefectKind::Exception { name } => exception(d, name),
        DefectKind::Uninitialized { space, size } => uninitialized(d, *space, *size),
        DefectKind::Race { warning, accesses } => race(d, *warning, accesses),
        DefectKind::Barrier { detail } => barrier(d, detail),
        DefectKind::ApiError { error, api } => api_error(d, error, api, kernel_defects),
        DefectKind::Leak => leak(d, totals),
        DefectKind::ToolError { text } => tool_error(text),
    };
    with_evidence(f, d, source)
}

/// `` `scale` at oob_write.cu:10`` or `` `scale` `` alone.
fn where_(function: Option<&str>, loc: Option<&Location>) -> String {
    let name = function.map_or_else(|| "a kernel".to_owned(), |f| format!("`{}`", short_name(f)));
    match loc.and_then(Location::short_place) {
        Some(place) => format!("{name} at {place}"),
        None => name,
    }
}

fn location(d: &Defect) -> Option<&Location> {
    d.first.location.as_ref()
}

/// `24 reports: threads 232..255, block 3`.
fn spread(d: &Defect) -> String {
    let mut s = plural(d.count, "report");
    let mut parts = Vec::new();
    if let Some(t) = d.threads {
        let word = if t.min == t.max { "thread" } else { "threads" };
        parts.push(format!("{word} {}", t.render()));
    }
    if let Some(b) = d.blocks {
        parts.push(format!(
            "{} {}",
            if b.min == b.max { "block" } else { "blocks" },
            b.render()
        ));
    }
    if !parts.is_empty() {
        let _ = write!(s, ": {}", parts.join(", "));
    }
    s
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn launched_from(d: &Defect) -> String {
    d.key
        .user_frame
        .as_deref()
        .filter(|f| !f.is_empty())
        .map(|f| format!(", launched from {}", frame_name(f)))
        .unwrap_or_default()
}

/// `` `main` `` or, for a Python frame, `` `main` (triton_oob.py:28) ``.
fn frame_name(label: &str) -> String {
    match label.rsplit_once(" (") {
        Some((function, place)) if place.ends_with(')') && place.contains(".py:") => {
            format!("`{function}` ({place}")
        }
        _ => format!("`{}`", short_name(label)),
    }
}

fn lineinfo_remedy(f: Finding, d: &Defect) -> Finding {
    if location(d).is_some_and(|l| l.file.is_some()) {
        return f;
    }
    f.with_remedy(
        "Rebuild with line information so the report names the source line",
        Some("nvcc -lineinfo ...".to_owned()),
        Some(
            "`-lineinfo` keeps optimisation; for Triton, unset TRITON_DISABLE_LINE_INFO".to_owned(),
        ),
    )
}

fn invalid_access(
    d: &Defect,
    space: Space,
    access: &str,
    size: u32,
    problem: AddressProblem,
) -> Finding {
    let loc = location(d);
    let place = where_(d.key.function.as_deref(), loc);
    let verb = access;
    let (code, what) = match problem {
        AddressProblem::Misaligned => ("GD602", "Misaligned"),
        AddressProblem::OutOfBounds => ("GD601", "Out-of-bounds"),
        AddressProblem::Unknown => ("GD601", "Invalid"),
    };
    let message = format!(
        "{what} {} {verb} of {size} bytes in {place} ({}){}",
        space.as_str(),
        spread(d),
        launched_from(d)
    );
    let mut f = Finding::new(code, Cause::IllegalAccess, Severity::Error, message);
    if problem == AddressProblem::Misaligned {
        f = f.with_remedy(
            format!(
                "Align the {size}-byte {verb} in {place}: its address is not a multiple of {size}"
            ),
            None,
            Some(
                "check pointer casts to wider types (`reinterpret_cast<float4*>`) and byte offsets added to typed pointers".to_owned(),
            ),
        );
    } else {
        let range = d
            .offsets
            .map(|(lo, hi, alloc)| describe_offsets(lo, hi, alloc, size));
        let action = match &range {
            Some(r) => format!(
                "{} {r}: check the index against the buffer's length (e.g. `if (i < n)`) before the {verb}",
                capitalise(&place)
            ),
            None => format!(
                "Check the index in {place} against the buffer's length (e.g. `if (i < n)`) before the {verb}"
            ),
        };
        f = f.with_remedy(
            action,
            None,
            Some("a grid rounded up to whole blocks has more threads than elements; the extra threads must not touch memory".to_owned()),
        );
    }
    lineinfo_remedy(f, d)
}

/// `writes elements 1000..1023 of a 1000-element buffer (4-byte items)`, or in bytes when
/// the numbers do not divide.
fn describe_offsets(lo: i64, hi: i64, alloc: u64, size: u32) -> String {
    let size_i = i64::from(size.max(1));
    let alloc_i = i64::try_from(alloc).unwrap_or(i64::MAX);
    // Far from the nearest allocation, that allocation is a bystander: say so rather
    // than give an index into a buffer the code never meant.
    // The access nearest the buffer decides: a grid overrun starts right at the end.
    let past = lo.saturating_sub(alloc_i);
    if hi < -alloc_i.max(4096) || past > alloc_i.max(4096) {
        return format!(
            "touches memory far outside any allocation ({} bytes from the nearest one, of {alloc} bytes): the index is garbage or unchecked",
            if hi < 0 { -hi } else { past }
        );
    }
    if lo % size_i == 0 && hi % size_i == 0 && alloc_i % size_i == 0 {
        let (a, b, n) = (lo / size_i, hi / size_i, alloc_i / size_i);
        let elems = if a == b {
            format!("element {a}")
        } else {
            format!("elements {a}..{b}")
        };
        format!("touches {elems} of a {n}-element buffer ({size}-byte items)")
    } else {
        let bytes = if lo == hi {
            format!("byte offset {lo}")
        } else {
            format!("byte offsets {lo}..{hi}")
        };
        format!("touches {bytes} of a {alloc}-byte allocation")
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn exception(d: &Defect, name: &str) -> Finding {
    let place = where_(d.key.function.as_deref(), location(d));
    let message = format!("{name} in {place} ({}){}", spread(d), launched_from(d));
    let lower = name.to_ascii_lowercase();
    let (action, detail) = if lower.contains("stack overflow") {
        (
            "Shrink the kernel's stack use (deep recursion, large local arrays) or raise the limit",
            Some("cudaDeviceSetLimit(cudaLimitStackSize, bytes)".to_owned()),
        )
    } else if lower.contains("shared or local") {
        (
            "Check the shared and local array indices in this kernel: one is past the array (or past the dynamic shared memory the launch asked for)",
            None,
        )
    } else if lower.contains("malloc/free") {
        (
            "Fix the device-side `malloc`/`free` pair: a double free, or `free` of a pointer device `malloc` did not return",
            None,
        )
    } else if lower.contains("misaligned") {
        (
            "Align the access: its address is not a multiple of its size",
            None,
        )
    } else {
        (
            "Find the faulting instruction: it is the `at` line of the first report",
            None,
        )
    };
    let f = Finding::new("GD603", Cause::IllegalAccess, Severity::Error, message)
        .with_remedy(action, None, detail);
    lineinfo_remedy(f, d)
}

fn uninitialized(d: &Defect, space: Space, size: u32) -> Finding {
    let place = where_(d.key.function.as_deref(), location(d));
    let message = format!(
        "Uninitialised {} memory read of {size} bytes in {place} ({}){}",
        space.as_str(),
        spread(d),
        launched_from(d)
    );
    let f = Finding::new("GD605", Cause::Other, Severity::Error, message)
        .with_remedy(
            format!("Initialise the memory read in {place} before the kernel runs"),
            Some("cudaMemset(ptr, 0, bytes);  // right after cudaMalloc".to_owned()),
            Some("cudaMalloc returns memory holding whatever was there before".to_owned()),
        )
        .with_remedy(
            "In PyTorch, `torch.empty` is uninitialised too: use `torch.zeros`, or write every element first",
            None,
            None,
        );
    lineinfo_remedy(f, d)
}

fn race(d: &Defect, warning: bool, accesses: &[(String, Location)]) -> Finding {
    let kernel = accesses
        .iter()
        .map(|(_, l)| l.function.as_str())
        .find(|f| !f.is_empty())
        .map_or_else(|| "a kernel".to_owned(), |f| format!("`{}`", short_name(f)));
    let describe = |(access, loc): &(String, Location)| {
        let place = loc
            .short_place()
            .unwrap_or_else(|| format!("`{}`", short_name(&loc.function)));
        format!("{} at {place}", access.to_ascii_lowercase())
    };
    let space = match &d.first.kind {
        ReportKind::Hazard { space, .. } => *space,
        _ => Space::Shared,
    };
    let hazard = match &d.first.kind {
        ReportKind::Hazard { hazard, .. } => format!("{hazard} hazard"),
        _ => "race".to_owned(),
    };
    let pair = match accesses {
        [] => String::new(),
        [one] => format!(" on the {} by several threads", describe(one)),
        [a, rest @ ..] => format!(
            " between the {} and the {}",
            describe(a),
            rest.iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join(" and the ")
        ),
    };
    let hazards = if d.hazards > 0 {
        plural(d.hazards, "hazard")
    } else {
        plural(d.count, "report")
    };
    let message = format!(
        "{} {hazard} in {kernel}{pair} ({hazards}){}",
        if space == Space::Shared {
            "Shared-memory"
        } else {
            "Memory"
        },
        launched_from(d)
    );
    let severity = if warning {
        Severity::Warn
    } else {
        Severity::Error
    };
    let writes: Vec<_> = accesses
        .iter()
        .filter(|(a, _)| a.eq_ignore_ascii_case("write"))
        .collect();
    let others: Vec<_> = accesses
        .iter()
        .filter(|(a, _)| !a.eq_ignore_ascii_case("write"))
        .collect();
    let mut f = Finding::new("GD604", Cause::Other, severity, message);
    f = match (writes.first(), others.first()) {
        // racecheck's warnings are the warp-level hazards: both threads are in one warp.
        (Some(w), Some(r)) if warning => f.with_remedy(
            format!(
                "Add `__syncwarp()` between the {} and the {}",
                describe(w),
                describe(r)
            ),
            Some("__syncwarp();".to_owned()),
            Some("since Volta the threads of a warp need not run in lockstep: implicit warp-synchronous code must synchronise".to_owned()),
        ),
        (Some(w), Some(r)) => f.with_remedy(
            format!(
                "Add `__syncthreads()` between the {} and the {}",
                describe(w),
                describe(r)
            ),
            Some("__syncthreads();".to_owned()),
            Some("threads of other warps otherwise read before (or write after) each other; use `__syncwarp()` when both threads are in one warp".to_owned()),
        ),
        (Some(w), None) => f.with_remedy(
            format!(
                "Several threads write the same shared word ({}): let one thread write it (`if (threadIdx.x == 0)`) or give each thread its own slot",
                describe(w)
            ),
            None,
            Some("then `__syncthreads()` before any thread reads it".to_owned()),
        ),
        _ => f.with_remedy(
            "Order the accesses with `__syncthreads()` (or `__syncwarp()` within a warp)",
            None,
            None,
        ),
    };
    if accesses.iter().all(|(_, l)| l.file.is_none()) {
        f = f.with_remedy(
            "Rebuild with line information so the report names the source lines",
            Some("nvcc -lineinfo ...".to_owned()),
            None,
        );
    }
    f
}

fn barrier(d: &Defect, detail: &str) -> Finding {
    let loc = location(d);
    let place = where_(d.key.function.as_deref(), loc);
    let what = if detail.is_empty() {
        "Barrier error".to_owned()
    } else {
        format!("Barrier error ({})", detail.to_ascii_lowercase())
    };
    let message = format!("{what} in {place} ({}){}", spread(d), launched_from(d));
    let f = Finding::new("GD606", Cause::Other, Severity::Error, message);
    let f = if detail.to_ascii_lowercase().contains("invalid argument") {
        f.with_remedy(
            format!("Pass the barrier in {place} the mask (or thread count) of the threads that actually reach it"),
            None,
            Some("`__syncwarp(mask)`: every thread named in `mask` must call it with the same mask".to_owned()),
        )
    } else {
        f.with_remedy(
            format!("Move the barrier in {place} out of the branch so every thread of the block reaches it"),
            None,
            Some("no `if`, early `return` or thread-dependent loop bound may stand between a thread and `__syncthreads()`".to_owned()),
        )
    };
    lineinfo_remedy(f, d)
}

fn api_error(d: &Defect, error: &str, api: &str, kernel_defects: bool) -> Finding {
    let (code, message_text) = match &d.first.kind {
        ReportKind::ApiError { code, message, .. } => (*code, message.clone()),
        _ => (None, String::new()),
    };
    let follows = kernel_defects
        && matches!(
            error,
            "cudaErrorLaunchFailure"
                | "cudaErrorIllegalAddress"
                | "cudaErrorMisalignedAddress"
                | "cudaErrorHardwareStackError"
                | "cudaErrorIllegalInstruction"
                | "CUDA_ERROR_LAUNCH_FAILED"
                | "CUDA_ERROR_ILLEGAL_ADDRESS"
        );
    let cause = match error {
        "cudaErrorIllegalAddress" | "CUDA_ERROR_ILLEGAL_ADDRESS" | "cudaErrorMisalignedAddress" => {
            Cause::IllegalAccess
        }
        "cudaErrorMemoryAllocation" | "CUDA_ERROR_OUT_OF_MEMORY" => Cause::OomCapacity,
        "cudaErrorAssert" | "CUDA_ERROR_ASSERT" => Cause::DeviceAssert,
        _ if follows => Cause::IllegalAccess,
        _ => Cause::Other,
    };
    let code_text = code.map(|c| format!(" (error {c})")).unwrap_or_default();
    let what = if message_text.is_empty() {
        String::new()
    } else {
        format!(": {message_text}")
    };
    let times = if d.count == 1 {
        String::new()
    } else {
        format!(" ({} times)", d.count)
    };
    let from = d
        .key
        .user_frame
        .as_deref()
        .filter(|f| !f.is_empty())
        .map(|f| format!(" from {}", frame_name(f)))
        .unwrap_or_default();
    let api_name = if api.is_empty() { "a CUDA call" } else { api };
    let message = format!("`{api_name}`{from} failed with {error}{code_text}{what}{times}");
    let severity = if follows {
        Severity::Warn
    } else {
        Severity::Error
    };
    let f = Finding::new("GD607", cause, severity, message);
    if follows {
        f.confidence(0.75).with_remedy(
            "Fix the kernel defect reported above: this error is its consequence",
            None,
            Some("after a kernel fault every later CUDA call in the process fails".to_owned()),
        )
    } else {
        f.with_remedy(
            format!("Check the arguments and the return value of `{api_name}`{from}"),
            None,
            (!message_text.is_empty()).then(|| format!("the runtime said: {message_text}")),
        )
    }
}

fn leak(d: &Defect, totals: &Totals) -> Finding {
    let from = d
        .key
        .user_frame
        .as_deref()
        .filter(|f| !f.is_empty())
        .map(|f| format!(", allocated in {}", frame_name(f)))
        .unwrap_or_default();
    let message = format!(
        "{} of device memory never freed ({}{from})",
        plural(d.leaked_bytes, "byte"),
        plural(d.count, "allocation")
    );
    Finding::new("GD608", Cause::Other, Severity::Warn, message).with_remedy(
        "`cudaFree` each allocation once it is no longer needed",
        None,
        totals.leak_summary.map(|(bytes, n)| {
            format!(
                "the run leaked {} in {} in all",
                plural(bytes, "byte"),
                plural(n, "allocation")
            )
        }),
    )
}

fn tool_error(text: &str) -> Finding {
    let lower = text.to_ascii_lowercase();
    let (action, command) = if lower.contains("not supported") {
        (
            "Run on a machine where compute-sanitizer supports the GPU and can reach its debug interface (not inside gVisor or a similar sandbox)",
            None,
        )
    } else if lower.contains("no attachable process") || lower.contains("timed-out") {
        (
            "The job did not start CUDA in time: raise the timeout, or let jobs that never use CUDA pass",
            Some("--launch-timeout 120  (or --require-cuda-init=no)".to_owned()),
        )
    } else {
        (
            "Run compute-sanitizer by hand on the job to read its message in full",
            Some("compute-sanitizer --tool memcheck CMD".to_owned()),
        )
    };
    Finding::new(
        "GD609",
        Cause::Other,
        Severity::Error,
        format!("compute-sanitizer could not check the job: {text}"),
    )
    .with_remedy(action, command, None)
}

fn truncation(defects: &[Defect], totals: &Totals) -> Option<Finding> {
    let mut notes = Vec::new();
    if let Some(summary) = totals.error_summary
        && (summary > totals.error_reports || totals.not_printed.is_some())
    {
        notes.push(format!(
            "compute-sanitizer counted {} but printed {}",
            plural(summary, "error"),
            totals.error_reports
        ));
    }
    if totals.ungrouped > 0 {
        notes.push(format!(
            "{} of further defects were counted but not grouped (more than {} distinct defects)",
            plural(totals.ungrouped, "report"),
            defects.len()
        ));
    }
    if notes.is_empty() {
        return None;
    }
    Some(
        Finding::new(
            "GD610",
            Cause::Other,
            Severity::Info,
            format!("Not every report was read: {}", notes.join("; ")),
        )
        .with_remedy(
            "Counts in the other findings cover only the printed reports: fix those, then run again",
            Some("compute-sanitizer --print-limit 0 ...".to_owned()),
            None,
        ),
    )
}

/// The first occurrence, verbatim: its lines up to the host backtrace, then the user's
/// frame. The first line carries the numbers.
fn with_evidence(mut f: Finding, d: &Defect, source: &str) -> Finding {
    const MAX_EVIDENCE_LINES: usize = 12;
    let mut values = BTreeMap::new();
    values.insert("reports".to_owned(), d.count as f64);
    if d.hazards > 0 {
        values.insert("hazards".to_owned(), d.hazards as f64);
    }
    if d.leaked_bytes > 0 {
        values.insert("leaked_bytes".to_owned(), d.leaked_bytes as f64);
    }
    if let Some((lo, hi, alloc)) = d.offsets {
        values.insert("first_offset_bytes".to_owned(), lo as f64);
        values.insert("last_offset_bytes".to_owned(), hi as f64);
        values.insert("allocation_bytes".to_owned(), alloc as f64);
    }
    let user = user_frame(&d.first.host_frames, kernel_function(&d.first))
        .and_then(|f| f.function.clone());
    let mut in_backtrace = false;
    let mut shown = 0;
    for (i, raw) in d.first.lines.iter().enumerate() {
        let text = raw.trim();
        let body = text.trim_start_matches('=').trim();
        if body.starts_with("Saved host backtrace") {
            in_backtrace = true;
        } else if in_backtrace {
            let is_user = user.as_deref().is_some_and(|u| {
                !u.is_empty() && body.starts_with("Host Frame:") && body.contains(u)
            });
            if !is_user {
                continue;
            }
        }
        if shown == MAX_EVIDENCE_LINES {
            break;
        }
        shown += 1;
        f.evidence.push(Evidence {
            source: source.to_owned(),
            line: (i == 0).then_some(d.first.first_line),
            text: text.to_owned(),
            values: if i == 0 {
                std::mem::take(&mut values)
            } else {
                BTreeMap::new()
            },
        });
    }
    f
}
