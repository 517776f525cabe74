//! Lines that say a job failed, whatever the failure: a Python exception (`ValueError: ...`),
//! a fatal check (`F0823 10:05:15.257066  3197 file.cc:137] Check failed: ...`), an uncaught
//! C++ exception, a crash (`Segmentation fault (core dumped)`).
//!
//! The recognisers in `recognize` know GPU failures by their words; these lines are what is
//! left when none of them knew the line. They let `explain` say "the job failed with this,
//! and it is none of the GPU causes I know" instead of "no problem", and they are cheap to
//! find: a Python exception is the first word of its line, so [`starts_like_failure`] looks
//! at a line's first word only, and crashes at where a line starts.

use crate::facts::{FailureForm, ObsKind};

/// Whether a line (after its indentation) starts the way a failure line starts. A fast,
/// byte-level look for lines without a trigger word; [`failure`] decides on the clean text.
pub(crate) fn starts_like_failure(line: &[u8]) -> bool {
    match line.first() {
        Some(b'F') if glog_fatal(line) => true,
        Some(b'S' | b'A' | b'B' | b't' | b'F' | b'K' | b'n')
            if CRASH_STARTS
                .iter()
                .chain(FATAL_STARTS)
                .any(|s| line.starts_with(s)) =>
        {
            true
        }
        _ if reports_an_error(line) => true,
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => exception_name(line).is_some(),
        _ => false,
    }
}

/// A program's own report that it failed, in the forms programs print one: a logger's error
/// level at the start of the line (`ERROR:root:...`, vLLM's `ERROR 05-29 12:00:01 ...`,
/// Julia's `┌ Error: ...`), the GNU form `program: error: message` (argparse, slurmctld) and
/// the compilers' `file.h:119:2: error: ...`, docker's `docker: Error response from daemon`,
/// a Go service's `time="..." level=fatal msg="..."`.
fn reports_an_error(line: &[u8]) -> bool {
    match line.first() {
        Some(b'E' | b'e' | b'C' | 0xe2) => ERROR_STARTS.iter().any(|start| {
            line.strip_prefix(*start).is_some_and(|rest| {
                !is_a_value(rest) && !NOT_FAILURES.iter().any(|s| rest.starts_with(s))
            })
        }),
        Some(b't') if line.starts_with(b"time=") => go_log_error(line),
        Some(b'd') if line.starts_with(b"docker: Error response from daemon") => true,
        // The loader refusing a library, which names it first: `/path/ext.so: undefined
        // symbol: _ZN3c10...`.
        Some(b'/')
            if memchr::memmem::find(&line[..line.len().min(400)], b": undefined symbol: ")
                .is_some() =>
        {
            true
        }
        Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_') => {
            program_error(line)
        }
        _ => false,
    }
}

/// Line starts of a logger's error or a tool's error message.
const ERROR_STARTS: &[&[u8]] = &[
    b"ERROR:",
    b"ERROR ",
    b"Error: ",
    b"error: ",
    b"CRITICAL:",
    b"CRITICAL ",
    // Julia's `@error` box.
    "\u{250c} Error: ".as_bytes(),
];

/// What follows an error start in messages that are not failures: pip's resolver prints its
/// conflicts as an `ERROR:` and installs anyway.
const NOT_FAILURES: &[&[u8]] = &[b" pip's dependency resolver"];

/// `program: error: message` or `file.c:12:3: error: message` (also `fatal error:`): the first
/// word ends with `:` and the next says error.
fn program_error(line: &[u8]) -> bool {
    let head = &line[..line.len().min(240)];
    let Some(space) = memchr::memchr(b' ', head) else {
        return false;
    };
    if space < 2 || head[space - 1] != b':' {
        return false;
    }
    let rest = &line[space + 1..];
    // The loader's own words for a program it could not start: `darknet_ros_node: error while
    // loading shared libraries: libopencv_highgui.so.3.2: cannot open shared object file`.
    [
        "error: ",
        "fatal error: ",
        "ERROR: ",
        "fatal: ",
        "error while loading shared libraries: ",
        // The linker's report of a symbol no library gave: `x.o:(.text+0x30e): undefined
        // reference to `c10::Error::Error(...)'` (and its `more undefined references`).
        "undefined reference to `",
        "more undefined references to `",
    ]
    .iter()
    .any(|word| rest.starts_with(word.as_bytes()))
}

/// A Go service's log line at level error or fatal: logrus' `time="..." level=fatal msg=...`,
/// slog's `time=... level=ERROR source=... msg=...`.
fn go_log_error(line: &[u8]) -> bool {
    let head = &line[..line.len().min(96)];
    [
        " level=fatal",
        " level=FATAL",
        " level=error",
        " level=ERROR",
        " level=panic",
    ]
    .iter()
    .any(|level| memchr::memmem::find(head, level.as_bytes()).is_some())
}

/// TensorRT's error lines, which start with a timestamp and name no trigger word:
/// `[08/01/2022-15:41:44] [TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::35] Error Code
/// 1: Serialization (...)`, trtexec's `[02/15/2023-06:20:02] [E] Error[2]: ...`.
pub(crate) fn tensorrt_error(line: &[u8]) -> bool {
    if !matches!(line.get(1), Some(b'0'..=b'9' | b'T')) {
        return false;
    }
    let Some(close) = memchr::memchr(b']', &line[..line.len().min(32)]) else {
        return false;
    };
    let rest = &line[close + 1..];
    rest.starts_with(b" [E] ") || rest.starts_with(b" [TRT] [E] ")
}

/// What a failure line is, if it is one. `text` is a clean line that no recogniser knew.
pub(crate) fn failure(text: &str) -> Option<ObsKind> {
    let line = text.trim_start().as_bytes();
    // A service's line relayed by the journal says what it is after the journal's prefix.
    let line = crate::clean::syslog_prefix(line).unwrap_or(line);
    if let Some(name) = exception_name(line) {
        return Some(ObsKind::Failure {
            form: FailureForm::Exception,
            name: Some(name.to_owned()),
        });
    }
    // A crash first: `Fatal Python error: Segmentation fault` is Python's report of one.
    let form = if crash(line) {
        FailureForm::Crash
    } else if fatal(line) {
        FailureForm::Fatal
    } else {
        return None;
    };
    Some(ObsKind::Failure { form, name: None })
}

/// A process that died of a signal: the shell's, libc's and Python's words for it.
fn crash(line: &[u8]) -> bool {
    line.starts_with(b"Segmentation fault")
        || line.starts_with(b"Bus error")
        // `Aborted` alone or `Aborted (core dumped)`; not click's `Aborted!` or `Aborted by
        // user`.
        || line == b"Aborted"
        || line.starts_with(b"Aborted (")
        // SIGKILL, most often the kernel's OOM killer: the shell's `Killed`, a script's
        // `./run.sh: line 3: 12345 Killed   python train.py`.
        || line.trim_ascii_end() == b"Killed"
        || (has!(line, ": line ") && has!(line, " Killed "))
        || has!(line, "Segmentation fault")
        || has!(line, "core dumped")
}

/// A fatal error that is not a signal's.
fn fatal(line: &[u8]) -> bool {
    glog_fatal(line)
        || reports_an_error(line)
        // systemd's word for a service that failed: `x.service: Main process exited,
        // code=exited, status=1/FAILURE`, `x.service: Failed with result 'exit-code'.`
        || has!(line, "/FAILURE")
        || has!(line, ": Failed with result '")
        || FATAL_STARTS.iter().any(|s| line.starts_with(s))
        || has!(line, "Check failed:")
        || (has!(line, "fatal error") && !has!(line, "non-fatal error"))
        // C's `assert` (`Assertion `0' failed.`), FAISS's (`Error: 'k > 0 && k <= 2048' failed`)
        // and assertion macros (`GGML_ASSERT(src0->ne[2] == src1->ne[2]) failed`).
        || (has!(line, "' failed")
            && (has!(line, "Assertion") || has!(line, "Error: '") || has!(line, "' failed: ")))
        || (has!(line, "ASSERT(") && has!(line, ") failed"))
        // Tools that give up: `modprobe: FATAL: Module ... not found`, `FATAL:   container
        // creation failed` (Singularity), `[FATAL]`.
        || has!(line, "FATAL:")
        || has!(line, "[FATAL]")
        // TensorRT's logger: `[TRT] [E] 1: ... Error Code 1: Serialization (...)`. Not its
        // out-of-memory errors while it picks tactics: it skips the tactic and goes on.
        || (has!(line, "] [E] ") && !has!(line, "OutOfMemory") && !has!(line, "insufficient memory"))
}

/// Line starts of a process that died: the shell's and libc's words for a signal.
const CRASH_STARTS: &[&[u8]] = &[b"Segmentation fault", b"Aborted", b"Bus error", b"Killed"];

/// Line starts of a fatal error that is not a signal's: Python's, the C++ runtime's, nvcc's.
const FATAL_STARTS: &[&[u8]] = &[
    b"Fatal Python error",
    b"terminate called after throwing",
    // CUDA's compiler driver giving up (`nvcc fatal   : Unsupported gpu architecture
    // 'compute_71'` when no GPU has that architecture; the other causes have rules).
    b"nvcc fatal",
];

/// glog's fatal line: `F` and the date (`F0823 10:05:15.257066 ...`).
fn glog_fatal(line: &[u8]) -> bool {
    line.len() > 6
        && line[0] == b'F'
        && line[1..5].iter().all(u8::is_ascii_digit)
        && line[5] == b' '
}

/// The exception's class name when the line is a Python exception line: a dotted name whose
/// last part is a class name (upper-case first) that ends in `Error` or `Exception`, then `:`
/// or the end of the line (`tensorflow.python.framework.errors_impl.InternalError: Blas GEMM
/// launch failed`). A metric printed the same way (`MeanSquaredError: 0.0123`, `Error: 0.49`)
/// is not one.
fn exception_name(line: &[u8]) -> Option<&str> {
    let first = *line.first()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    // Class paths are short; a long first word is something else (a path, a hash).
    let len = line
        .iter()
        .take(160)
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_' || **b == b'.')
        .count();
    let rest = &line[len..];
    // IPython and Jupyter head a traceback with the class name: `ResourceExhaustedError
    // Traceback (most recent call last)`; a pasted notebook output may be cut before the
    // message line.
    let notebook_header = rest.first() == Some(&b' ')
        && rest
            .trim_ascii_start()
            .starts_with(b"Traceback (most recent call last)");
    // An exception printed as its repr (a logger, Ray, a `raise ... from` chain):
    // `MisconfigurationException('You requested gpu: [0, 1]...`.
    let repr = rest.starts_with(b"('") || rest.starts_with(b"(\"");
    // A Chinese locale's full-width colon (`RuntimeError：...`) is a colon too.
    let colon = rest.first() == Some(&b':') || rest.starts_with("\u{ff1a}".as_bytes());
    if !(rest.is_empty() || colon || notebook_header || repr) {
        return None;
    }
    let word = &line[..len];
    let name = word.rsplit(|b| *b == b'.').next()?;
    // JAX puts its own frame-filtering wrapper before the exception that ended the job:
    // `jax._src.source_info_util.JaxStackTraceBeforeTransformation: RuntimeError: ...`.
    if name == b"JaxStackTraceBeforeTransformation" && rest.starts_with(b": ") {
        return exception_name(&rest[2..]);
    }
    if !name.first().is_some_and(u8::is_ascii_uppercase)
        || !(name.ends_with(b"Error") || name.ends_with(b"Exception"))
        || (!notebook_header && !repr && rest.get(1..).is_some_and(is_a_value))
    {
        return None;
    }
    std::str::from_utf8(name).ok()
}

/// Whether what follows `Name:` is a bare value (a fraction, a percentage, a boolean): a metric
/// or a setting, not an exception's message. A whole number stays a message (`KeyError: 0`).
fn is_a_value(rest: &[u8]) -> bool {
    let value = rest.trim_ascii();
    let number = value.strip_suffix(b"%").unwrap_or(value);
    let fraction = number.contains(&b'.')
        && !number.is_empty()
        && number
            .iter()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    fraction
        || (value.ends_with(b"%") && number.iter().all(u8::is_ascii_digit))
        || matches!(value, b"true" | b"false" | b"True" | b"False")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(text: &str) -> Option<(FailureForm, Option<String>)> {
        match failure(text)? {
            ObsKind::Failure { form, name } => Some((form, name)),
            _ => None,
        }
    }

    #[test]
    fn python_exceptions_by_their_class_name() {
        for (line, name) in [
            (
                "ResourceExhaustedError                    Traceback (most recent call last)",
                "ResourceExhaustedError",
            ),
            (
                "ValueError: invalid literal for int() with base 10: 'MIG-377e'",
                "ValueError",
            ),
            (
                "tensorflow.python.framework.errors_impl.InternalError:  Blas GEMM launch failed",
                "InternalError",
            ),
            ("  KeyError: 'CUDA'", "KeyError"),
            (
                "cupy.cuda.cufft.CuFFTError: CUFFT_INVALID_VALUE",
                "CuFFTError",
            ),
            ("_thread.RuntimeError", "RuntimeError"),
            ("Exception: ", "Exception"),
            ("KeyError: 0", "KeyError"),
            (
                "MisconfigurationException('You requested gpu: [0, 1]",
                "MisconfigurationException",
            ),
        ] {
            assert_eq!(
                form(line),
                Some((FailureForm::Exception, Some(name.to_owned()))),
                "{line}"
            );
            assert!(starts_like_failure(line.trim_start().as_bytes()), "{line}");
        }
    }

    #[test]
    fn fatal_checks_and_crashes() {
        for (line, expected) in [
            (
                "F0823 10:05:15.257066  3197 hl_cuda_cublas.cc:137] Check failed: a == b",
                FailureForm::Fatal,
            ),
            (
                "2019-01-01 12:00:00.000000: F tensorflow/core/kernels/x.cc:12] Check failed: ok",
                FailureForm::Fatal,
            ),
            (
                "terminate called after throwing an instance of 'c10::Error'",
                FailureForm::Fatal,
            ),
            (
                "ggml/src/ggml-cuda/fattn.cu:110: fatal error",
                FailureForm::Fatal,
            ),
            ("Aborted (core dumped)", FailureForm::Crash),
            ("Segmentation fault", FailureForm::Crash),
            ("Fatal Python error: Segmentation fault", FailureForm::Crash),
            (
                "Fatal Python error: init_fs_encoding: failed to get the Python codec",
                FailureForm::Fatal,
            ),
            (
                "bash: line 1:  4242 Segmentation fault      (core dumped) python x.py",
                FailureForm::Crash,
            ),
        ] {
            assert_eq!(form(line), Some((expected, None)), "{line}");
        }
        assert_eq!(
            form(
                "[08/01/2022-15:41:44] [TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)"
            ),
            Some((FailureForm::Fatal, None))
        );
        assert!(tensorrt_error(b"[02/15/2023-06:20:02] [E] Error[2]: [virtualMemoryBuffer.cpp::resizePhysical::145] Error Code 2: OutOfMemory"));
        assert!(tensorrt_error(
            b"[08/01/2022-15:41:44] [TRT] [E] 1: [stdArchiveReader.cpp]"
        ));
        assert!(!tensorrt_error(
            b"[08/01/2022-15:41:44] [TRT] [W] TensorRT was linked against cuDNN 8.4.1"
        ));
        assert!(!tensorrt_error(
            b"[2026-11-30 09:37:18] INFO: [E] not at the start"
        ));
        // The ones that start their line are looked at without a trigger word.
        for line in [
            "terminate called after throwing an instance of 'std::bad_alloc'",
            "Fatal Python error: Aborted",
            "Aborted (core dumped)",
            "Bus error",
            "F0823 10:05:15.257066  3197 hl_cuda_cublas.cc:137] Check failed: a == b",
        ] {
            assert!(starts_like_failure(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn programs_own_error_reports() {
        for line in [
            "ERROR:root:Could not load the model",
            "ERROR 05-29 23:32:19 engine failed to start",
            "error: command 'C:\\VC\\bin\\cl.exe' failed with exit status 2",
            "CRITICAL: the checkpoint is corrupt",
            "\u{250c} Error: This version of CUDA.jl only supports NVIDIA drivers for CUDA 11.x or 12.x",
            "train.py: error: unrecognized arguments: --bs 8",
            "slurmctld: error: Setting node nodegpu1 state to INVAL",
            "/usr/local/cuda/include/crt/host_config.h:119:2: error: #error -- unsupported GNU version!",
            "x.cu:3:10: fatal error: cuda_fp8.h: No such file or directory",
            "docker: Error response from daemon: OCI runtime create failed: ...",
            "time=\"2022-07-19T14:22:41Z\" level=fatal msg=\"Error getting device busid\"",
            "time=2026-03-11T17:42:09.504-04:00 level=ERROR source=server.go:304 msg=\"llama runner terminated\"",
            "Aug 27 ubuntu systemd[1]: x.service: Main process exited, code=exited, status=1/FAILURE",
        ] {
            assert_eq!(form(line), Some((FailureForm::Fatal, None)), "{line}");
        }
        // Those that start their line are looked at without a trigger word.
        for line in [
            "ERROR:root:Could not load the model",
            "train.py: error: unrecognized arguments: --bs 8",
            "/usr/local/cuda/include/crt/host_config.h:119:2: error: #error -- unsupported",
            "time=\"2022-07-19T14:22:41Z\" level=fatal msg=\"Error getting device busid\"",
        ] {
            assert!(starts_like_failure(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn ordinary_lines_are_not_failures() {
        for line in [
            "Epoch 1/10: loss=0.31",
            "Traceback (most recent call last):",
            "UserWarning: TypedStorage is deprecated",
            "ErrorCount: 0",
            "error_rate: 0.1",
            "Errors: none",
            "raise ValueError(msg)",
            "    raise RuntimeError('boom')",
            "ValueError(msg)",
            // Metrics, settings and messages that only look like failures.
            "Error: 0.4964",
            "MeanSquaredError: 0.0123",
            "val_MeanAbsoluteError: 0.31",
            "  continueOnError: true",
            "AccuracyError: 12%",
            "GPU memory: recovered from a non-fatal error",
            "Aborted!",
            "Aborted by user, saving checkpoint",
            "Loading GPU plugin 'x' failed, falling back",
            "[08/01/2022-15:41:44] [E] Error[2]: [virtualMemoryBuffer.cpp::resizePhysical::145] Error Code 2: OutOfMemory (no further information)",
            "F1 score 0.93",
            "/usr/lib/python3/site-packages/foo/ValueError: x",
            // Reports that are not failures.
            "ERROR: pip's dependency resolver does not currently take into account all the packages",
            "Error: 0.25",
            "time=\"2022-07-19T14:22:41Z\" level=info msg=\"Starting dcgm-exporter\"",
            "train.py: warning: the flag is deprecated",
            "loss: 0.31 error: 0.02",
        ] {
            assert_eq!(form(line), None, "{line}");
        }
        // Most do not even pass the cheap look at the line's start.
        for line in [
            "Epoch 1/10: loss=0.31",
            "Traceback (most recent call last):",
            "UserWarning: TypedStorage is deprecated",
            "ErrorCount: 0",
            "error_rate: 0.1",
            "F1 score 0.93",
            "Error: 0.4964",
            "val_MeanAbsoluteError: 0.31",
        ] {
            assert!(!starts_like_failure(line.as_bytes()), "{line}");
        }
    }
}
