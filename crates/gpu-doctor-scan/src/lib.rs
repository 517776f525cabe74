//! Streaming scanner for job output, tracebacks and kernel logs.
//!
//! This crate owns the step from bytes to facts: it reads any amount of text in chunks
//! (never the whole input in memory), and returns [`LogFacts`], a bounded list of typed
//! [`Observation`]s (an OOM with its numbers, a CUDA error with its code and stickiness, a
//! device-side assertion, an Xid, ...). It does not decide what they mean; the rules in
//! `gpu-doctor-rules` do.
//!
//! How it stays fast and bounded:
//! - A prefilter ([`aho_corasick`] over a few dozen trigger words such as `CUDA`, `memory`,
//!   `Xid`, `NCCL`) runs over whole chunks; only the lines around a hit are looked at, so an
//!   ordinary training log costs little more than the prefilter itself.
//! - Lines are cut at [`ScanOptions::max_line_bytes`] (the rest of an over-long line is
//!   skipped), and at most [`ScanOptions::keep_first`] + [`ScanOptions::keep_last`]
//!   observations of each kind are kept.
//! - Lines that are only a step and a byte count (`10 469767680`) are read too, although they
//!   name no trigger word: that is how a memory series is often printed. In the stretches the
//!   prefilter skips, only lines that start with a digit, or with one of a few fixed starts
//!   (`LINE_STARTS`: traceback frames, installer errors, `No devices were found`...), or with
//!   a Python exception's class name (`ValueError:`), get a closer look.
//! - A line that says the job failed but that no recogniser knows (a Python exception, a
//!   fatal check, a crash) is kept as [`ObsKind::Failure`], so that a failure of no known GPU
//!   cause is still reported as a failure.
//! - Lines are split on `\n` and `\r` (progress bars), cleaned of ANSI colour codes and
//!   control bytes, decoded as lossy UTF-8, and stripped of `[rankN]:` and `srun --label`
//!   prefixes (the rank is kept on the observation), docker compose's service prefix (kept as
//!   an [`ObsKind::Container`] observation), vLLM's worker and logger prefixes and Markdown
//!   quote marks.
//! - A line read again in the same context reuses what it was recognised as the first time
//!   (`memo`): a log that repeats one error line pays for it once.

/// `has!(text, "needle")`: whether `text` contains `needle`, with the needle's searcher built
/// once. The scanner asks this a few hundred times of every line it looks at; `str::contains`
/// builds a two-way searcher on each call, which was most of the time on lines that are all
/// errors.
macro_rules! has {
    ($text:expr, $needle:literal $(,)?) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        FINDER.find(AsRef::<[u8]>::as_ref($text)).is_some()
    }};
}

mod clean;
mod cuda_errors;
mod facts;
mod failure;
mod memo;
mod recognize;
pub mod units;

pub use cuda_errors::{CUDA_ERRORS, CudaErrorEntry, lookup_cuda_error};
pub use facts::{
    CudaErrorInfo, DriverInstallOutcome, EnvKind, FailureForm, Framework, HostMemoryKind,
    LibStatus, LogFacts, NcclInfo, ObsKind, Observation, OomInfo, OomStyle, detail,
};
pub use recognize::is_cuda_library;

use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::sync::LazyLock;

/// Limits on what the scanner keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    /// Bytes of a line that are read; the rest of a longer line is skipped.
    pub max_line_bytes: usize,
    /// How many observations of each kind are kept from the start of the input...
    pub keep_first: usize,
    /// ...and from its end.
    pub keep_last: usize,
    /// Bytes read from a reader at a time.
    pub chunk_bytes: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            max_line_bytes: 64 * 1024,
            keep_first: 64,
            keep_last: 64,
            chunk_bytes: 1 << 20,
        }
    }
}

/// Stems that every line worth a closer look contains. They are few (32: the SIMD "Teddy"
/// searcher is fastest up to 32 and slows with every one beyond) and mostly three bytes or
/// more; case variants are listed rather than searched case-insensitively, which keeps the
/// prefilter on its fastest path. `CUD`/`cud` cover CUDA, cudaError, CUDNN, libcudart;
/// `mem`/`Mem` cover memory, `mem:` and `memory_allocated`; `GPU`, `NVIDIA`/`nvidia` and
/// `NVRM` most driver and kernel lines. Lines that name none of them are skipped unread.
const TRIGGERS: &[&str] = &[
    "CUD",
    "cud",
    "mem",
    "Mem",
    "MiB",
    " MB |",
    "OOM",
    "Xid",
    "NVRM",
    "NVML",
    "NVIDIA",
    "nvidia",
    "NCCL",
    // `nccl` and TensorFlow's `NcclAllReduce`.
    "ccl",
    // docker's `could not select device driver "" with capabilities: [[gpu]]`. (PyTorch's
    // watchdog lines, once a trigger here, all name NCCL.)
    "device driver",
    "BLAS",
    "blas",
    "DNN",
    "ssert",
    "illegal",
    "aligned",
    "kernel image",
    "ECC",
    "AER",
    "GPU",
    "hermal",
    // The BFC allocator's `Stats:` header; the eight `Limit:` ... `LargestFreeBlock:` lines
    // after it are read as its continuation.
    "Stats:",
    "=====",
    "libcu",
    "rchitecture",
    // Compilers' words for a GPU they do not know: `PTX version 8.5 does not support target
    // 'sm_120'`, XLA's `Unknown compute capability (7, 5)`.
    "PTX",
    "ompute capab",
];

// Leftmost-first semantics let aho-corasick use its SIMD packed searcher (the standard
// semantics cannot), which is about ten times faster here; any hit will do.
static PREFILTER: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(TRIGGERS)
        .ok()
});

fn triggered(bytes: &[u8]) -> bool {
    match PREFILTER.as_ref() {
        Some(ac) => ac.is_match(bytes),
        // Building the automaton cannot fail for this fixed list; if it ever did, look at
        // every line rather than none.
        None => true,
    }
}

/// Line starts that matter although they hold no trigger word. They are checked only where
/// a line begins (after its indentation and any launcher prefix), where the scan stops for
/// every line anyway, so they cost a few byte compares per line (the first word, for a Python
/// exception's class name) rather than a slot in the prefilter.
const LINE_STARTS: &[&[u8]] = &[
    // A Python traceback and its frames: the function the failure happened in.
    b"Traceback (most recent call last)",
    b"File \"",
    // nvidia-installer's and DKMS's errors and verdicts, which often name no GPU word.
    b"ERROR:",
    b"DKMS ",
    // nvidia-smi when NVML works but enumerates no GPU.
    b"No devices were found",
    // Slurm draining a node whose GPUs went missing (`scontrol show node`, `sinfo -R`).
    b"Reason=gres/",
    b"gres/gpu",
    // A Rust panic (`Cuda(NoBinaryForGpu)` from the CUDA crates).
    b"thread '",
    // CUDA's assembler (`ptxas fatal : Value 'sm_90a' is not defined`; XLA's `ptxas returned
    // an error`, behind TensorFlow's timestamp too), and its compiler front
    // end (`cicc: error while loading shared libraries: libnvvm.so.3`).
    b"ptxas",
    b"cicc:",
    // OpenCL programs (hashcat): `clGetDeviceIDs(): CL_DEVICE_NOT_FOUND`.
    b"clGetDeviceIDs",
    // `nvidia-smi -q` on a virtual GPU: `License Status : Unlicensed`.
    b"License Status",
    // Docker refusing a container before it starts (`docker: Error response from daemon:
    // cannot set both Count and DeviceIDs on device request`).
    b"docker: Error response from daemon",
    // Windows' loader through ctypes: `Could not find module 'nvvm.dll' (or one of its
    // dependencies)`.
    b"Could not find module",
    // Package listings (`pip list`, `conda list`, `pip freeze`) that show a CPU-only build.
    b"torch",
    b"pytorch",
    b"cpuonly",
    b"_pytorch_select",
    // Ultralytics' start-up banner, which names the torch build (`torch-2.1.0+cpu`).
    b"Ultralytics ",
    b"jaxlib",
    // The driver's own version check, also printed by JAX without a CUDA word on the line:
    // `kernel version 515.48.7 does not match DSO version 510.73.5`.
    b"kernel version ",
    // Paddle's `ExternalError:  Cuda error(719), unspecified launch failure.`
    b"ExternalError:",
    // ONNX Runtime's provider that would not load: `EP Error ... Failed to load library
    // libonnxruntime_providers_tensorrt.so with error: libnvinfer.so.8: cannot open shared
    // object file`.
    b"EP Error",
    // nouveau holding the GPU (`lspci -k`, `lshw`), and cuBLAS's argument check.
    b"Kernel driver in use: nouveau",
    b"configuration: driver=nouveau",
    b"On entry to ",
    // The answer on the line after `print(tf.test.is_built_with_cuda())`.
    b"False",
    b"None",
    // TensorFlow 1.x's session without a GPU.
    b"Device mapping: no known devices",
    // OptiX's own status names no trigger word (`OPTIX_ERROR_UNSUPPORTED_ABI_VERSION (7801)`).
    b"OPTIX_ERROR_",
    // Omniverse's driver check (`The unsupported driver range: [0.0, 535.129)`).
    b"The unsupported driver range",
    // FFmpeg's NVENC checks without their `[h264_nvenc @ 0x...]` prefix.
    b"Driver does not support the required nvenc",
    b"The minimum required Nvidia driver for nvenc",
    // nvidia-installer's check that the compiler is the one that built the kernel.
    b"gcc-version-check failed",
    // TensorFlow's stream executor without cuDNN, on a line of its own.
    b"Fail to find the dnn implementation",
    // A shell prompt inside a docker container (`root@f14d48a29224:/app#`), and docker
    // compose starting one (`Creating app_web_run ... done`, `Attaching to app-web-1`).
    b"root@",
    b"Creating ",
    b"Attaching to ",
    // The linker missing a CUDA library while an extension builds (`/usr/bin/ld: cannot find
    // -lcurand`), and LAMMPS's `Cuda driver error 804 in call at file ...`.
    b"/usr/bin/ld: cannot find -l",
    b"Cuda driver error",
    // The miners' check macro: `Cuda error in func 'x' at line 701 : unspecified launch failure.`
    b"Cuda error",
    // Torch7's and PyTorch ≤0.4's check (`THCudaCheck FAIL file=... line=147 error=4 :
    // unspecified launch failure`): no trigger word unless the error's words hold one.
    b"THCudaCheck",
    // An application's check of the driver for NVENC: `Minimum required Nvidia driver is 570.0
    // or newer`.
    b"Minimum required Nvidia driver",
    // MLX (Apple's GPU) out of memory, through the C++ runtime: `libc++abi: terminating due to
    // uncaught exception of type std::runtime_error: [malloc_or_wait] Unable to allocate ...`.
    b"libc++abi: terminating",
    // vLLM's and SGLang's CUDA check, which spells it `Cuda` (`Failed: Cuda error
    // /w/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two
    // devices'`).
    b"Failed: Cuda error",
    // The NVIDIA HPC compilers' runtime (OpenACC, CUDA Fortran): `Accelerator Fatal Error:
    // call to cuLaunchKernel returned error 701: Launch out of resources`.
    b"Accelerator Fatal Error",
    b"call to cu",
    // OpenGL that found no driver to load (`libGL error: failed to load driver: swrast`).
    b"libGL error: ",
    // PostgreSQL's loader error without its `ERROR:  ` (PG-Strom): `could not load library
    // "/usr/pgsql-10/lib/pg_strom.so": libnvrtc.so.9.2: cannot open shared object file`.
    b"could not load library",
    // NVIDIA DALI's allocation failure: `Can't allocate 129499136 bytes on device 0.`
    b"Can't allocate ",
    // cudarc (Rust) looking for CUDA's libraries: `Unable to find nvrtc lib under the names`.
    b"Unable to find ",
    // text-embeddings-inference on a GPU its image was not built for.
    b"Could not start backend",
    // Programs that fell back to the CPU, in their own words (Whisper's warning and the line
    // Python shows under it; GFPGAN's).
    b"UserWarning: FP16 is not supported on CPU",
    b"warnings.warn(\"FP16 is not supported on CPU",
    b"UserWarning: The unoptimized RealESRGAN",
    // llama.cpp's context that did not fit (`llama_new_context_with_model: failed to allocate
    // compute buffers`), as llama.cpp's functions and LM Studio word it.
    b"llama_new_context_with_model: failed",
    b"llama_init_from_model: failed",
    b"llama_context: failed",
    b"Failed to initialize the context: failed",
    // CUDA errors without a trigger word, as the classic `HANDLE_ERROR` check macro prints
    // them: `unspecified launch failure in pyramid_level.cu at line 196`.
    b"unspecified launch failure",
    b"the launch timed out and was terminated",
    b"too many resources requested for launch",
    // The PCI core on a passed-through device, without dmesg's timestamp (`vfio-pci
    // 0000:0a:00.0: Unable to change power state from D3cold to D0, device inaccessible`).
    b"vfio-pci ",
    // Slurm refusing a job (`sbatch: error: Invalid generic resource (gres) specification`).
    b"sbatch: error:",
    b"srun: error:",
    b"salloc: error:",
];

/// Kernel messages that name no trigger word, after a dmesg timestamp (`[1478401.486981] `).
const KERNEL_STARTS: &[&[u8]] = &[
    // The IOMMU blocking a device's DMA: GPU peer-to-peer and GPUDirect transfers fault.
    b"DMAR",
    b"AMD-Vi",
    b"vfio-pci ",
];

/// Whether a dmesg line (`[ 8812.120001] DMAR: ...`) carries one of [`KERNEL_STARTS`].
fn kernel_start_worth_a_look(line: &[u8]) -> bool {
    if !matches!(line.get(1), Some(b' ' | b'0'..=b'9')) {
        return false;
    }
    let head = &line[..line.len().min(24)];
    let Some(close) = memchr::memchr(b']', head) else {
        return false;
    };
    let rest = line[close + 1..]
        .strip_prefix(b" ")
        .unwrap_or(&line[close + 1..]);
    KERNEL_STARTS.iter().any(|start| rest.starts_with(start))
}

/// Whether a line without a trigger word starts with one of [`LINE_STARTS`] or like a
/// failure line, after any launcher prefix (`[rank3]: `, `[default0]:`, `rank3: `).
fn starts_worth_a_look(line: &[u8]) -> bool {
    match line.first() {
        // torchrun's `[rank3]: ` (PyTorch ≥ 2.2 puts it on every line of a rank's output) the
        // quick way; it is most of the lines of a multi-GPU log.
        Some(b'[') if line.starts_with(b"[rank") => {
            let rest = &line[5..];
            let digits = rest
                .iter()
                .take(6)
                .take_while(|b| b.is_ascii_digit())
                .count();
            rest.get(digits..digits + 2) == Some(b"]:".as_slice())
                && line_start_matches(&rest[digits + 2..])
        }
        Some(b'[' | 0x1b | b'r' | b'>' | b'(' | b'E' | b'I' | b'W' | b'*') => {
            let rest = clean::strip_prefixes_bytes(line);
            if rest.len() < line.len() {
                // What follows a prefix gets every look a bare line gets (a quoted dmesg line,
                // a launcher's prefix before a TensorRT error); each call is on a shorter line.
                return starts_worth_a_look(rest);
            }
            if line[0] == b'[' {
                return kernel_start_worth_a_look(line)
                    || failure::tensorrt_error(line)
                    || ffmpeg_nvidia_codec(line);
            }
            line_start_matches(line) || nccl_warning_start(line)
        }
        Some(b'0'..=b'9') => {
            if let Some(rest) = clean::srun_label(line) {
                return starts_worth_a_look(rest);
            }
            nccl_warning_start(line) || tf_log_message(line).is_some_and(line_start_matches)
        }
        Some(b'A'..=b'Z') => {
            // A service's line relayed by the journal gets the look its own line would.
            match clean::syslog_prefix(line) {
                Some(rest) => starts_worth_a_look(rest),
                None => line_start_matches(line) || nccl_warning_start(line),
            }
        }
        _ => line_start_matches(line) || nccl_warning_start(line),
    }
}

/// The message of a TensorFlow/XLA log line after its timestamp and glog header
/// (`2024-06-06 09:03:48.670640: F external/local_xla/xla/service/gpu/nvptx_compiler.cc:619] `),
/// where XLA's `ptxas ...` errors stand. Only the fixed shape of the timestamp is checked
/// before one bounded search for the header's `] `.
fn tf_log_message(line: &[u8]) -> Option<&[u8]> {
    let shape = line.len() > 30
        && line[4] == b'-'
        && line[7] == b'-'
        && line[10] == b' '
        && line[13] == b':'
        && line[16] == b':';
    if !shape {
        return None;
    }
    let head = &line[..line.len().min(160)];
    let close = memchr::memmem::find(&head[19..], b"] ")? + 19;
    Some(&line[close + 2..])
}

/// FFmpeg's NVIDIA encoders and decoders, whose errors name no trigger word: `[hevc_nvenc @
/// 0x5555] Driver does not support the required nvenc API version`, `[h264_cuvid @ 0x1ec8780]
/// Cannot load libnvcuvid.so.1`.
fn ffmpeg_nvidia_codec(line: &[u8]) -> bool {
    let head = &line[..line.len().min(24)];
    let Some(at) = memchr::memmem::find(head, b" @ ") else {
        return false;
    };
    head.get(1..at)
        .is_some_and(|codec| codec.ends_with(b"_nvenc") || codec.ends_with(b"_cuvid"))
}

/// NCCL 2's warnings before it put its name on them: `include/socket.h:344 WARN Socket
/// creation failed`, or with its `host:pid:tid [device] ` prefix. The source location before
/// `WARN` is the only fixed part; a generic `WARN` trigger would read every Python warning.
fn nccl_warning_start(line: &[u8]) -> bool {
    // A host name or a source directory comes first: most lines fail on their first byte
    // (indentation, `{`, `[`, a progress bar) before any search for the first space.
    if !line.first().is_some_and(u8::is_ascii_alphanumeric) {
        return false;
    }
    let Some((mut location, mut rest)) = split_first_word(line) else {
        return false;
    };
    // `instance-1:454:484 [0] ` before the location: host, pid, thread, then the device.
    if rest.first() == Some(&b'[')
        && strip_colon_number(location)
            .and_then(strip_colon_number)
            .is_some()
    {
        let Some(after_device) = memchr::memchr(b']', &rest[..rest.len().min(8)])
            .and_then(|close| rest[close + 1..].strip_prefix(b" "))
            .and_then(split_first_word)
        else {
            return false;
        };
        (location, rest) = after_device;
    }
    let Some(file) = strip_colon_number(location) else {
        return false;
    };
    rest.starts_with(b"WARN ")
        && [&b".h"[..], b".cc", b".cu", b".cpp", b".c"]
            .iter()
            .any(|ext| file.ends_with(ext))
}

/// The line's first word and what follows the space after it, for a first word of at most
/// 96 bytes.
fn split_first_word(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let space = memchr::memchr(b' ', &line[..line.len().min(97)])?;
    Some((&line[..space], &line[space + 1..]))
}

/// The word without its trailing `:123`, if it has one.
fn strip_colon_number(word: &[u8]) -> Option<&[u8]> {
    let digits = word.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let head = word.get(..word.len().checked_sub(digits + 1)?)?;
    (digits > 0 && word[head.len()] == b':').then_some(head)
}

/// [`LINE_STARTS`] by their first byte: a line is compared only with the starts that begin
/// as it does (most lines begin with none of them and cost one lookup).
static LINE_STARTS_BY_FIRST_BYTE: LazyLock<Vec<Vec<&'static [u8]>>> = LazyLock::new(|| {
    let mut table = vec![Vec::new(); 256];
    for start in LINE_STARTS {
        if let Some(&first) = start.first() {
            table[usize::from(first)].push(*start);
        }
    }
    table
});

/// [`LINE_STARTS`] after the line's indentation.
fn line_start_matches(line: &[u8]) -> bool {
    let indent = line
        .iter()
        .take(16)
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    let mut rest = &line[indent..];
    // An exception group's gutter and pytest's error mark (`  | E   ptxas fatal ...`) stand
    // before the line's own start; the cleaning removes them too.
    if rest.starts_with(b"| ") && rest.last() != Some(&b'|') {
        rest = rest[2..].trim_ascii_start();
    }
    if rest.starts_with(b"E   ") {
        rest = rest[1..].trim_ascii_start();
    }
    let fixed_start = rest.first().is_some_and(|&first| {
        LINE_STARTS_BY_FIRST_BYTE[usize::from(first)]
            .iter()
            .any(|start| rest.starts_with(start))
    });
    // Failure lines start with a letter (`ValueError:`, `Segmentation fault`, `F0823 ...`), or
    // a path (a compiler's `/usr/include/x.h:119:2: error: ...`, a linker's
    // `../lib/x.a(y.o):y.cpp:(.text+0x30e): undefined reference to ...`).
    fixed_start
        || (rest
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'/' | b'.'))
            && failure::starts_like_failure(rest))
}

/// Lines read unconditionally after a line that starts a multi-line message (the
/// cudaMallocAsync OOM report, NCCL's "Last error:", the BFC allocator's eight `Stats:` lines).
const FOLLOW_LINES: u32 = 8;

/// The streaming scanner: feed it chunks, then [`Scanner::finish`].
#[derive(Debug)]
pub struct Scanner {
    opts: ScanOptions,
    source: String,
    /// The unfinished last line of the previous chunk (at most `max_line_bytes`).
    carry: Vec<u8>,
    /// The unfinished line is longer than the cap; its rest is being skipped.
    carry_overflowed: bool,
    /// 1-based number of the line that starts at the current position.
    line_no: u64,
    follow: u32,
    seq: u64,
    kept: BTreeMap<&'static str, Kept>,
    facts: LogFacts,
    context: recognize::Context,
    memo: memo::LineMemo,
    /// A compose service's prefix was seen in this input (one observation says so).
    saw_compose_service: bool,
}

#[derive(Debug, Default)]
struct Kept {
    first: Vec<Observation>,
    last: VecDeque<Observation>,
}

impl Scanner {
    pub fn new(opts: ScanOptions) -> Self {
        Scanner {
            opts,
            source: String::from("stdin"),
            carry: Vec::new(),
            carry_overflowed: false,
            line_no: 1,
            follow: 0,
            seq: 0,
            kept: BTreeMap::new(),
            facts: LogFacts::default(),
            context: recognize::Context::default(),
            memo: memo::LineMemo::default(),
            saw_compose_service: false,
        }
    }

    /// Starts a new input: line numbers restart at 1 and observations name `source`.
    pub fn begin_source(&mut self, source: &str) {
        self.end_source();
        source.clone_into(&mut self.source);
        self.facts.sources.push(source.to_owned());
        self.line_no = 1;
        self.follow = 0;
        self.context = recognize::Context::default();
        self.saw_compose_service = false;
    }

    /// Finishes the current input's last line (one without a final newline).
    fn end_source(&mut self) {
        if !self.carry.is_empty() || self.carry_overflowed {
            let line = std::mem::take(&mut self.carry);
            let forced = self.take_follow();
            self.process_line(&line, self.carry_overflowed, forced);
            self.carry_overflowed = false;
            self.line_no += 1;
        }
        self.facts.lines_scanned += self.line_no - 1;
        self.line_no = 1;
    }

    /// Scans the next piece of input. Chunks may split lines anywhere.
    pub fn feed(&mut self, mut chunk: &[u8]) {
        self.facts.bytes_scanned += chunk.len() as u64;
        if !self.carry.is_empty() || self.carry_overflowed {
            match memchr::memchr(b'\n', chunk) {
                None => {
                    self.extend_carry(chunk);
                    return;
                }
                Some(nl) => {
                    self.extend_carry(&chunk[..nl]);
                    let line = std::mem::take(&mut self.carry);
                    let overflowed = std::mem::take(&mut self.carry_overflowed);
                    let forced = self.take_follow();
                    self.process_line(&line, overflowed, forced);
                    self.carry = line;
                    self.carry.clear();
                    self.line_no += 1;
                    chunk = &chunk[nl + 1..];
                }
            }
        }
        match memchr::memrchr(b'\n', chunk) {
            None => self.extend_carry(chunk),
            Some(last) => {
                self.process_block(&chunk[..=last]);
                self.extend_carry(&chunk[last + 1..]);
            }
        }
    }

    /// Whether the next line is read unconditionally (it follows a multi-line header).
    fn take_follow(&mut self) -> bool {
        if self.follow > 0 {
            self.follow -= 1;
            true
        } else {
            false
        }
    }

    fn extend_carry(&mut self, bytes: &[u8]) {
        let room = self.opts.max_line_bytes.saturating_sub(self.carry.len());
        if bytes.len() > room {
            self.carry.extend_from_slice(&bytes[..room]);
            self.carry_overflowed = true;
        } else {
            self.carry.extend_from_slice(bytes);
        }
    }

    /// Complete lines only: `block` ends with `\n`.
    fn process_block(&mut self, block: &[u8]) {
        let mut pos = 0;
        while pos < block.len() {
            if self.follow > 0 {
                let end = memchr::memchr(b'\n', &block[pos..]).map_or(block.len(), |i| pos + i);
                self.follow -= 1;
                self.process_capped(&block[pos..end], true);
                self.line_no += 1;
                pos = end + 1;
                continue;
            }
            let hit = match PREFILTER.as_ref() {
                Some(ac) => ac.find(&block[pos..]).map(|m| pos + m.start()),
                None => Some(pos),
            };
            let Some(hit) = hit else {
                self.pass_over(&block[pos..]);
                break;
            };
            let start = memchr::memrchr(b'\n', &block[pos..hit]).map_or(pos, |i| pos + i + 1);
            self.pass_over(&block[pos..start]);
            let end = memchr::memchr(b'\n', &block[hit..]).map_or(block.len(), |i| hit + i);
            self.process_capped(&block[start..end], false);
            self.line_no += 1;
            pos = end + 1;
        }
    }

    /// Complete lines without a trigger word (`region` ends with `\n` or is empty): counted,
    /// and only the ones that start with a digit (a bare memory reading, see
    /// `recognize::bare_reading`), with one of [`LINE_STARTS`] or like a failure line (see
    /// `failure`) are looked at. A few byte compares per line keep this cheap.
    fn pass_over(&mut self, region: &[u8]) {
        let mut line_start = 0;
        for nl in memchr::memchr_iter(b'\n', region) {
            let line = &region[line_start..nl];
            if self.follow > 0 {
                // A line-start look below started a multi-line message (a Rust panic).
                self.follow -= 1;
                self.process_capped(line, true);
            } else if starts_worth_a_look(line) {
                self.process_capped(line, false);
            } else if region.get(line_start).is_some_and(u8::is_ascii_digit) {
                // Capped as `process_capped` caps; `bare_reading` stops at a `\r` itself.
                let line = &region[line_start..nl.min(line_start + self.opts.max_line_bytes)];
                if let Some(kind) = recognize::bare_reading(line) {
                    let first = line.split(|b| *b == b'\r').next().unwrap_or(line);
                    let cleaned = clean::clean(first);
                    self.record(kind, None, &cleaned.text, cleaned.rank);
                }
            }
            self.line_no += 1;
            line_start = nl + 1;
        }
    }

    fn process_capped(&mut self, line: &[u8], forced: bool) {
        if line.len() > self.opts.max_line_bytes {
            self.process_line(&line[..self.opts.max_line_bytes], true, forced);
        } else {
            self.process_line(line, false, forced);
        }
    }

    /// One `\n`-terminated line (without the `\n`), split further on `\r`.
    fn process_line(&mut self, line: &[u8], long: bool, forced: bool) {
        if long {
            self.facts.long_lines += 1;
        }
        for (i, segment) in line.split(|b| *b == b'\r').enumerate() {
            if segment.is_empty() {
                continue;
            }
            if !(forced || triggered(segment) || (i == 0 && starts_worth_a_look(segment))) {
                // Only a line's first segment can be a bare reading: `pass_over` looks at
                // the line's first byte, and the result must not depend on where chunks split.
                if i == 0
                    && let Some(kind) = recognize::bare_reading(segment)
                {
                    let cleaned = clean::clean(segment);
                    self.record(kind, None, &cleaned.text, cleaned.rank);
                }
                continue;
            }
            let cleaned = clean::clean(segment);
            if cleaned.text.is_empty() {
                continue;
            }
            if let Some(rank) = cleaned.rank {
                self.facts.ranks.insert(rank);
            }
            if let Some(service) = &cleaned.service
                && !self.saw_compose_service
            {
                self.saw_compose_service = true;
                let how = format!("docker compose service `{service}`");
                self.record(
                    ObsKind::Container { how },
                    None,
                    &cleaned.text,
                    cleaned.rank,
                );
            }
            let memo::Recognised { found, failure } =
                self.memo.recognise(&cleaned.text, &mut self.context);
            if found.starts_multiline {
                self.follow = FOLLOW_LINES;
            }
            if let Some(fw) = found.framework_hint {
                self.facts.frameworks.insert(fw);
            }
            if let Some(kind) = failure {
                self.record(kind, found.framework_hint, &cleaned.text, cleaned.rank);
                continue;
            }
            for (kind, framework) in found.observations {
                if let Some(fw) = framework {
                    self.facts.frameworks.insert(fw);
                }
                self.record(kind, framework, &cleaned.text, cleaned.rank);
            }
        }
    }

    /// Keeps one observation of the current line.
    fn record(
        &mut self,
        kind: ObsKind,
        framework: Option<Framework>,
        text: &str,
        rank: Option<u32>,
    ) {
        let obs = Observation {
            source: self.source.clone(),
            line: self.line_no,
            rank,
            framework,
            text: cut(text, 2000),
            kind,
            seq: self.seq,
        };
        self.seq += 1;
        self.keep(obs);
    }

    fn keep(&mut self, obs: Observation) {
        let kept = self.kept.entry(obs.kind.name()).or_default();
        if kept.first.len() < self.opts.keep_first {
            kept.first.push(obs);
            return;
        }
        if self.opts.keep_last == 0 {
            self.facts.dropped_observations += 1;
            return;
        }
        if kept.last.len() == self.opts.keep_last {
            kept.last.pop_front();
            self.facts.dropped_observations += 1;
        }
        kept.last.push_back(obs);
    }

    /// Adds everything another scanner gathered, as later inputs of this one (used to scan
    /// a stream into a scratch scanner and keep it only if the stream turned out usable).
    pub fn absorb(&mut self, other: Scanner) {
        self.end_source();
        let facts = other.finish();
        for mut obs in facts.observations {
            obs.seq = self.seq;
            self.seq += 1;
            self.keep(obs);
        }
        self.facts.frameworks.extend(facts.frameworks);
        self.facts.ranks.extend(facts.ranks);
        self.facts.bytes_scanned += facts.bytes_scanned;
        self.facts.lines_scanned += facts.lines_scanned;
        self.facts.long_lines += facts.long_lines;
        self.facts.dropped_observations += facts.dropped_observations;
        self.facts.sources.extend(facts.sources);
    }

    /// The facts gathered from every input, in input order.
    pub fn finish(mut self) -> LogFacts {
        self.end_source();
        let mut all: Vec<Observation> = Vec::new();
        for (_, kept) in std::mem::take(&mut self.kept) {
            all.extend(kept.first);
            all.extend(kept.last);
        }
        all.sort_by_key(|o| o.seq);
        self.facts.observations = all;
        if self.facts.sources.is_empty() {
            self.facts.sources.push(self.source);
        }
        self.facts
    }
}

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut with `…`.
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Scans a byte slice (one input named `source`).
pub fn scan_bytes(source: &str, bytes: &[u8]) -> LogFacts {
    let mut scanner = Scanner::new(ScanOptions::default());
    scanner.begin_source(source);
    for chunk in bytes.chunks(ScanOptions::default().chunk_bytes) {
        scanner.feed(chunk);
    }
    scanner.finish()
}

/// Scans a reader into an existing scanner, in chunks; `progress` is called with the number
/// of bytes read so far after each chunk.
pub fn scan_reader<R: Read>(
    scanner: &mut Scanner,
    mut reader: R,
    mut progress: impl FnMut(u64),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; scanner.opts.chunk_bytes.max(4096)];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        scanner.feed(&buf[..n]);
        total += n as u64;
        progress(total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_start_gets_its_look() {
        // The first-byte check in `line_start_matches` must know each entry's first byte.
        for start in LINE_STARTS {
            assert!(
                line_start_matches(start),
                "{} is never looked at",
                String::from_utf8_lossy(start)
            );
        }
    }

    #[test]
    fn line_starts_behind_a_tensorflow_timestamp_get_their_look() {
        let xla = b"2024-06-06 09:03:48.670640: F external/local_xla/xla/service/gpu/nvptx_compiler.cc:619] ptxas returned an error during compilation of ptx to sass";
        assert!(starts_worth_a_look(xla));
        // The same timestamp before an ordinary message, and a line too short for one.
        assert!(!starts_worth_a_look(
            b"2024-06-06 09:03:48.670640: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized"
        ));
        assert!(!starts_worth_a_look(b"2024-06-06 09:03:48] ptxas"));
        assert!(tf_log_message(b"12345 steps done, loss 0.25, ptxas").is_none());
    }

    fn readings(facts: &LogFacts) -> Vec<(u64, Option<u64>)> {
        facts
            .observations
            .iter()
            .filter_map(|o| match o.kind {
                ObsKind::MemoryReading { bytes, step } => Some((bytes, step)),
                _ => None,
            })
            .collect()
    }

    /// Feeding `log` in chunks of every size gives the observations of the whole.
    fn assert_same_however_split(log: &[u8], whole: &LogFacts) {
        for chunk in 1..log.len() {
            let mut s = Scanner::new(ScanOptions::default());
            s.begin_source("log");
            for piece in log.chunks(chunk) {
                s.feed(piece);
            }
            let facts = s.finish();
            assert_eq!(facts.observations, whole.observations, "chunk {chunk}");
        }
    }

    #[test]
    fn bare_step_and_bytes_lines_are_read_however_the_input_is_split() {
        // No trigger word on any of these lines; a timestamped line that starts with a digit
        // is not a reading.
        let log =
            b"0 134218240\n10 469767680\r\n2020-06-11 12:33:17: step 10\n20\t805317120\nrc=0\n";
        let whole = scan_bytes("log", log);
        assert_eq!(
            readings(&whole),
            vec![
                (134_218_240, Some(0)),
                (469_767_680, Some(10)),
                (805_317_120, Some(20))
            ]
        );
        assert_eq!(whole.lines_scanned, 5);
        assert_eq!(whole.observations[1].line, 2);
        assert_eq!(whole.observations[2].line, 4);
        assert_same_however_split(log, &whole);
    }

    #[test]
    fn line_starts_without_trigger_words_are_read_however_the_input_is_split() {
        // No trigger word in the traceback's frames or the installer's error; the OOM after
        // the frames learns the evaluation function they passed through.
        let log = b"Traceback (most recent call last):\n  File \"train.py\", line 282, in validate\n    scores_copy = scores.clone()\nRuntimeError: CUDA error: out of memory\n\
ERROR: Unable to open 'kernel/dkms.conf' for copying (No such file or directory)\n\
noise File \"x\", line 1, in validate\n";
        let whole = scan_bytes("log", log);
        let during: Vec<Option<&str>> = whole
            .observations
            .iter()
            .filter_map(|o| match &o.kind {
                ObsKind::Oom(info) => Some(info.during_evaluation.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(during, vec![Some("validate")]);
        assert_eq!(whole.lines_scanned, 6);
        assert_same_however_split(log, &whole);
        // A new traceback forgets the last one's frames.
        let log = b"  File \"train.py\", line 282, in validate\nTraceback (most recent call last):\n  File \"train.py\", line 12, in train\nRuntimeError: CUDA error: out of memory\n";
        let facts = scan_bytes("log", log);
        assert!(matches!(
            &facts.observations[0].kind,
            ObsKind::Oom(info) if info.during_evaluation.is_none()
        ));
    }

    #[test]
    fn nccl_2_line_starts_need_a_source_location_with_its_line_number() {
        assert!(nccl_warning_start(
            b"include/socket.h:344 WARN Socket creation failed"
        ));
        assert!(nccl_warning_start(
            b"instance-1:454:484 [0] include/socket.h:185 WARN Call to connect failed"
        ));
        // No line number, no file extension, or no WARN: not NCCL's shape.
        assert!(!nccl_warning_start(
            b"include/socket.h: WARN Socket creation failed"
        ));
        assert!(!nccl_warning_start(
            b"include/socket:344 WARN Socket creation failed"
        ));
        assert!(!nccl_warning_start(
            b"include/socket.h:344 INFO Socket creation"
        ));
        assert!(!nccl_warning_start(
            b"instance-1:454: [0] include/socket.h:185 WARN x"
        ));
        assert!(!nccl_warning_start(b"  include/socket.h:344 WARN indented"));
    }

    #[test]
    fn nccl_2_warnings_are_read_by_their_source_location() {
        // NCCL 2 named neither itself nor CUDA on these lines; an INFO line, a Python
        // warning and a location without `WARN` are not read.
        let log = b"instance-fjhn02ur:454:484 [0] include/socket.h:185 WARN Call to connect failed : Connection refused\n\
instance-fjhn02ur:454:484 [0] INFO transport/net_socket.cu:101 -> 2\n\
include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol\n\
train.py:12: UserWarning: WARN something failed\n\
misc/utils.cc:12 INFO failed to read\n\
host:1:2 [0] init.cc:99 WARN thing went fine\n";
        let facts = scan_bytes("log", log);
        let lines: Vec<u64> = facts
            .observations
            .iter()
            .filter(|o| matches!(o.kind, ObsKind::Nccl(_)))
            .map(|o| o.line)
            .collect();
        assert_eq!(lines, vec![1, 3]);
        assert_same_however_split(log, &facts);
    }

    #[test]
    fn only_a_lines_first_segment_can_be_bare() {
        let facts = scan_bytes("log", b"epoch\r10 469767680\n");
        assert!(facts.observations.is_empty());
    }

    #[test]
    fn the_bfc_allocators_stats_block_is_read_after_its_header() {
        // TensorFlow 2's block as it prints it: only the header names the allocator.
        let log = b"2021-03-01 10:00:00.000000: I tensorflow/core/common_runtime/bfc_allocator.cc:1046] Stats: \n\
Limit:                     10990990132\n\
InUse:                     10990000000\n\
MaxInUse:                  10990000000\n\
NumAllocs:                        1234\n\
MaxAllocSize:               4294967296\n\
Reserved:                            0\n\
PeakReserved:                        0\n\
LargestFreeBlock:             33554432\n\
epoch 3 loss 0.25\n";
        let facts = scan_bytes("log", log);
        let stats: Vec<(&str, u64)> = facts
            .observations
            .iter()
            .filter_map(|o| match &o.kind {
                ObsKind::AllocatorStat { key, bytes } => Some((key.as_str(), *bytes)),
                _ => None,
            })
            .collect();
        assert_eq!(
            stats,
            vec![
                ("Limit", 10_990_990_132),
                ("InUse", 10_990_000_000),
                ("MaxInUse", 10_990_000_000),
                ("Reserved", 0),
                ("PeakReserved", 0),
                ("LargestFreeBlock", 33_554_432),
            ]
        );
    }
}
