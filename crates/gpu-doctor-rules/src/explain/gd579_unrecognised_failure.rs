//! GD579: the job failed, and no rule knows the failure.
//!
//! Unlike the other rules, this one runs after them (see `diagnose`): it speaks only when
//! none of them found an error, so it never competes with a known cause.

use super::{Hit, evidence};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{FailureForm, LogFacts, ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD579",
    name: "unrecognised-failure",
    cause: Some(Cause::Other),
    summary: "The job failed (an exception, a fatal check, a crash) with an error that is none of the GPU causes gpu-doctor knows",
    body: r#"## What it does
When no other rule found an error, looks for the line that says the job failed: a Python
exception (`ValueError: ...`, `cupy.cuda.cufft.CuFFTError: CUFFT_INVALID_VALUE`), a fatal
check or an uncaught C++ exception (glog's `F0823 ... Check failed: ...`, `terminate called
after throwing ...`, `fatal error`), a program's own error report (a logger's `ERROR:` or
`level=fatal`, `program: error: ...`, a compiler's `file.h:119:2: error: ...`, docker's
`Error response from daemon`, systemd's `status=1/FAILURE`), or a crash (`Segmentation
fault`, `Aborted (core dumped)`, a bare `Killed`, whose first remedy is the kernel log's OOM
killer). It reports the one that ended the job: among the failure lines near the last one,
the most telling (an exception over a fatal check over a crash; the last of its kind, which in
a chained Python traceback is the one that ended the job). When the job printed more than 200
lines after it, it may have been handled, and the finding is a warning. A compiled extension
that does not load (`_regex_split_ops.so: undefined symbol: _ZN10tensorflow...`) gets a first
remedy that says which library it was built against (TensorFlow, by the symbol's C++
namespace; one built against another PyTorch is GD543's) and how to rebuild it; nvcc refusing the host compiler (`#error -- unsupported
GNU version! gcc versions later than 6 are not supported!`) gets the compiler to build with.

## Why is this bad?
The job failed, but not with an out-of-memory error, a CUDA, cuDNN, cuBLAS or NCCL error, a
driver or library problem or a hardware fault that gpu-doctor knows: the cause is most
likely in the program, its data or a library's own bug. Saying "no problem found" would be
wrong; this says where to look instead.

## Example
```
  File "train.py", line 88, in <module>
    labels = targets[:, 0].long()
AssertionError: Label class 24 exceeds nc=24 in yolo.yaml. Possible class labels are 0-23
```

## How to fix
1. Read the traceback above the line: the error is in the code, the data or the library that
   raised it, and its message usually says which.
2. Rule out the environment and the GPU: `gpu-doctor check`, and for a crash
   `gpu-doctor explain --kernel` (an Xid at the same time points at the GPU).
3. A crash inside GPU code can be an invalid memory access that was not reported as one:
   run it under `compute-sanitizer` (`gpu-doctor sanitize -- python train.py`).
"#,
};

/// The failure finding, when the job printed a failure line. `diagnose` asks only when no
/// other rule found an error.
pub(crate) fn check(facts: &LogFacts) -> Option<Hit> {
    let (obs, form, name) = most_telling(facts)?;
    // With one input, the lines after the failure say whether the job went on.
    let after = (facts.sources.len() == 1)
        .then(|| facts.lines_scanned.saturating_sub(obs.line))
        .filter(|n| *n > LINES_AFTER_AN_END);
    let line = shortened(&obs.text);
    let (what, confidence) = match (form, name) {
        (FailureForm::Exception, Some(_)) => (format!("failed with `{line}`"), 0.4),
        (FailureForm::Exception, None) | (FailureForm::Fatal, _) => {
            (format!("failed with `{line}`"), 0.35)
        }
        (FailureForm::Crash, _) => (format!("crashed (`{line}`)"), 0.3),
    };
    let went_on = after
        .map(|n| format!(" The job printed {n} more lines after it, so it may have been handled."))
        .unwrap_or_default();
    let mut f = Finding::new(
        DOC.code,
        Cause::Other,
        if after.is_some() {
            Severity::Warn
        } else {
            Severity::Error
        },
        format!(
            "The job {what}, which is none of the GPU failures gpu-doctor knows: the cause is most likely in the program, its data or a library, not in the GPU, its memory or its driver.{went_on}"
        ),
    )
    .confidence(if after.is_some() { confidence * 0.5 } else { confidence })
    .with_evidence(evidence(obs));
    if let Some((remedy, command)) = undefined_symbol_remedy(&obs.text) {
        f = f.with_remedy(remedy, Some(command.to_owned()), None);
    }
    if let Some((remedy, command)) = host_compiler_remedy(&obs.text) {
        f = f.with_remedy(remedy, Some(command), None);
    }
    if let Some((remedy, command, detail)) = libtorch_link_remedy(&obs.text) {
        f = f.with_remedy(remedy, Some(command.to_owned()), Some(detail.to_owned()));
    }
    if obs.text.trim() == "Killed" || obs.text.contains(" Killed ") {
        f = f.with_remedy(
            "A process killed with no error of its own was most often killed by the kernel for lack of host memory: look for the OOM killer in the kernel log",
            Some("gpu-doctor explain --kernel   # or: dmesg -T | grep -i -E 'killed process|out of memory'".to_owned()),
            Some("then load less into RAM (fewer DataLoader workers, memory-mapped data, a smaller model load) or add swap".to_owned()),
        );
    }
    f = f
    .with_remedy(
        if form == FailureForm::Crash {
            "Find where it crashed: Python's fault handler prints the Python stack, gdb the native one"
        } else {
            "Read the traceback that ends at this line: the error's own message names the code, data or library at fault"
        },
        (form == FailureForm::Crash).then(|| "python -X faulthandler train.py   # or: gdb -batch -ex run -ex bt --args python train.py".to_owned()),
        None,
    )
    .with_remedy(
        "Rule out the environment and the GPU",
        Some("gpu-doctor check".to_owned()),
        Some("and gpu-doctor explain --kernel for Xids logged at the same time".to_owned()),
    );
    if form == FailureForm::Crash {
        f = f.with_remedy(
            "A crash in GPU code can be an invalid memory access: run the job under compute-sanitizer",
            Some("gpu-doctor sanitize -- python train.py".to_owned()),
            Some("expect a 10–100× slowdown; a small input that still crashes is enough".to_owned()),
        );
    }
    Some(Hit {
        finding: f,
        seq: obs.seq,
    })
}

/// A compiled library that does not load because a C++ symbol of its host library is missing
/// (`_regex_split_ops.so: undefined symbol: _ZN10tensorflow...`): it was built against another
/// version of that library. The mangled name's namespace says which. (One built against
/// another PyTorch is GD543's: the scanner knows PyTorch's namespaces.)
fn undefined_symbol_remedy(text: &str) -> Option<(&'static str, &'static str)> {
    let (_, symbol) = text.split_once("undefined symbol: ")?;
    let tensorflow = [
        "_ZN10tensorflow",
        "_ZNK10tensorflow",
        "_ZN6tflite",
        "_ZN3tsl",
    ];
    if tensorflow.iter().any(|p| symbol.starts_with(p)) {
        Some((
            "The op library was built against another TensorFlow than the one installed: install the release of the package made for this TensorFlow",
            "pip show tensorflow <package>   # then pin the pair the package documents",
        ))
    } else {
        Some((
            "A compiled library was built against another version of a library it links: reinstall the package for the versions installed",
            "ldd -r <the .so named in the error> | grep undefined",
        ))
    }
}

/// A C++ program that does not link against libtorch: the symbols it misses are libtorch's
/// (`undefined reference to `c10::Error::Error(c10::SourceLocation, std::string const&)'`).
/// The usual reason is the C++ ABI: libtorch comes in a pre-cxx11-ABI and a cxx11-ABI build,
/// and a program compiled with the other setting names `std::string` differently; the other
/// is headers and library of different releases.
fn libtorch_link_remedy(text: &str) -> Option<(&'static str, &'static str, &'static str)> {
    let (_, symbol) = text.split_once("undefined reference")?;
    ["`c10::", "`at::", "`torch::", "'c10::", "'at::", "'torch::"]
        .iter()
        .any(|namespace| symbol.contains(namespace))
        .then_some((
            "The program and libtorch disagree on the C++ ABI (or are of different releases): link the libtorch whose ABI the compiler uses, and headers and library of one release",
            "python -c 'import torch; print(torch._C._GLIBCXX_USE_CXX11_ABI)'   # for a pip torch; a downloaded libtorch names its ABI in the file name",
            "download the cxx11-ABI libtorch, or compile the program with -D_GLIBCXX_USE_CXX11_ABI=0 to match a pre-cxx11 one",
        ))
}

/// nvcc refusing the host compiler (`#error -- unsupported GNU version! gcc versions later
/// than 6 are not supported!`, the same for clang and Visual Studio): each CUDA release
/// supports host compilers up to a version, so an up-to-date system compiler is often too new
/// for an older toolkit.
fn host_compiler_remedy(text: &str) -> Option<(&'static str, String)> {
    let (_, what) = text.split_once("#error -- unsupported ")?;
    let newest = what
        .split_once("versions later than ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .filter(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    let command = if what.starts_with("GNU") {
        let gcc = newest.unwrap_or("<supported>");
        format!(
            "export NVCC_CCBIN=/usr/bin/g++-{gcc} CC=gcc-{gcc} CXX=g++-{gcc}   # or: nvcc -ccbin g++-{gcc} ...; a newer CUDA toolkit supports newer gcc"
        )
    } else if what.starts_with("clang") {
        let clang = newest.unwrap_or("<supported>");
        format!("nvcc -ccbin clang++-{clang} ...   # or a newer CUDA toolkit")
    } else {
        "install the Visual Studio version this CUDA release lists, or a CUDA release that supports yours (nvcc -allow-unsupported-compiler at your own risk)".to_owned()
    };
    Some((
        "nvcc does not support this host compiler version: build with a compiler this CUDA release supports, or install a newer CUDA toolkit",
        command,
    ))
}

/// The failure line that ended the job: near the last one, the most telling (a traceback's
/// exception over the `Aborted (core dumped)` printed after it), the latest of its form.
fn most_telling(facts: &LogFacts) -> Option<(&Observation, FailureForm, Option<&str>)> {
    let failures: Vec<_> = facts
        .observations
        .iter()
        .filter_map(|o| match &o.kind {
            ObsKind::Failure { form, name } => Some((o, *form, name.as_deref())),
            _ => None,
        })
        .collect();
    let (last, ..) = *failures.last()?;
    failures
        .into_iter()
        .filter(|(o, ..)| o.source == last.source && o.line + ENDING_LINES >= last.line)
        .max_by_key(|(o, form, _)| (*form, o.seq))
}

/// How many lines before the last failure line still belong to the failure that ended the job
/// (a traceback's exception, then the C++ runtime's and the shell's last words).
const ENDING_LINES: u64 = 30;

/// How many lines may follow a failure line before the job looks like it went on after it (a
/// handled exception, a retry).
const LINES_AFTER_AN_END: u64 = 200;

/// The line as the message quotes it: at most 160 characters.
fn shortened(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
