//! What one clean line is: the recognisers, from most to least specific.
//!
//! Each recogniser anchors on a phrase the framework prints and then takes every number it
//! can find, field by field, so a message that was cut short or that gained a clause in a
//! later version still yields what it has. Only lines that passed the prefilter get here.

use crate::cuda_errors::{CUDA_ERRORS, CudaErrorEntry, legacy_code, lookup_cuda_error};
use crate::facts::{
    CudaErrorInfo, DriverInstallOutcome, EnvKind, Framework, HostMemoryKind, LibStatus, NcclInfo,
    ObsKind, OomInfo, OomStyle, detail,
};
use crate::units::parse_size;
use regex::{Captures, Regex};
use std::sync::LazyLock;

/// Whether a library's file name (`libcudart.so.12`, `cublas64_11.dll`) is one of CUDA's own
/// (or the driver's, or PyTorch's CUDA libraries), rather than some other package's.
pub fn is_cuda_library(name: &str) -> bool {
    RE_LIB.is_match(name)
        || RE_TORCH_LIB.is_match(name)
        // A bare stem: TensorFlow's `DNN library is not found` names no file, only cuDNN.
        || (!name.contains('.') && RE_LIB.is_match(&format!("{name}.so")))
}

/// What the scanner remembers between lines of one input.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Context {
    /// The last framework a line named, for lines that name none (the BFC allocator's lines
    /// are the same in `TensorFlow` and JAX).
    pub last_framework: Option<Framework>,
    /// In an nvidia-smi device table: the GPU index of the next memory row. The index sits on
    /// the row above, which older tables start with a bare model name (`GeForce GTX 1080`)
    /// that no trigger word finds; the rows come in index order after the table's header.
    pub smi_next_gpu: Option<u32>,
    /// The evaluation function (`validate`, `evaluation_loop`) the current Python traceback
    /// passes through, for the error message that ends it.
    pub evaluation_frame: Option<String>,
    /// The input is an NVIDIA driver installer's output, whose `ERROR:` lines are its own.
    pub in_driver_installer: bool,
    /// The question the last line asked at a Python prompt: the answer comes next.
    pub asked: Option<Question>,
    /// An error was read: PyTorch's advice line after a CUDA error (`Search for
    /// `cudaErrorStreamCaptureUnsupported' in ...`) only repeats its name. Without one (a
    /// paste cut above the advice), that line is all there is of the error.
    pub saw_error: bool,
    /// The last line was PyTorch's OOM cut after `Tried to allocate 7.31 GiB` (a paste wrapped
    /// there): the request, for its `(GPU 0; ... total capacity; ...)` on the next line.
    pub oom_wrapped_request: Option<u64>,
    /// An out-of-memory failure was read: the BFC allocator's per-bin dump after it adds
    /// nothing; without one (a paste that kept only the dump), the dump is the failure.
    pub saw_oom: bool,
    /// PyTorch's capability check named this GPU's compute capability (`Found GPU0 ... which
    /// is of cuda capability 12.1.`): the build's range follows, on this line or the next two.
    pub gpu_capability: Option<(u32, u32)>,
}

/// A question about the CUDA build whose answer is on the next line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Question {
    /// Whether the framework was built with CUDA (`tf.test.is_built_with_cuda()`,
    /// `torch.version.cuda`).
    CudaBuild(Framework),
    /// Whether PyTorch sees a GPU (`torch.cuda.is_available()`).
    CudaAvailable,
    /// Which GPUs TensorFlow sees (`tf.config.list_physical_devices('GPU')`,
    /// `tf.test.is_gpu_available()`).
    TfGpus,
}

/// What one line yielded.
#[derive(Debug, Default, Clone)]
pub(crate) struct Found {
    pub observations: Vec<(ObsKind, Option<Framework>)>,
    /// The next few lines belong to this one (cudaMallocAsync's report, NCCL's "Last error:").
    pub starts_multiline: bool,
    pub framework_hint: Option<Framework>,
}

fn re(pattern: &str) -> Regex {
    // The patterns are fixed strings checked by the tests; an invalid one is a programming
    // error caught by every test run.
    Regex::new(pattern).unwrap_or_else(|e| panic!("bad built-in pattern {pattern}: {e}"))
}

/// A size: a number and a unit (`12.00 GiB`, `1.25GiB`, `1,024 bytes`).
const SIZE: &str = r"([\d][\d.,]*)\s?(bytes|[KMGTE]i?B|B)\b";

macro_rules! regex {
    ($name:ident, $pat:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| re(&$pat));
    };
}

regex!(RE_TRIED, format!(r"Tried to allocate {SIZE}"));
regex!(RE_TRIED_EB, r"Tried to allocate more than 1EB");
regex!(RE_OOM_HEAD, r"\b(CUDA|HIP|XPU|MUSA|NPU) out of memory");
regex!(RE_OLD_GPU, r"\(GPU (\d+);");
regex!(RE_CUDA_GDB_RETURNED, r"returned \(0x([0-9a-fA-F]+)\)");
regex!(
    RE_STREAM_EXECUTOR_ALLOC,
    r"failed to allocate \S+ \((\d+) bytes\) from device: CUDA_ERROR_OUT_OF_MEMORY"
);
// The same from XLA's newer stream executor: `Failed to allocate device memory of 104.85GiB
// (112583507968 bytes): RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory`.
regex!(
    RE_XLA_DEVICE_ALLOC,
    r"Failed to allocate device memory of \S+ \((\d+) bytes\)"
);
// (`4.00 GiB totalcapacity`: a paste that lost the space.)
regex!(RE_OLD_TOTAL, format!(r"{SIZE} total ?capacity"));
regex!(RE_OLD_ALLOC, format!(r"{SIZE} already allocated"));
regex!(RE_OLD_FREE, format!(r"{SIZE} free[;)]"));
regex!(RE_ALLOWED, format!(r"{SIZE} allowed;"));
regex!(RE_OLD_RESERVED, format!(r"{SIZE} reserved in total"));
regex!(RE_OLD_CACHED, format!(r"{SIZE} cached\)"));
regex!(
    RE_NEW_TOTAL,
    format!(r"GPU (\d+) has a total capac(?:i)?ty of {SIZE} of which {SIZE} is free")
);
regex!(
    RE_NEW_TOTAL_ONLY,
    format!(r"GPU (\d+) has a total capac(?:i)?ty of {SIZE}")
);
regex!(
    RE_PROCESS,
    format!(r"Process (\d+) has {SIZE} memory in use")
);
regex!(
    RE_THIS_PROCESS,
    format!(r"this process has {SIZE} memory in use")
);
regex!(
    RE_BY_PYTORCH,
    format!(r"Of the allocated memory {SIZE} is allocated by PyTorch")
);
regex!(
    RE_PRIVATE,
    format!(r"with {SIZE} allocated in private pools")
);
regex!(
    RE_UNALLOCATED,
    format!(r"and {SIZE} is reserved by PyTorch but unallocated")
);
regex!(
    RE_ASYNC_HEAD,
    r"Allocation on device (\d+) would exceed allowed memory"
);
regex!(
    RE_MPS,
    format!(
        r"MPS backend out of memory \(MPS allocated: {SIZE}, other allocations: {SIZE}, max allowed: {SIZE}\)"
    )
);
regex!(
    RE_TF_OOM,
    r"OOM when allocating tensor(?: with shape\s*\[?([\d,\s]*)\]?)?(?: and type (\w+))?"
);
regex!(RE_TF_DEVICE, r"device:GPU:(\d+)");
regex!(
    RE_BFC,
    r"ran out of memory trying to allocate ([\d.,]+)\s?([KMGT]i?B|B|bytes)"
);
regex!(RE_BFC_ROUNDED, r"\(rounded to (\d+)\)");
regex!(
    RE_XLA,
    r"Out of memory (?:while trying to allocate|allocating) ([\d.,]+)\s?([KMGT]i?B|B|bytes)"
);
regex!(RE_XLA_DEVICE, r"on device (\d+)");
regex!(
    RE_XLA_TPU,
    r"Allocation \(size=(\d+)\) would exceed memory \(size=(\d+)\)"
);
regex!(
    RE_CUPY,
    r"Out of memory allocating ([\d,]+) bytes \(allocated so far: ([\d,]+) bytes(?:, limit set to: ([\d,]+) bytes)?"
);
regex!(
    RE_CUPY_OLD,
    r"out of memory to allocate (\d+) bytes \(total (\d+) bytes\)"
);
regex!(RE_NCCL_CUDA_FAILURE, r"Cuda failure (\d+) '([^']*)'");
regex!(
    RE_CUDA_NAME,
    r"\b(cudaError[A-Z][A-Za-z]+|CUDA_ERROR_[A-Z_]+)\b"
);
regex!(
    RE_CUDA_NUMBER,
    r"(?:cuda runtime error \((\d+)\)|(?:CUDA|Cuda|cuda) error:?\s*=?\s*(\d+)|CUDA_ERROR_[A-Z_]+ \((\d+)\)|code=(\d+)\b|error=(\d+)\b|error code (\d+)\b|CUresult (\d+)|CudaAPIError: \[(\d+)\]|Cuda error\((\d+)\)|Cuda driver error (\d+)|call to cu\w+ returned error (\d+))"
);
/// The groups of [`RE_CUDA_NUMBER`] whose words any program may print: `code=`, `error=`,
/// `error code`.
const GENERIC_NUMBER_GROUPS: [usize; 3] = [4, 5, 6];
// (`fail` at the end of a line: a hard-wrapped `failed.`)
regex!(
    RE_ASSERT,
    // ROCm's wording too: `Indexing.hip:1294: indexSelectLargeIndex: Device-side assertion
    // `srcIndex < srcSelectDimSize' failed.`
    r"(?:Assertion|Device-side assertion) [`'‘]?(.+?)[`'’]? fail(?:ed|$)"
);
// The C library's `assert` in host code (`python3: ./src/cuda.c:36: check_error: Assertion
// `0' failed.`): a program giving up after a CUDA error, not a kernel's assert (which names
// its block and thread).
regex!(
    RE_HOST_ASSERT,
    r"^[\w.-]+: \S+\.(?:c|cc|cpp|cxx):\d+: [^\[]*Assertion "
);
// CUDA's device-side assert in another language: the file, line, block and thread stay, the
// words `Assertion ... failed` do not (`IndexKernel.cu:92: operator(): block: [3358,0,0],
// thread: [50,0,0] 断言失败。`).
regex!(
    RE_ASSERT_TRANSLATED,
    r"\.cuh?:\d+:.*?block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\]\s*([^\s\[]*)"
);
regex!(
    RE_ASSERT_LOCATION,
    r"([\w./\\-]+\.cuh?):(\d+):\s*(.*?):?\s*block: \["
);
// No `\b` before: Markdown wraps it in underscores (`_CUBLAS_STATUS_ALLOC_FAILED_`).
regex!(RE_CUBLAS, r"(CUBLAS_STATUS_[A-Z]+(?:_[A-Z]+)*)");
regex!(RE_CUBLAS_NUMBERED, r"(?i)\bcublas error:? (\d{1,2})\b");
regex!(RE_CUDNN, r"\b(CUDNN_STATUS_[A-Z_0-9]+)\b");
regex!(RE_WHEN_CALLING, r"when calling `([^`]+)`");
regex!(
    RE_NCCL_ERROR_IN,
    r"NCCL error in: [^,]*(?:,\s*([^,]+?))?(?:,\s*NCCL version ([\w.+-]+))?\s*$"
);
regex!(
    RE_NCCL_NAME,
    r"\b(ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidArgument|ncclInvalidUsage|ncclRemoteError)\b"
);
regex!(RE_NCCL_TIMEOUT_MS, r"Timeout\(ms\)=(\d+)");
regex!(
    RE_DRIVER_FOUND,
    r"driver on your system is too old \(found version (\d+)\)"
);
regex!(RE_SM, r"capability (sm_\d+) is not compatible");
regex!(
    RE_MATLAB_DRIVER_CUDA,
    r"driver on your system supports CUDA version (\d+)\.(\d+)"
);
// The operation TensorFlow could not place: `for operation MatMul:`, `to node 'Adagrad/...':`.
regex!(
    RE_TF_PLACED_OP,
    r"Cannot assign a device (?:for operation|to node) '?([^':\s]+)"
);
regex!(
    RE_NGC_DRIVER,
    r"built for NVIDIA Driver Release ([\d.]+) or later"
);
regex!(
    RE_TF_NO_KERNEL_BINARIES,
    r"not built with CUDA kernel binaries compatible with compute capability (\d+)\.(\d+)"
);
regex!(
    RE_PTXAS_REQUIRES_TARGET,
    r"requires \.target sm_(\d+) or higher"
);
regex!(
    RE_COMPILED_RUNNING,
    r"[Cc]ompiled against (cuBLASLt|cuBLAS|cuDNN|CUDA) ([\d.]+) but running against (cuBLASLt|cuBLAS|cuDNN|CUDA) ([\d.]+\d)"
);
/// The messages of [`CUDA_ERRORS`], in table order (pattern `i` is entry `i`).
static CUDA_MESSAGES: LazyLock<Option<aho_corasick::AhoCorasick>> =
    LazyLock::new(|| aho_corasick::AhoCorasick::new(CUDA_ERRORS.iter().map(|e| e.message)).ok());
regex!(
    RE_PACKAGE_WITHOUT_CUDA,
    r"(\w+) (?:package|version) (?:was )?not compiled with (?:CUDA|GPU) support"
);
// Any shared library the loader could not find, CUDA's or not: glibc's `libfaiss.so: cannot
// open shared object file`, PyTorch's Windows `Error loading "...\\caffe2_nvrtc.dll" or one of
// its dependencies`, macOS's `Library not loaded: @rpath/libomp.dylib`.
regex!(
    RE_ANY_LIB,
    r#"(?:\b([\w+-][\w+.-]*\.so(?:\.[\d.]*\d)?): cannot open shared object file|Error loading "(?:[^"]*[\\/])?([\w+.-]+\.dll)" or one of its dependencies|Library not loaded: (?:\S*/)?([\w+.-]+\.dylib))"#
);
// NCCL's error return trace: `NCCL INFO group.cc:64 -> 3 [Async thread]` (codes 1-6 are
// errors; 7, ncclInProgress, is not).
regex!(
    RE_NCCL_RETURN,
    r"NCCL INFO [\w/.-]+\.(?:cc|cu|cpp|h):\d+ -> ([1-6])\b"
);
// FAISS's GPU classes, missing from its CPU-only package.
regex!(
    RE_FAISS_GPU_ATTRIBUTE,
    r"has no attribute '(?:StandardGpuResources|GpuIndex\w*|index_cpu_to_gpu\w*|GpuCloner\w*)'"
);
// PyTorch's own CUDA libraries, which extensions link against.
regex!(RE_TORCH_LIB, r"lib(?:torch_cuda\w*|c10_cuda)\.so");
// The memory module a host ECC error names: `P2-DIMMF1`, `CPU_SrcID#0_Ha#0_Chan#1_DIMM#0`.
regex!(RE_DIMM, r"[\w#-]*DIMM[\w#-]*");
// XLA when the driver is older than the PTX compiler it bundles: `The NVIDIA driver's CUDA
// version is 12.4 which is older than the PTX compiler version 12.5.82` (older XLA: `the
// ptxas CUDA version (12.3.107)`).
regex!(
    RE_XLA_DRIVER_OLDER,
    r"driver's CUDA version is ([\d.]+) which is older than the (?:PTX compiler|ptxas CUDA) version \(?([\d.]+)"
);
regex!(
    RE_UNDEFINED_CUDA_SYMBOL,
    r"undefined symbol: (_*(nccl|cublasLt|cublas|cudnn|cusparse|cufft|cusolver|curand|nvJitLink)[A-Z]\w*)"
);
regex!(
    RE_DETECTED_CUDA,
    r"detected CUDA version \(([\d.]+)\) mismatches the version that was used to compile(?:\s+PyTorch \(([\d.]+)\))?"
);
regex!(
    RE_DESERIALIZE_DEVICE,
    r"deserialize object on CUDA device \d+ but torch\.cuda\.device_count\(\) is \d+"
);
// DeepSpeed's op builder: `Installed CUDA version 12.2 does not match the version torch was
// compiled with 11.7, unable to compile cuda/cpp extensions without a matching cuda version.`
regex!(
    RE_DEEPSPEED_CUDA,
    r"Installed CUDA version ([\d.]+) does not match the version torch was compiled with ([\d.]+)"
);
// Fedora/RHEL packages of the driver: the kernel module's package against the user-space one
// (`kmod-nvidia version (575.64.03-1.fc42) does not match nvidia-driver version (575.64.05-1.fc42)`).
regex!(
    RE_KMOD_VS_DRIVER,
    r"kmod-nvidia version \(([^)\s]{1,40})\) does not match nvidia-driver version \(([^)\s]{1,40})\)"
);
// CUDA's assembler run on a file (Triton, a build): `ptxas add_kernel.ptx, line 5; fatal :
// Unsupported .version 8.4; current version is '7.8'`. The driver's own JIT names no file
// (`ptxas application ptx input`).
regex!(
    RE_PTXAS_FILE_VERSION,
    r"ptxas \S+\.ptx, line \d+; fatal\s*: Unsupported \.version ([\d.]+); current version is '([\d.]+)'"
);
regex!(
    RE_TENSORRT_TARGET_SM,
    r"Target GPU SM (\d{2,3}) is not supported by this TensorRT release"
);
regex!(
    RE_COULD_NOT_LOCATE_DLL,
    r"Could not (?:locate|load library) ((?:cudnn|cublas|cudart|cufft|curand|cusolver|cusparse|nvrtc|nvinfer|nccl)\w{0,40}\.dll)"
);
regex!(
    RE_PADDLE_THIRD_PARTY,
    r"third-party dynamic library \(([^)\s]{1,60})\) that Paddle depends on is not configured correctly"
);
// ONNX Runtime's arena: `BFCArena::AllocateRawInternal Failed to allocate memory for requested
// buffer of size 1509`.
regex!(
    RE_ORT_ARENA,
    r"Failed to allocate memory for requested buffer of size (\d{1,20})"
);
regex!(RE_RMM_ATTEMPTED, r"Attempted to allocate: (\d{1,20})");
regex!(RE_LEGACY_BRANCH, r"NVIDIA (\d{3}\.xx) Legacy drivers");
regex!(RE_GPU_COLON, r"GPU:(\d+)");
regex!(RE_CUDA_COLON, r"device CUDA:(\d+)");
// TensorFlow's check of the kernel module against libcuda: `kernel version 352.63.0 does not
// match DSO version 361.93.2 -- cannot find working devices in this configuration`.
regex!(
    RE_KERNEL_VS_DSO,
    r"kernel version ([\d.]+) does not match DSO(?: version ([\d.]+))?"
);
// The driver's Xid 45 names the error that caused the cleanup: `caused by previous Xid 149`.
regex!(RE_PREVIOUS_XID, r"caused by previous Xid (\d{1,3})");
// A CUDA library that a loader could not find, named without its file name: Lua Torch's
// `libcudnn (R4) not found in library path`, Paddle's `Cannot load cudnn shared library`.
regex!(
    RE_LIB_NOT_FOUND,
    r"(?:(lib(?:cudnn|cudart|cublas|cufft|curand|cusparse|cusolver|nvrtc|nccl))\s*\(R?\d+\)\s*not found|Cannot load (cudnn|cublas|cudart|curand|cufft|cusolver|cusparse|nccl|nvrtc) shared library)"
);
// XLA knows the compute capabilities of its time only.
regex!(
    RE_UNKNOWN_CC,
    r"Unknown compute capability \((\d+), ?(\d+)\)"
);
regex!(
    RE_PTX_TARGET,
    r"PTX version [\d.]+ does not support target '(sm_\d+)"
);
regex!(
    RE_UNSATISFIED_CUDA,
    r"unsatisfied condition: cuda\s*>=?\s*([\d.]+)"
);
regex!(
    RE_MIN_CUDA_CAPABILITY,
    r"minimum required Cuda capability is ([\d.]+)"
);
regex!(RE_KILLED_PROCESS, r"Killed process (\d+) \(([^)]{1,64})\)");
regex!(
    RE_CPU_ALLOC,
    r"(?:you tried to allocate (\d+) bytes|Unable to allocate ([\d.]+) ([KMGT]i?B))"
);
// JAX's own check of the CUDA libraries it loads: `Found cuDNN version 8600, but JAX was built
// against version 8906, which is newer` (also CUDA, cuSOLVER, cuBLAS, ...).
regex!(
    RE_BUILT_AGAINST,
    r"Found (\S+) version (\d+), but \S+ was built against version (\d+), which is newer"
);
// Its later wording: `Outdated cuDNN installation found.` then the versions on their own lines.
regex!(RE_OUTDATED_INSTALL, r"Outdated (\S+) installation found");
// nccl-tests: `NCCL failure common.cu:874 'unhandled system error'`.
regex!(RE_NCCL_TEST_FAILURE, r"NCCL failure \S+:\d+ '([^']+)'");
// NCCL 2's warnings before they carried its name: `[host:pid:tid [0] ]include/socket.h:185 WARN`.
regex!(
    RE_NCCL_SOURCE_WARN,
    r"^(?:\S+:\d+:\d+ \[\d+\] )?\S+\.(?:h|cc|cu|cpp|c):\d+ WARN "
);
regex!(
    RE_CUDNN_RUNTIME,
    // The words before the versions may be cut off by a hard wrap (`... CuDNN l` / `ibrary: 7.4.1
    // but source was compiled with: 7.6.4`).
    r"(?:Loaded runtime CuDNN l|^)ibrary:? (\d+(?:\.\d+)*)(?: \(compatibility version \d+\))? but source was compiled with:? (\d+(?:\.\d+)*)"
);
regex!(
    RE_MIN_CAPABILITY,
    r"(?i)only supported on GPUs with compute capability of at least (\d+)\.(\d)"
);
regex!(
    RE_LIB,
    r"((?:lib(?:cudart|cudnn\w*|cublas\w*|cufft\w*|curand|cusparse\w*|cusolver\w*|nvrtc\w*|nvvm|nccl|nvinfer\w*|nvJitLink|cupti|nvToolsExt|cuda|nvidia-ml|nvidia-container|nvcuvid|nvidia-encode)[.,]so(?:\.[\d.]+)?)|(?:(?:cudart|cudnn|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvrtc|nvvm)64_\w+\.dll)|(?:\b(?:nvvm|nvrtc)\.dll))"
);
regex!(
    RE_XID,
    r"(?i)\bxid\b\s*(?:\(((?:PCI:)?[0-9a-fA-F:.]+)\)\s*)?[:=]?\s*(\d{1,3})\b,?\s*(.*)"
);
regex!(
    RE_PCI,
    r"\b((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b"
);
regex!(
    RE_MEM_READING,
    r"(?i)\b(?:gpu[_ ]?)?(?:max_|peak[_ ]?)?mem(?:ory)?(?:[_ .](?:allocated|used|usage|alloc|reserved))?(?:\s*\[[a-z]+\])?\s*[=:]\s*([\d][\d.,]*)\s*([KMGT]i?B?|bytes|B)?\b"
);
regex!(
    RE_SMI_ROW,
    r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?,\s*(\d+) MiB\s*$"
);
regex!(
    RE_STEP,
    r"(?i)\b(?:step|iter(?:ation)?|it|epoch|batch)\s*[:=#]?\s*\[?(\d+)"
);
regex!(
    RE_BFC_STAT,
    r"^(?:.*\]\s*)?(Limit|InUse|MaxInUse|LargestFreeBlock|Reserved|PeakReserved):\s+(\d+)\s*$"
);
regex!(
    RE_ASYNC_STAT,
    format!(
        r"^(Currently allocated|Requested|Device limit|Free \(according to CUDA\))\s*:\s*{SIZE}"
    )
);
regex!(
    RE_SANITIZER,
    // racecheck puts its severity before a report: `Error: Race reported between` (CUDA 12+),
    // `ERROR: Potential WAW hazard`, `WARN:(Warp Level Programming) Potential RAW hazard`.
    r"^=========\s+(?:Error: |ERROR: |WARN:(?:\([^)\n]{0,40}\))? ?)?(Invalid __(?:global|shared|local)__ (?:read|write|atomic) of size \d+(?: bytes)?|Program hit [^\n]{0,120}|Race reported[^\n]{0,80}|Potential (?:RAW|WAR|WAW) hazard detected[^\n]{0,80}|Uninitialized __global__ memory read of size \d+(?: bytes)?|Misaligned (?:shared or local|global) address|Barrier error[^\n]{0,80}|Leaked \d+ bytes[^\n]{0,80}|Invalid PC|Illegal instruction|Out-of-range Shared or Local Address|Malloc/Free error[^\n]{0,80})"
);

regex!(
    RE_LINKER_CUDA_LIB,
    r"\bcannot find -l(cuda|cudart|cublas|cublasLt|cudnn|nccl|nvidia-ml|nvrtc|cufft|curand|cusparse|cusolver)\b"
);
regex!(
    RE_NAMED_CUDA_LIB_NOT_FOUND,
    r"\b(cublas|cufft|curand|cusparse|cusolver|cudart|cudnn|nvrtc|nccl) library not found"
);
regex!(
    RE_INSUFFICIENT_DRIVER_VERSION,
    r"Insufficient CUDA driver: (\d{4,5})\b"
);
regex!(
    RE_NEEDS_DRIVER,
    r"(?i)\bNVIDIA driver (?:version )?(\d{3}\.\d{2,3}(?:\.\d{2})?) or (?:later|newer|higher)"
);
regex!(
    RE_PIP_CUDA_PACKAGE,
    r"No matching distribution found for ([A-Za-z][\w.]*-cu(?:da)?\d{2,3}[\w.]*)"
);
regex!(
    RE_CUDNN_VERSION_IN_PARENS,
    r"cuDNN version\s*\((\d+(?:\.\d+)*)\)"
);
regex!(
    RE_CUDARC_LIB,
    r"Unable to find (nvrtc|cublas|cublasLt|curand|cudnn|nccl|cufft|cusparse|cusolver) lib under the names"
);
regex!(
    RE_RUNTIME_COMPUTE_CAP,
    r"Runtime compute cap (\d{2,3}) is not compatible"
);
regex!(RE_DALI_ALLOC, r"Can't allocate (\d+) bytes on device (\d+)");
regex!(RE_DLL_IMPORT, r"DLL load failed while importing (\w+)");
regex!(
    RE_FOUND_CAPABILITY,
    r"which is of cuda capability (\d{1,3})\.(\d{1,3})"
);
regex!(
    RE_CAPABILITY_RANGE,
    r"\((\d{1,3})\.(\d{1,3})\) - \((\d{1,3})\.(\d{1,3})\)"
);
regex!(
    RE_GPU_RAM_NEEDED,
    format!(r"\({SIZE} free, need(?:s)? at least {SIZE}\)")
);
regex!(
    RE_KOKKOS_ARCH,
    r"on device with compute capability (\d+)\.(\d)\b"
);
regex!(RE_PTXAS_VERSION, r"ptxas (\d+\.\d+(?:\.\d+)?) has a bug");
regex!(RE_QUOTED_ARCH, r"'((?:sm|compute)_\d+[af]?)'");
// The kernel could not give a GPU's memory window to its driver: another driver (the
// firmware's framebuffer, most often) holds it. The apostrophe may be a typographic one.
regex!(
    RE_BAR_BUSY,
    r"\b(?:vfio-pci|nvidia) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): BAR \d+: can.{1,3}t reserve \[mem"
);

fn size(c: &Captures<'_>, number: usize) -> Option<u64> {
    parse_size(c.get(number)?.as_str(), c.get(number + 1)?.as_str())
}

fn int(c: &Captures<'_>, group: usize) -> Option<u64> {
    let s: String = c
        .get(group)?
        .as_str()
        .chars()
        .filter(|c| *c != ',')
        .collect();
    s.parse().ok()
}

/// The framework a line names, if any.
fn framework_of(text: &str) -> Option<Framework> {
    if has!(text, "torch") || has!(text, "PyTorch") || has!(text, "THC") {
        Some(Framework::Pytorch)
    } else if has!(text, "external/org_tensorflow/") || has!(text, "external/xla/xla/") {
        // jaxlib builds XLA from TensorFlow's tree (or, later, XLA's own) as a Bazel external
        // repository, so JAX's log lines carry these paths; TensorFlow's own lines do not
        // (it logs `tensorflow/...`, and `external/local_xla/` since it split XLA out).
        Some(Framework::Jax)
    } else if has!(text, "tensorflow")
        || has!(text, "keras")
        || has!(text, "ResourceExhaustedError")
    {
        Some(Framework::Tensorflow)
    } else if has!(text, "jax")
        || has!(text, "XlaRuntimeError")
        || has!(text, "Xla")
        // jaxlib's GPU kernels (cuSOLVER, cuBLAS custom calls) word their CUDA errors so.
        || has!(text, "CUDA operation failed")
    {
        Some(Framework::Jax)
    } else if has!(text, "cupy") || has!(text, "CuPy") {
        Some(Framework::Cupy)
    } else {
        None
    }
}

/// A CPU-only build shown by a package listing (`torch 2.1.0+cpu`, conda's `py3.8_cpu_0` and
/// `cpuonly`) or by the answer to "built with CUDA?" on the line after the question.
fn cpu_build(text: &str, ctx: &mut Context) -> Option<ObsKind> {
    let asked = ctx.asked.take();
    if has!(text, "is_built_with_cuda()") {
        ctx.asked = Some(Question::CudaBuild(Framework::Tensorflow));
    } else if has!(text, "torch.version.cuda") {
        ctx.asked = Some(Question::CudaBuild(Framework::Pytorch));
    } else if has!(text, "torch.cuda.is_available()") {
        ctx.asked = Some(Question::CudaAvailable);
    } else if (has!(text, "list_physical_devices(") && has!(text, "GPU"))
        || has!(text, "is_gpu_available(")
    {
        ctx.asked = Some(Question::TfGpus);
    }
    // The question and its answer on one line: `Is TensorFlow built with CUDA?: False`.
    let same_line = text.ends_with("False")
        && (has!(text, "built with CUDA") || has!(text, "is_built_with_cuda"));
    let build = if same_line {
        if has!(text, "TensorFlow") || has!(text, "tf.") {
            detail::TENSORFLOW_CPU
        } else {
            detail::PYTORCH_CPU
        }
    } else if let Some(Question::CudaBuild(framework)) = asked
        && (text == "False" || text == "None")
    {
        match framework {
            Framework::Tensorflow => detail::TENSORFLOW_CPU,
            _ => detail::PYTORCH_CPU,
        }
    } else if has!(text, "but CUDA is not available")
        && (has!(text, "GradScaler") || has!(text, "device_type of 'cuda'"))
    {
        // torch's own warnings when asked for CUDA it cannot see: `torch.cuda.amp.GradScaler is
        // enabled, but CUDA is not available.  Disabling.`, autocast's `User provided
        // device_type of 'cuda', but CUDA is not available. Disabling`.
        detail::TORCH_NO_GPU
    } else if has!(text, "cuda.is_available()") && text.trim_end().ends_with("False") {
        // The question and its answer on one line, as scripts print them:
        // `torch.cuda.is_available(): False`, `torch.cuda.is_available() = False`.
        detail::TORCH_NO_GPU
    } else if has!(text, "Attempting to deserialize object on a CUDA device") {
        // `torch.load` of a checkpoint saved from the GPU: `Attempting to deserialize object
        // on a CUDA device but torch.cuda.is_available() is False.`
        detail::TORCH_NO_GPU
    } else if has!(text, "FP16 is not supported on CPU; using FP32 instead")
        || has!(text, "The unoptimized RealESRGAN is slow on CPU")
    {
        // Programs that fall back to the CPU when PyTorch sees no GPU, and say so in their
        // own words: Whisper's `FP16 is not supported on CPU; using FP32 instead`, GFPGAN's
        // `The unoptimized RealESRGAN is slow on CPU. We do not use it.`.
        detail::TORCH_NO_GPU
    } else if asked == Some(Question::CudaAvailable) && is_false_answer(text) {
        // The answer at a prompt: `False`, IPython's `Out[2]: False`, a quoted `>>false`.
        detail::TORCH_NO_GPU
    } else if (asked == Some(Question::TfGpus) && (is_false_answer(text) || is_empty_list(text)))
        // TensorFlow's guide prints `Num GPUs Available:  0`; its tutorials `GPU is NOT
        // AVAILABLE`; TensorFlow 1.x's session log `Device mapping: no known devices.`.
        || (text.starts_with("Num GPUs Available") && text.ends_with(" 0"))
        || text.ends_with("GPU is NOT AVAILABLE")
        || text.starts_with("Device mapping: no known devices")
    {
        detail::TENSORFLOW_NO_GPU
    } else if has!(text, "(you have ") && has!(text, "+cpu)") {
        // xFormers compares its build with the torch it finds: `PyTorch 2.1.2+cu121 with CUDA
        // 1201 (you have 2.1.2+cpu)`.
        detail::PYTORCH_CPU
    } else if text.starts_with("Ultralytics ") && has!(text, "+cpu") {
        // Ultralytics' banner names the torch build: `Ultralytics YOLOv8.1.3 🚀 Python-3.10.11
        // torch-2.1.0+cpu` (a CUDA build shows `+cu121 CUDA:0 (...)`).
        detail::PYTORCH_CPU
    } else if text.starts_with("jaxlib") && (has!(text, "cpu_") || has!(text, "-cpu")) {
        // conda's plan or listing: `jaxlib  conda-forge/linux-64::jaxlib-0.4.4-cpu_py311h...`.
        detail::JAX_CPU
    } else if text.starts_with("cpuonly ")
        // conda's `_pytorch_select 0.1 cpu_0`, the metapackage that picks the CPU build.
        || (text.starts_with("_pytorch_select") && has!(text, "cpu_"))
        || ((text.starts_with("pytorch ")
            || text.starts_with("torch ")
            || text.starts_with("torch=="))
            && (has!(text, "+cpu") || has!(text, "_cpu_")))
    {
        if has!(text, "_cpu_") || text.starts_with("cpuonly") || text.starts_with("_pytorch") {
            detail::CONDA_CPU
        } else {
            detail::PYTORCH_CPU
        }
    } else {
        return None;
    };
    Some(ObsKind::Env {
        env: EnvKind::TorchCpuBuild,
        detail: Some(build.to_owned()),
    })
}

/// The extension whose load failed for a missing PyTorch C++ symbol: the file's name before
/// its first dot (`/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: _ZN3c10...`
/// gives `torch_scatter/_scatter_cuda`, with the package folder when there is one).
fn torch_extension_lacking_a_symbol(text: &str) -> Option<String> {
    const TORCH_NAMESPACES: [&str; 6] = [
        "_ZN2at",
        "_ZNK2at",
        "_ZN3c10",
        "_ZNK3c10",
        "_ZN5torch",
        "_ZNK5torch",
    ];
    let (file, symbol) = text.split_once(": undefined symbol: ")?;
    if !TORCH_NAMESPACES.iter().any(|p| symbol.starts_with(p)) {
        return None;
    }
    let path = file.rsplit(' ').next()?;
    let mut parts = path.rsplit('/');
    let name = parts.next()?.split('.').next()?;
    let folder = parts
        .next()
        .filter(|f| !f.is_empty() && !matches!(*f, "site-packages" | "dist-packages" | "lib"));
    if name.is_empty() {
        return None;
    }
    Some(match folder {
        Some(folder) if folder != name => format!("{folder}/{name}"),
        _ => name.to_owned(),
    })
}

/// The module in `No module named '...'` when it is a package's compiled extension by its
/// name (`_ext`, `_cuda`, `_C`).
fn compiled_extension_module(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("No module named '")?;
    let (module, _) = rest.split_once('\'')?;
    let last = module.rsplit('.').next()?;
    (last.ends_with("_ext")
        || last.ends_with("_cuda")
        || last == "_C"
        || last.ends_with("_cuda_ext"))
    .then_some(module)
}

/// The CUDA DLL a Windows loader message names (`...\\torch\\lib\\cudnn_cnn_infer64_8.dll" or`).
fn cuda_dll_named(text: &str) -> Option<&str> {
    let end = text.find(".dll\"")? + 4;
    let start = text[..end]
        .rfind(['\\', '/', ' ', '"'])
        .map_or(0, |i| i + 1);
    let dll = &text[start..end];
    [
        "cudnn", "cublas", "cudart", "cufft", "curand", "cusolver", "cusparse", "nvrtc", "nvcuda",
    ]
    .iter()
    .any(|p| dll.starts_with(p))
    .then_some(dll)
}

/// The header in a compiler's `fatal error: EGL/egl.h: No such file or directory`.
fn header_not_found(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("fatal error: ")?;
    let (header, _) = rest.split_once(": No such file or directory")?;
    let name = header.rsplit('/').next()?;
    std::path::Path::new(name)
        .extension()
        .is_some_and(|e| {
            ["h", "hpp", "cuh"]
                .iter()
                .any(|h| e.eq_ignore_ascii_case(h))
        })
        .then(|| header.trim())
}

/// Whether a header is one of CUDA's, its libraries' or TensorRT's (`cuda_runtime.h`,
/// `cudnn.h`, `cuda/include/cuda.h`, `NvInfer.h`).
fn is_cuda_header(header: &str) -> bool {
    let name = header.rsplit('/').next().unwrap_or(header);
    let cuda = [
        "cuda",
        "cudnn",
        "cublas",
        "cufft",
        "curand",
        "cusparse",
        "cusolver",
        "nccl",
        "nvrtc",
        "nvToolsExt",
        "nvtx3",
        "cupti",
        "thrust",
        "cub",
        "npp",
        "nvml",
        // TensorRT's headers: `fatal error: NvInfer.h: No such file or directory`.
        "NvInfer",
        "NvOnnxParser",
    ];
    cuda.iter().any(|c| name.starts_with(c)) || header.contains("cuda/")
}

/// Whether a line is an empty list at a Python prompt (`[]`, IPython's `Out[3]: []`).
fn is_empty_list(text: &str) -> bool {
    let answer = text.trim_start_matches('>').trim();
    let answer = match answer.strip_prefix("Out[") {
        Some(rest) => rest.split_once("]:").map_or(rest, |(_, a)| a).trim(),
        None => answer,
    };
    answer == "[]"
}

/// Whether a line is a bare `False` answer at a Python prompt (`False`, `Out[2]: False`,
/// `>>false`).
fn is_false_answer(text: &str) -> bool {
    let answer = text.trim_start_matches('>').trim();
    let answer = match answer.strip_prefix("Out[") {
        Some(rest) => rest.split_once("]:").map_or(rest, |(_, a)| a).trim(),
        None => answer,
    };
    answer.eq_ignore_ascii_case("false")
}

/// What a driver installer's line reports: DKMS's "same version already installed" (a
/// harmless "error"), nvidia-installer refusing because a module is loaded, or a failure. A
/// bare `ERROR:` line counts only in an installer's output or when it names DKMS or a kernel
/// module (pip's `ERROR:` lines name nvidia packages too).
fn driver_install(text: &str, ctx: &Context) -> Option<ObsKind> {
    let outcome = if has!(text, "exactly matches what is already found in kernel")
        || has!(text, "DKMS will not replace this module")
    {
        DriverInstallOutcome::SameVersionInstalled
    } else if has!(text, "appears to already be loaded in your kernel")
        // The GPU Operator's driver container on a host whose own driver is loaded.
        || has!(text, "Could not unload NVIDIA driver kernel modules, driver is in use")
    {
        DriverInstallOutcome::ModuleLoaded
    } else if text.starts_with("gcc-version-check failed") {
        // nvidia-installer's and DKMS's builds refuse a compiler other than the kernel's.
        return Some(ObsKind::DriverInstall {
            outcome: DriverInstallOutcome::Failed,
            detail: Some(detail::GCC_MISMATCH.to_owned()),
        });
    } else if kernel_headers_missing(text) {
        // The module cannot be built without them: `Error: Unable to find a match:
        // kernel-headers kernel-devel`, `E: Unable to locate package linux-headers-...`.
        return Some(ObsKind::DriverInstall {
            outcome: DriverInstallOutcome::Failed,
            detail: Some(text.chars().take(160).collect()),
        });
    } else if (text.starts_with("ERROR:")
        && (ctx.in_driver_installer || has!(text, "dkms") || has!(text, "kernel module")))
        // DKMS cannot rebuild the module for a new kernel from a broken source tree:
        // `File: /var/lib/dkms/nvidia/390.48/source/dkms.conf does not exist.`
        || (has!(text, "/dkms/nvidia") && has!(text, "dkms.conf does not exist"))
        // make failing in DKMS's build tree of the NVIDIA module: `make[2]: *** [...:
        // /var/lib/dkms/nvidia/470.239.06/build] Error 2` (the word is translated: `Chyba 2`).
        || (text.starts_with("make") && has!(text, ": *** [") && has!(text, "/dkms/nvidia"))
        // DKMS's own report of a failed build, which names the module on its next line:
        // `Error! Bad return status for module build on kernel: 6.5.2-arch1-1 (x86_64)`, then
        // `Consult /var/lib/dkms/nvidia/390.157/build/make.log for more information.`
        || (text.starts_with("Consult /var/lib/dkms/nvidia") && has!(text, "make.log"))
        // nvidia-installer refusing while nouveau drives the GPU (its banner may be cut off).
        || has!(text, "Nouveau kernel driver is currently in use")
    {
        DriverInstallOutcome::Failed
    } else {
        return None;
    };
    let detail = text
        .strip_prefix("ERROR:")
        .map(|rest| rest.trim().chars().take(160).collect());
    Some(ObsKind::DriverInstall { outcome, detail })
}

/// A line that shows an NVIDIA GPU with its driver loaded on this machine, and is no error
/// (see [`ObsKind::GpuPresent`]).
fn gpu_present(text: &str) -> Option<String> {
    // The driver's own file: only a loaded driver writes `GPU Firmware:` there.
    if text.starts_with("GPU Firmware:") {
        return Some("the driver's /proc/driver/nvidia/gpus entry".to_owned());
    }
    // A GitHub Actions runner's banner names the GPUs it was given by UUID.
    if text.starts_with("GPUs UIDs: GPU-") {
        return Some("the CI runner's GPU list".to_owned());
    }
    // A start script's own check (LocalAI's, ollama's images).
    if text.starts_with("NVIDIA GPU detected") && !has!(text, "not") {
        return Some("the program's own GPU check".to_owned());
    }
    None
}

/// A package manager that cannot find the kernel's headers, which the driver's module is
/// built against (by nvidia-installer, DKMS or the GPU Operator's driver container; a GPU
/// job's log holds such a line for no other reason).
fn kernel_headers_missing(text: &str) -> bool {
    (has!(text, "kernel-headers") || has!(text, "kernel-devel") || has!(text, "linux-headers"))
        && (has!(text, "Unable to find a match")
            || has!(text, "Unable to locate package")
            || has!(text, "No match for argument"))
}

/// `Cuda(NoBinaryForGpu)`, `CudaError::NoBinaryForGpu` → `CUDA_ERROR_NO_BINARY_FOR_GPU: ...`,
/// when the variant is a CUDA driver error.
fn rust_cuda_error(text: &str) -> Option<String> {
    let (_, rest) = text
        .split_once("Cuda(")
        .or_else(|| text.split_once("CudaError::"))?;
    let variant: String = rest
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .take(48)
        .collect();
    let mut snake = String::from("CUDA_ERROR_");
    for (i, ch) in variant.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(ch.to_ascii_uppercase());
    }
    let entry = lookup_cuda_error(&snake)?;
    Some(format!("CUDA error: {snake}: {}", entry.message))
}

/// The function of a Python traceback frame: `File "train.py", line 282, in validate`.
fn traceback_function(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("File \"")?;
    let (_, after_path) = rest.split_once("\", line ")?;
    let (_, function) = after_path.split_once(", in ")?;
    function.split_whitespace().next()
}

/// The words of a function name that make it an evaluation step (see [`is_evaluation`]).
const EVALUATION_WORDS: &[&str] = &[
    "val",
    "valid",
    "validate",
    "validation",
    "eval",
    "evaluate",
    "evaluation",
];

/// Whether a function name is a training loop's evaluation step (`validate`,
/// `validation_step`, `evaluate`, `evaluation_loop`, `eval_epoch`, `run_validation`: the
/// first or last word of the name), where
/// an out-of-memory error has causes of its own: autograd left on, outputs kept on the GPU.
/// Prediction and test functions are not counted: they are often a whole inference job.
fn is_evaluation(function: &str) -> bool {
    let name = function.trim_start_matches('_').to_ascii_lowercase();
    let mut words = name.split('_');
    let first = words.next().unwrap_or_default();
    let last = words.next_back().unwrap_or(first);
    EVALUATION_WORDS.contains(&first) || EVALUATION_WORDS.contains(&last)
}

/// The container ID in a shell prompt whose host name is one (`root@f14d48a29224:/app#`):
/// docker names a container's host after the first 12 hex digits of its ID.
fn container_prompt(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("root@")?;
    let id = rest.get(..12)?;
    let is_id = id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    (is_id && rest[12..].starts_with(':')).then_some(id)
}

/// The container docker compose (v1) says it created (`Creating app_web_run ... done`) or
/// attached to (`Attaching to app-web-1, app-db-1`): the output after it is the container's.
fn compose_container(text: &str) -> Option<&str> {
    let name = if let Some(rest) = text.strip_prefix("Creating ") {
        rest.strip_suffix(" ... done")?
    } else {
        text.strip_prefix("Attaching to ")?.split(", ").next()?
    };
    let is_name = !name.is_empty()
        && name.len() <= 96
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    is_name.then_some(name)
}

pub(crate) fn recognize(text: &str, ctx: &mut Context) -> Found {
    let mut found = Found {
        framework_hint: framework_of(text),
        ..Found::default()
    };
    if let Some(fw) = found.framework_hint {
        ctx.last_framework = Some(fw);
    }
    let hint = found.framework_hint;
    // Only the line right after a wrapped OOM can continue it.
    let wrapped_request = ctx.oom_wrapped_request.take();

    // Lines that only repeat an error's name as advice ("Search for `cudaErrorAssert' in
    // ...", once the error itself was read) or hints printed with every error carry nothing
    // new.
    if (text.starts_with("Search for `") && ctx.saw_error)
        || text.starts_with("CUDA kernel errors might be asynchronously")
        || text.starts_with("For debugging consider passing CUDA_LAUNCH_BLOCKING")
        || text.starts_with("Compile with `TORCH_USE_CUDA_DSA`")
    {
        return found;
    }

    // A Python traceback: whether it passes through an evaluation function, for the
    // out-of-memory message that ends it.
    if text.starts_with("Traceback (most recent call last)") {
        ctx.evaluation_frame = None;
        return found;
    }
    if let Some(function) = traceback_function(text) {
        if is_evaluation(function) {
            ctx.evaluation_frame = Some(function.chars().take(64).collect());
        }
        // CuPy building its NcclError for a status its table lacks fails in the exception's
        // own constructor (`KeyError: 6`): NCCL returned an error all the same.
        if function.ends_with("NcclError.__init__") {
            found.observations.push((
                ObsKind::Nccl(NcclInfo {
                    kind: "NcclError".to_owned(),
                    timeout_ms: None,
                    version: None,
                }),
                Some(Framework::Cupy),
            ));
        }
        return found;
    }

    // A prompt inside a container stands before the command it ran, which the rest reads.
    if let Some(id) = container_prompt(text) {
        found.observations.push((
            ObsKind::Container {
                how: format!("a shell prompt inside container {id}"),
            },
            None,
        ));
    }
    if let Some(how) = gpu_present(text) {
        found.observations.push((ObsKind::GpuPresent { how }, None));
        return found;
    }
    if let Some(name) = compose_container(text) {
        found.observations.push((
            ObsKind::Container {
                how: format!("docker compose container `{name}`"),
            },
            None,
        ));
        return found;
    }
    if let Some(obs) = cpu_build(text, ctx) {
        found.observations.push((obs, hint));
        return found;
    }
    // The answer to `torch.cuda.is_available()` comes on a line no trigger word finds
    // (`Out[2]: False`, a quoted `>>false`).
    found.starts_multiline = matches!(ctx.asked, Some(Question::CudaAvailable | Question::TfGpus));
    if has!(text, "nvidia-installer")
        || has!(text, "NVIDIA Software Installer")
        || has!(text, "NVIDIA Accelerated Graphics Driver")
        // Fedora's installer script (`[ # ] NVIDIA AUTOINSTALLER FOR FEDORA LINUX`).
        || has!(text, "NVIDIA AUTOINSTALLER")
    {
        ctx.in_driver_installer = true;
    }
    if let Some(obs) = driver_install(text, ctx) {
        found.observations.push((obs, Some(Framework::Other)));
        return found;
    }
    // A Rust panic: the message is on this line (Rust < 1.73) or the next ones.
    if text.starts_with("thread '") && has!(text, "' panicked at") {
        found.starts_multiline = true;
    }
    // The Rust CUDA crates print driver errors as enum variants (`Cuda(NoBinaryForGpu)`,
    // `CudaError::InvalidDevice`): read them as the C name they stand for.
    if let Some(c_name) = rust_cuda_error(text) {
        let mut inner = recognize(&c_name, ctx);
        inner.starts_multiline |= found.starts_multiline;
        inner.framework_hint = inner.framework_hint.or(hint);
        return inner;
    }

    // PyTorch's capability check (2.7 and later): `Found GPU0 NVIDIA GB10 which is of cuda
    // capability 12.1.`, `Minimum and Maximum cuda capability supported by this version of
    // PyTorch is`, `(8.0) - (12.0)`, on one line or three.
    if has!(text, "which is of cuda capability")
        && let Some(c) = RE_FOUND_CAPABILITY.captures(text)
    {
        ctx.gpu_capability = c[1].parse().ok().zip(c[2].parse().ok());
        found.starts_multiline = true;
    }
    if let Some(capability) = ctx.gpu_capability
        && let Some(c) = RE_CAPABILITY_RANGE.captures(text)
    {
        ctx.gpu_capability = None;
        let bound = |major: usize, minor: usize| -> Option<(u32, u32)> {
            Some((c[major].parse().ok()?, c[minor].parse().ok()?))
        };
        if let (Some(lowest), Some(highest)) = (bound(1, 2), bound(3, 4))
            && let Some(sm) = outside_the_build(capability, lowest, highest)
        {
            let obs = ObsKind::Env {
                env: EnvKind::ArchUnsupported,
                detail: Some(sm),
            };
            found.observations.push((obs, Some(Framework::Pytorch)));
        }
        return found;
    }
    // The BFC allocator's statistics block, and a CUDA check macro's report (`CUDA Error:`,
    // then `File:`, `Line:`, `Error code: 98`, `Error text: invalid device function`): their
    // numbers are on the lines that follow.
    if text.trim_end().ends_with("Stats:") || text == "CUDA Error:" || text == "CUDA error:" {
        found.starts_multiline = true;
        return found;
    }
    if let Some(obs) = kernel(text) {
        // Xid 45 is the cleanup after another error, and the driver names it: keep that one too.
        let earlier = match &obs {
            ObsKind::Xid {
                xid: 45,
                pci,
                detail: Some(d),
            } => RE_PREVIOUS_XID
                .captures(d)
                .and_then(|c| c[1].parse::<u32>().ok())
                .map(|xid| ObsKind::Xid {
                    xid,
                    pci: pci.clone(),
                    detail: Some(format!("named by a later Xid 45: {d}")),
                }),
            _ => None,
        };
        found.observations.push((obs, Some(Framework::Kernel)));
        if let Some(earlier) = earlier {
            found.observations.push((earlier, Some(Framework::Kernel)));
        }
        return found;
    }
    if text.starts_with("=========")
        && (has!(text, "bytes after the nearest allocation")
            || has!(text, "bytes before the nearest allocation")
            || has!(text, "is out of bounds"))
    {
        found.observations.push((
            ObsKind::SanitizerReport {
                what: "Out-of-bounds access".to_owned(),
            },
            Some(Framework::Cuda),
        ));
        return found;
    }
    if let Some(what) = text
        .starts_with("=========")
        .then(|| RE_SANITIZER.captures(text))
        .flatten()
        .and_then(|c| c.get(1))
    {
        found.observations.push((
            ObsKind::SanitizerReport {
                what: what.as_str().trim().to_owned(),
            },
            Some(Framework::Cuda),
        ));
        return found;
    }
    if let Some(obs) = tf_placement(text) {
        found.observations.push((obs, Some(Framework::Tensorflow)));
        return found;
    }
    // Before the GPU out-of-memory recognisers: the kernel's "Out of memory: Killed process"
    // is about the host's memory, not the GPU's.
    if let Some(obs) = host_memory(text) {
        found.observations.push((obs, hint));
        return found;
    }
    if let Some((mut oom, multiline)) = oom(text, ctx, wrapped_request) {
        oom.during_evaluation.clone_from(&ctx.evaluation_frame);
        // The message stops after the request: its numbers may follow on the next line.
        if oom.style == Some(OomStyle::TorchSentence)
            && oom.truncated
            && oom.gpu.is_none()
            && wrapped_request.is_none()
        {
            ctx.oom_wrapped_request = oom.requested_bytes;
        }
        let fw = oom.framework.or(hint);
        found.starts_multiline = multiline;
        found.observations.push((ObsKind::Oom(oom), fw));
        return found;
    }
    if let Some(c) = RE_ASYNC_STAT.captures(text)
        && let Some(bytes) = size(&c, 2)
    {
        let key = match &c[1] {
            "Currently allocated" => "currently_allocated",
            "Requested" => "requested",
            "Device limit" => "device_limit",
            _ => "free",
        };
        found.observations.push((
            ObsKind::AllocatorStat {
                key: key.to_owned(),
                bytes,
            },
            Some(Framework::Pytorch),
        ));
        return found;
    }
    if let Some(c) = RE_BFC_STAT.captures(text)
        && let Some(bytes) = int(&c, 2)
    {
        found.observations.push((
            ObsKind::AllocatorStat {
                key: c[1].to_owned(),
                bytes,
            },
            ctx.last_framework,
        ));
        return found;
    }
    if let Some((env, detail)) = env(text) {
        found
            .observations
            .push((ObsKind::Env { env, detail }, hint));
        // "no kernel image" is also a CUDA error; the env observation says it all.
        return found;
    }
    // The assertion itself, or, where the words around it are not English (`... thread:
    // [50,0,0] 断言失败。`), what follows the kernel's block and thread.
    let assertion = match RE_ASSERT.captures(text) {
        Some(c) if !RE_HOST_ASSERT.is_match(text) => Some(c[1].trim().to_owned()),
        Some(_) => None,
        None => RE_ASSERT_TRANSLATED
            .captures(text)
            .map(|c| c[1].trim().to_owned()),
    };
    if let Some(assertion) = assertion {
        let location = RE_ASSERT_LOCATION.captures(text).map(|l| {
            let file = l[1].rsplit(['/', '\\']).next().unwrap_or(&l[1]).to_owned();
            format!("{file}:{} {}", &l[2], short_function(&l[3]))
        });
        // Python's own `AssertionError` has no "Assertion ... failed" text; this is CUDA's
        // device-side `assert` (or a C++ one), which is what the rules want.
        found.observations.push((
            ObsKind::DeviceAssert {
                assertion,
                location,
            },
            hint.or(Some(Framework::Cuda)),
        ));
        return found;
    }
    if let Some(status) = cublas_status(text) {
        found.observations.push((
            ObsKind::Cublas(LibStatus {
                code: cublas_code(&status),
                call: RE_WHEN_CALLING
                    .captures(text)
                    .map(|c| c[1].to_owned())
                    .or_else(|| {
                        (has!(text, "cublas handle") || has!(text, "cublasCreate"))
                            .then(|| "cublasCreate".to_owned())
                    })
                    .or_else(|| {
                        text.strip_prefix("CUBLAS failure in ")
                            .and_then(|rest| rest.split_once('('))
                            .map(|(call, _)| call.to_owned())
                    }),
                status,
            }),
            hint,
        ));
        return found;
    }
    // MXNet/Caffe checks print the expected status first: `Check failed: err ==
    // CUDNN_STATUS_SUCCESS (1 vs. 0) CUDNN_STATUS_NOT_INITIALIZED`; the failure is the other.
    if let Some(c) = RE_CUDNN
        .captures_iter(text)
        .find(|c| &c[1] != "CUDNN_STATUS_SUCCESS")
    {
        let status = c[1].to_owned();
        found.observations.push((
            ObsKind::Cudnn(LibStatus {
                code: cudnn_code(&status, text),
                status,
                call: RE_WHEN_CALLING.captures(text).map(|c| c[1].to_owned()),
            }),
            hint,
        ));
        return found;
    }
    // Only the expected status, with the failing one as a number: `... ==
    // CUDNN_STATUS_SUCCESS (2 vs. 0)` (MXNet). The numbers are cuDNN ≤8's.
    if has!(text, "CUDNN_STATUS_SUCCESS")
        && let Some(n) = RE_VS.captures(text).and_then(|c| c[1].parse::<u32>().ok())
        && let Some(status) = cudnn_status_of(n)
    {
        found.observations.push((
            ObsKind::Cudnn(LibStatus {
                code: Some(n),
                status: status.to_owned(),
                call: RE_CHECKED_CALL.captures(text).map(|c| c[1].to_owned()),
            }),
            hint,
        ));
        return found;
    }
    // TensorFlow 2's "Failed to get convolution algorithm. This is probably because cuDNN
    // failed to initialize" is its later wording of "Could not create cudnn handle".
    let tf_no_handle = has!(text, "Could not create cudnn handle")
        || has!(text, "cuDNN failed to initialize")
        // XLA's (JAX, TensorFlow) wording.
        || has!(text, "DNN library initialization failed");
    if has!(text, "Unable to find a valid cuDNN algorithm")
        || tf_no_handle
        // TensorFlow 1's `cuDNN launch failure : input shape(...)`.
        || has!(text, "cuDNN launch failure")
        || has!(text, "cuDNN error:")
        || has!(text, "cuDNN Frontend error")
    {
        let status = if has!(text, "Unable to find a valid cuDNN algorithm") {
            "NO_VALID_ALGORITHM"
        } else if tf_no_handle {
            "HANDLE_CREATION_FAILED"
        } else {
            "ERROR"
        };
        found.observations.push((
            ObsKind::Cudnn(LibStatus {
                status: status.to_owned(),
                code: None,
                call: None,
            }),
            hint,
        ));
        return found;
    }
    if let Some(nccl) = nccl(text) {
        found.starts_multiline = nccl.kind.contains("unhandled cuda error");
        found
            .observations
            .push((ObsKind::Nccl(nccl), Some(Framework::Nccl)));
        return found;
    }
    // cuda-gdb stops on the fault itself: `CUDA Exception: Warp Out-of-range Address`,
    // `Warp Misaligned Address`, `Warp Illegal Address`, `Device Illegal Address`.
    if let Some(what) = text.strip_prefix("CUDA Exception: ")
        && what.contains("Address")
    {
        let err = CudaErrorInfo {
            code: Some(if what.contains("Misaligned") {
                716
            } else {
                700
            }),
            name: None,
            message: Some(format!("CUDA Exception: {}", what.trim())),
            sticky: true,
        };
        found.observations.push((ObsKind::CudaError(err), hint));
        return found;
    }
    // ROCm's HSA runtime words an illegal address so (`Memory access fault by GPU node-1
    // (Agent handle: 0x...) on address 0x7f8a068cb000. Reason: Page not present or
    // supervisor privilege.`), and aborts.
    if has!(text, "Memory access fault by GPU node") {
        let err = CudaErrorInfo {
            code: Some(700),
            name: Some("hipErrorIllegalAddress".to_owned()),
            message: Some("memory access fault by GPU".to_owned()),
            sticky: true,
        };
        found.observations.push((ObsKind::CudaError(err), hint));
        return found;
    }
    if let Some(err) = cuda_error(text) {
        // CUDA error 2 by number alone (nvdiffrast's `Cuda error: 2[cudaMalloc(...)]`, a check
        // macro's `CUDA error 2 at file.cu:88`) is an allocation that failed: the out-of-memory
        // recognisers know it by its words, which such a line does not print.
        if err.code == Some(2) {
            let oom = OomInfo {
                framework: framework_of(text),
                style: Some(OomStyle::CudaCall),
                ..OomInfo::default()
            };
            let fw = oom.framework.or(hint);
            found.observations.push((ObsKind::Oom(oom), fw));
            return found;
        }
        // 803 and 804 by number alone (`Cuda driver error 804 in call at file ...`) say what
        // their messages say: the kernel driver is too old for the CUDA in use; 209 (nvdiffrast's
        // `Cuda error: 209[cudaLaunchKernel(...)]`) that the build has no kernel for this GPU.
        let environment = match err.code {
            Some(803) => Some((EnvKind::DriverTooOld, Some(detail::ERROR_803))),
            Some(804) => Some((EnvKind::DriverTooOld, Some(detail::ERROR_804))),
            Some(209) => Some((EnvKind::ArchUnsupported, None)),
            _ => None,
        };
        if let Some((env, d)) = environment {
            found.observations.push((
                ObsKind::Env {
                    env,
                    detail: d.map(str::to_owned),
                },
                hint,
            ));
        }
        found.observations.push((ObsKind::CudaError(err), hint));
        return found;
    }
    if has!(text, "Persistence-M") {
        ctx.smi_next_gpu = Some(0);
        return found;
    }
    // The process and MIG tables that follow have memory columns of their own.
    if has!(text, "Process name") || (has!(text, "MIG") && has!(text, " GI ")) {
        ctx.smi_next_gpu = None;
    }
    if let Some(obs) = gpu_state(text, ctx) {
        found.observations.push((obs, None));
        return found;
    }
    if let Some(obs) = memory_reading(text) {
        found.observations.push((obs, hint));
    }
    found
}

/// The GPU's architecture (`sm_61`) when PyTorch's build cannot run on it: below the build's
/// lowest capability, or of a newer major than its highest. A newer minor of the highest
/// major (a GB10's 12.1 beside a build up to 12.0) runs that major's kernels, and the warning
/// PyTorch prints for it is harmless.
fn outside_the_build(gpu: (u32, u32), lowest: (u32, u32), highest: (u32, u32)) -> Option<String> {
    (gpu < lowest || gpu.0 > highest.0).then(|| format!("sm_{}{}", gpu.0, gpu.1))
}

/// The cuBLAS status a line names: the first that is not `CUBLAS_STATUS_SUCCESS` (a check
/// like `err == CUBLAS_STATUS_SUCCESS (1 vs. 0)` names success and carries the real number),
/// or the status behind one of cuBLAS's own message strings.
fn cublas_status(text: &str) -> Option<String> {
    if let Some(c) = RE_CUBLAS
        .captures_iter(text)
        .find(|c| &c[1] != "CUBLAS_STATUS_SUCCESS")
    {
        return Some(c[1].to_owned());
    }
    if has!(text, "CUBLAS_STATUS_SUCCESS") {
        // A check that expected success prints what it got: `(13 vs. 0)`, or FAISS's
        // `'err == CUBLAS_STATUS_SUCCESS' failed ... details: cublas failed (13)`.
        static RE_FAILED_WITH: LazyLock<Regex> =
            LazyLock::new(|| re(r"(?i)cublas failed \((\d{1,2})\)"));
        let n: u32 = RE_VS
            .captures(text)
            .or_else(|| RE_FAILED_WITH.captures(text))?[1]
            .parse()
            .ok()?;
        return cublas_status_of(n).map(str::to_owned);
    }
    // DyNet's check prints the failing call, and the status number alone on the next line:
    // `CUBLAS failure in cublasSgemm(dev.cublas_handle, ...)`.
    if text.starts_with("CUBLAS failure in cublas") {
        return Some(LibStatus::UNKNOWN.to_owned());
    }
    // A bare number (`CUBLAS error: 7`, Dorado's `CuBLAS error 8`), and cuBLAS's own
    // complaint about an argument (`On entry to GEMM_EX  parameter number 9 had an illegal
    // value`), which is status 7.
    if let Some(c) = RE_CUBLAS_NUMBERED.captures(text) {
        return cublas_status_of(c[1].parse().ok()?).map(str::to_owned);
    }
    if text.starts_with("On entry to ") && has!(text, "had an illegal value") {
        return Some("CUBLAS_STATUS_INVALID_VALUE".to_owned());
    }
    // cublasGetStatusString's texts, which llama.cpp/ggml and others print.
    let by_string = [
        (
            "the library was not initialized",
            "CUBLAS_STATUS_NOT_INITIALIZED",
        ),
        (
            "the resource allocation failed",
            "CUBLAS_STATUS_ALLOC_FAILED",
        ),
        (
            "an invalid numeric value was used as an argument",
            "CUBLAS_STATUS_INVALID_VALUE",
        ),
        (
            "an absent device architectural feature is required",
            "CUBLAS_STATUS_ARCH_MISMATCH",
        ),
        (
            "the GPU program failed to execute",
            "CUBLAS_STATUS_EXECUTION_FAILED",
        ),
        (
            "the requested functionality is not supported",
            "CUBLAS_STATUS_NOT_SUPPORTED",
        ),
    ];
    by_string
        .iter()
        .find(|(s, _)| text.contains(s))
        .map(|(_, status)| (*status).to_owned())
}

regex!(
    RE_SMI_PROCESS,
    r"^\|\s+(\d+)\s+(?:N/A\s+N/A\s+)?(\d+)\s+[CG+]+\s+\S.*?\s(\d+)\s?MiB\s*\|$"
);
regex!(RE_SMI_MEMORY, r"\|\s*(\d+)\s?MiB\s*/\s*(\d+)\s?MiB\s*\|");
regex!(
    RE_GPUSTAT,
    r"^\[(\d+)\]\s.*\|\s*(\d+)\s*/\s*(\d+)\s*MB\s*\|"
);
regex!(
    RE_TF_DEVICE_MEMORY,
    r"^(Total|Free) memory:\s*([\d.]+)\s?([KMGT]i?B)"
);
regex!(
    RE_TEMPERATURE,
    r"^GPU (Current Temp|Max Operating Temp|Slowdown Temp|Shutdown Temp)\s*:\s*(\d+) C"
);

/// GPU state that a tool printed into the log: nvidia-smi rows, gpustat, `TensorFlow`'s
/// device listing, `nvidia-smi -q` temperatures.
fn gpu_state(text: &str, ctx: &mut Context) -> Option<ObsKind> {
    const MIB: u64 = 1 << 20;
    if let Some(c) = RE_SMI_PROCESS.captures(text) {
        return Some(ObsKind::GpuProcess {
            gpu: c[1].parse().ok()?,
            pid: c[2].parse().ok()?,
            bytes: int(&c, 3)? * MIB,
        });
    }
    if let Some(c) = RE_SMI_MEMORY.captures(text) {
        let gpu = ctx.smi_next_gpu;
        ctx.smi_next_gpu = gpu.map(|g| g + 1);
        return Some(ObsKind::GpuMemory {
            gpu,
            used_bytes: int(&c, 1).map(|v| v * MIB),
            free_bytes: None,
            total_bytes: int(&c, 2).map(|v| v * MIB),
        });
    }
    if let Some(c) = RE_GPUSTAT.captures(text) {
        // gpustat's "MB" are MiB (it divides NVML's bytes by 1024²).
        return Some(ObsKind::GpuMemory {
            gpu: c[1].parse().ok(),
            used_bytes: int(&c, 2).map(|v| v * MIB),
            free_bytes: None,
            total_bytes: int(&c, 3).map(|v| v * MIB),
        });
    }
    if let Some(c) = RE_TF_DEVICE_MEMORY.captures(text) {
        let bytes = size(&c, 2);
        let total = &c[1] == "Total";
        return Some(ObsKind::GpuMemory {
            gpu: None,
            used_bytes: None,
            free_bytes: if total { None } else { bytes },
            total_bytes: if total { bytes } else { None },
        });
    }
    if let Some(c) = RE_TEMPERATURE.captures(text) {
        return Some(ObsKind::Temperature {
            key: c[1].to_ascii_lowercase().replace(' ', "_"),
            celsius: c[2].parse().ok()?,
        });
    }
    None
}

/// `void foo<float>(float*, int) [with T = float]` → `foo`.
fn short_function(f: &str) -> String {
    let f = f.trim();
    let head = f.split('(').next().unwrap_or(f);
    let head = head.split('<').next().unwrap_or(head);
    let name = head
        .rsplit([' ', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(head);
    name.chars().take(80).collect()
}

fn oom(text: &str, ctx: &Context, wrapped_request: Option<u64>) -> Option<(OomInfo, bool)> {
    let mut o = OomInfo::default();
    let fw_line = framework_of(text);

    // The second half of PyTorch's OOM, wrapped before its numbers: `(GPU 0; 11.92 GiB total
    // capacity; 307.86 MiB already allocated; 4.36 GiB free; 6.80 GiB cached)`.
    if let Some(requested) = wrapped_request
        && text.starts_with("(GPU ")
        && has!(text, "total capacity")
    {
        o.requested_bytes = Some(requested);
        o.framework = Some(Framework::Pytorch);
        o.device_kind = Some("CUDA".to_owned());
        torch_fields(text, &mut o);
        return Some((o, false));
    }

    if let Some(c) = RE_TRIED.captures(text) {
        o.requested_bytes = size(&c, 1);
        o.framework = Some(Framework::Pytorch);
        o.device_kind = RE_OOM_HEAD
            .captures(text)
            .map(|c| c[1].to_owned())
            .or_else(|| Some("CUDA".to_owned()));
        if let Some(c) = RE_MPS.captures(text) {
            o.style = Some(OomStyle::TorchMps);
            o.device_kind = Some("MPS".to_owned());
            o.allocated_bytes = size(&c, 1);
            o.other_processes = Vec::new();
            o.allowed_bytes = size(&c, 5);
            return Some((o, false));
        }
        torch_fields(text, &mut o);
        return Some((o, false));
    }
    if RE_TRIED_EB.is_match(text) {
        o.framework = Some(Framework::Pytorch);
        o.style = Some(OomStyle::TorchSentence);
        o.requested_bytes = Some(u64::MAX / 2);
        return Some((o, false));
    }
    if let Some(c) = RE_OOM_HEAD.captures(text) {
        // "CUDA out of memory." cut before "Tried to allocate".
        o.framework = Some(Framework::Pytorch);
        o.device_kind = Some(c[1].to_owned());
        o.style = Some(OomStyle::TorchSentence);
        o.truncated = true;
        torch_fields(text, &mut o);
        return Some((o, false));
    }
    if has!(text, "cuda runtime error (2) : out of memory")
        || (has!(text, "THCudaCheck") && has!(text, "out of memory"))
    {
        o.framework = Some(Framework::Pytorch);
        o.style = Some(OomStyle::TorchThc);
        return Some((o, false));
    }
    if let Some(c) = RE_ASYNC_HEAD.captures(text) {
        o.framework = Some(Framework::Pytorch);
        o.style = Some(OomStyle::TorchMallocAsync);
        o.gpu = c[1].parse().ok();
        return Some((o, true));
    }
    if let Some(c) = RE_TF_OOM.captures(text) {
        o.framework = Some(Framework::Tensorflow);
        o.style = Some(OomStyle::TfOpKernel);
        o.requested_bytes =
            tensor_bytes(c.get(1).map(|m| m.as_str()), c.get(2).map(|m| m.as_str()));
        o.gpu = RE_TF_DEVICE.captures(text).and_then(|c| c[1].parse().ok());
        return Some((o, false));
    }
    // The BFC allocator dumps its bins only when an allocation failed (`bfc_allocator.cc:597]
    // Bin (1048576): Total Chunks: 1, Chunks in use: 0. 1.00MiB allocated for chunks.`); the
    // "not a failure" warning dumps nothing.
    if !ctx.saw_oom && has!(text, "] Bin (") && has!(text, "Total Chunks:") {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Bfc);
        return Some((o, false));
    }
    if let Some(c) = RE_BFC.captures(text) {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Bfc);
        o.requested_bytes = RE_BFC_ROUNDED
            .captures(text)
            .and_then(|r| int(&r, 1))
            .or_else(|| size(&c, 1));
        o.not_a_failure = has!(text, "not a failure");
        return Some((o, false));
    }
    // Before XLA's pattern: CuPy's "Out of memory allocating N bytes (allocated so far: ...,
    // limit set to: ...)" starts like XLA's, and only this pattern takes the pool's numbers.
    if let Some(c) = RE_CUPY.captures(text) {
        o.framework = Some(Framework::Cupy);
        o.style = Some(OomStyle::Cupy);
        o.requested_bytes = int(&c, 1);
        o.allocated_bytes = int(&c, 2);
        o.allowed_bytes = int(&c, 3);
        return Some((o, false));
    }
    if let Some(c) = RE_XLA_TPU.captures(text) {
        o.framework = Some(Framework::Jax);
        o.style = Some(OomStyle::Xla);
        o.requested_bytes = int(&c, 1);
        o.total_bytes = int(&c, 2);
        return Some((o, false));
    }
    if let Some(c) = RE_XLA.captures(text) {
        o.framework = fw_line.or(Some(Framework::Jax));
        o.style = Some(OomStyle::Xla);
        o.requested_bytes = size(&c, 1);
        o.gpu = RE_XLA_DEVICE.captures(text).and_then(|c| c[1].parse().ok());
        return Some((o, false));
    }
    if let Some(c) = RE_CUPY_OLD.captures(text) {
        o.framework = Some(Framework::Cupy);
        o.style = Some(OomStyle::Cupy);
        o.requested_bytes = int(&c, 1);
        o.allocated_bytes = int(&c, 2);
        return Some((o, false));
    }
    if let Some(c) = RE_NCCL_CUDA_FAILURE.captures(text)
        && (&c[1] == "2" || c[2].contains("out of memory"))
    {
        o.framework = Some(Framework::Nccl);
        o.style = Some(OomStyle::Nccl);
        return Some((o, false));
    }
    // MXNet's pooled storage manager: `cudaMalloc failed: out of memory`.
    // Triton's kernel needs more shared memory per block than the GPU has (consumer GPUs have
    // about 100 KiB, the data-center ones the kernels were tuned on 160–228 KiB).
    if has!(text, "out of resource: shared memory") {
        o.style = Some(OomStyle::SharedMemory);
        return Some((o, false));
    }
    // vLLM sizes its KV cache from the memory left after the weights.
    if has!(text, "can be stored in KV cache")
        || has!(text, "No available memory for the cache blocks")
    {
        o.framework = Some(Framework::Pytorch);
        o.style = Some(OomStyle::KvCache);
        return Some((o, false));
    }
    // FAISS's temporary-memory stack could not get its block: `Faiss assertion err ==
    // cudaSuccess failed in char* faiss::gpu::StackDeviceMemory::Stack::getAlloc`.
    if has!(text, "StackDeviceMemory") && has!(text, "getAlloc") {
        o.style = Some(OomStyle::Generic);
        return Some((o, false));
    }
    // RAPIDS' memory manager (cuDF, cuML, before its `std::bad_alloc: out_of_memory` form):
    // `RMM call ... failed with result RMM_ERROR_OUT_OF_MEMORY (4) Attempted to allocate:
    // 40000000`.
    if has!(text, "BFCArena")
        && let Some(c) = RE_ORT_ARENA.captures(text)
    {
        o.style = Some(OomStyle::Generic);
        o.requested_bytes = c[1].parse().ok();
        return Some((o, false));
    }
    if has!(text, "RMM_ERROR_OUT_OF_MEMORY") {
        o.style = Some(OomStyle::Generic);
        o.requested_bytes = RE_RMM_ATTEMPTED
            .captures(text)
            .and_then(|c| c[1].parse().ok());
        return Some((o, false));
    }
    if has!(text, "cudaMalloc failed: out of mem") {
        o.framework = fw_line;
        o.style = Some(OomStyle::CudaCall);
        return Some((o, false));
    }
    if has!(text, "Failed to CUDA calloc") || has!(text, "Failed to CUDA malloc") {
        o.framework = Some(Framework::Nccl);
        o.style = Some(OomStyle::Nccl);
        return Some((o, false));
    }
    // The context could not even be created: the GPU was full before the job began.
    let at_init = has!(text, "implicit initialization on GPU")
        || has!(text, "cuCtxCreate")
        || has!(text, "cuDevicePrimaryCtxRetain")
        // XLA (JAX, TensorFlow): `Failed to create stream executor for device CUDA:0: :
        // CUDA_ERROR_OUT_OF_MEMORY: out of memory`.
        || has!(text, "Failed to create stream executor");
    if at_init && (has!(text, "out of memory") || has!(text, "OUT_OF_MEMORY")) {
        o.framework = fw_line;
        o.style = Some(OomStyle::ContextInit);
        o.gpu = RE_GPU_COLON
            .captures(text)
            .and_then(|c| c[1].parse().ok())
            .or_else(|| RE_CUDA_COLON.captures(text).and_then(|c| c[1].parse().ok()));
        return Some((o, false));
    }
    // TensorFlow's and XLA's stream executor asking the driver directly: `failed to allocate
    // 2.2K (2304 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY`.
    if let Some(c) = (has!(text, "from device"))
        .then(|| RE_STREAM_EXECUTOR_ALLOC.captures(text))
        .flatten()
        .or_else(|| {
            has!(text, "Failed to allocate device memory")
                .then(|| RE_XLA_DEVICE_ALLOC.captures(text))
                .flatten()
        })
    {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::CudaCall);
        o.requested_bytes = c[1].parse().ok();
        return Some((o, false));
    }
    if has!(text, "CUDA error: out of memory")
        || has!(text, "CUDA operation failed: out of memory")
        // The last line of a check macro's report under its `CUDA Error:` header (`Error
        // code: 2`, then `Error text: out of memory`).
        || text.starts_with("Error text: out of memory")
        || has!(text, "cudaErrorMemoryAllocation")
        || has!(text, "CUDA_ERROR_OUT_OF_MEMORY")
        || has!(text, "hipErrorOutOfMemory")
    {
        o.framework = fw_line;
        o.style = Some(OomStyle::CudaCall);
        return Some((o, false));
    }
    // XLA could not shrink the program below the memory it may use, even by recomputing:
    // `Can't reduce memory use below -30.29GiB (-32529110990 bytes) by rematerialization;
    // only reduced to 49.62GiB`. (A negative target: the limit was used up before the
    // program's own buffers.) The RESOURCE_EXHAUSTED that follows may not be printed.
    if has!(text, "Can't reduce memory use below") && has!(text, "rematerialization") {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Xla);
        return Some((o, false));
    }
    // Apple's MLX (on the GPU's Metal heap): `[metal::malloc] Unable to allocate 12 bytes.`,
    // older releases `[malloc_or_wait] Unable to allocate ...`.
    if (has!(text, "[metal::malloc] Unable to allocate")
        || has!(text, "[malloc_or_wait] Unable to allocate"))
    {
        o.framework = Some(Framework::Other);
        o.device_kind = Some("MPS".to_owned());
        o.style = Some(OomStyle::Generic);
        return Some((o, false));
    }
    let lower_has_oom = has!(text, "out of memory") || has!(text, "Out of memory");
    // PyTorch's bare form when an allocation fails outside its usual message (ComfyUI's
    // model loader, `torch.empty` on a full GPU): `torch.OutOfMemoryError: Allocation on
    // device`.
    if has!(text, "OutOfMemoryError: Allocation on device") {
        o.framework = Some(Framework::Pytorch);
        o.style = Some(OomStyle::Generic);
        return Some((o, false));
    }
    if lower_has_oom && (has!(text, "RESOURCE_EXHAUSTED") || has!(text, "ResourceExhausted")) {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Xla);
        return Some((o, false));
    }
    if (has!(text, "Resource exhausted: OOM") || has!(text, "ResourceExhaustedError"))
        && !has!(text, "not a failure")
    {
        o.framework = Some(Framework::Tensorflow);
        o.style = Some(OomStyle::TfOpKernel);
        return Some((o, false));
    }
    // TensorRT's builder: `[virtualMemoryBuffer.cpp::resizePhysical::144] Error Code 2:
    // OutOfMemory (no further information)`. While it picks tactics it prints the same for
    // each tactic that did not fit, skips it and goes on (`Skipping tactic 2 due to
    // insufficient memory`): those say so, and are not a failure by themselves; the rules
    // weigh the error against them.
    let tactic_skipped = has!(text, "Skipping tactic") && has!(text, "insufficient memory");
    if tactic_skipped || (has!(text, "Error Code ") && has!(text, ": OutOfMemory")) {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::TensorRtBuilder);
        o.not_a_failure = tactic_skipped;
        return Some((o, false));
    }
    // An allocation call that failed without a reason: `CUDAException: Unable to
    // cudaMallocPitch` (Sophus/DeepFactors' wrappers name only the call). Running out of
    // memory is what makes an allocation fail.
    if has!(text, "Unable to cudaMalloc") {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Generic);
        return Some((o, false));
    }
    // An application's own check before it allocates: VAPOR's `Not enough GPU RAM free (3686MB
    // free, need at least 4122MB)`.
    if has!(text, "Not enough GPU RAM") || has!(text, "Not enough GPU memory") {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Generic);
        if let Some(c) = RE_GPU_RAM_NEEDED.captures(text) {
            o.free_bytes = size(&c, 1);
            o.requested_bytes = size(&c, 3);
        }
        return Some((o, false));
    }
    // transformers/accelerate loading a quantized model that does not fit in the GPU: `Some
    // modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit
    // the quantized model.`
    if has!(text, "Some modules are dispatched on the CPU or the disk") {
        o.framework = Some(Framework::Pytorch);
        o.style = Some(OomStyle::Generic);
        return Some((o, false));
    }
    // llama.cpp (and the apps built on it: LM Studio, ollama, Jan) could not allocate the
    // buffers for a context: `llama_new_context_with_model: failed to allocate compute
    // buffers`, `Failed to initialize the context: failed to allocate compute pp buffers`.
    if has!(text, "failed to allocate compute") && has!(text, "buffers") {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Generic);
        return Some((o, false));
    }
    // NVIDIA DALI's decoders: `Can't allocate 129499136 bytes on device 0.`
    if has!(text, "Can't allocate ")
        && let Some(c) = RE_DALI_ALLOC.captures(text)
    {
        o.framework = fw_line.or(ctx.last_framework);
        o.style = Some(OomStyle::Generic);
        o.requested_bytes = c[1].parse().ok();
        o.gpu = c[2].parse().ok();
        return Some((o, false));
    }
    if lower_has_oom
        && (has!(text, "CUDA")
            || has!(text, "GPU")
            || has!(text, "cuda")
            || has!(text, "Cuda")
            || has!(text, "device")
            // PyCUDA: `MemoryError: cuMemAlloc failed: out of memory`.
            || has!(text, "cuMemAlloc")
            // cuQuantum's libraries: `[custatevec] %out of memory in addQubitsToState`.
            || has!(text, "[custatevec]")
            || has!(text, "[cutensornet]"))
        && !has!(text, "CPU")
    {
        o.framework = fw_line;
        o.style = Some(OomStyle::Generic);
        o.not_a_failure = has!(text, "not a failure");
        return Some((o, false));
    }
    None
}

/// Fills `PyTorch's` OOM fields from either message shape.
fn torch_fields(text: &str, o: &mut OomInfo) {
    if let Some(c) = RE_NEW_TOTAL.captures(text) {
        o.style = Some(OomStyle::TorchSentence);
        o.gpu = c[1].parse().ok();
        o.total_bytes = size(&c, 2);
        o.free_bytes = size(&c, 4);
    } else if let Some(c) = RE_NEW_TOTAL_ONLY.captures(text) {
        o.style = Some(OomStyle::TorchSentence);
        o.gpu = c[1].parse().ok();
        o.total_bytes = size(&c, 2);
        o.truncated = true;
    } else if let Some(c) = RE_OLD_GPU.captures(text) {
        o.gpu = c[1].parse().ok();
        o.total_bytes = RE_OLD_TOTAL.captures(text).and_then(|c| size(&c, 1));
        o.allocated_bytes = RE_OLD_ALLOC.captures(text).and_then(|c| size(&c, 1));
        o.free_bytes = RE_OLD_FREE.captures(text).and_then(|c| size(&c, 1));
        o.allowed_bytes = RE_ALLOWED.captures(text).and_then(|c| size(&c, 1));
        if let Some(reserved) = RE_OLD_RESERVED.captures(text).and_then(|c| size(&c, 1)) {
            o.style = Some(OomStyle::TorchReservedTotal);
            o.reserved_total_bytes = Some(reserved);
            o.reserved_unallocated_bytes = o.allocated_bytes.map(|a| reserved.saturating_sub(a));
        } else if let Some(cached) = RE_OLD_CACHED.captures(text).and_then(|c| size(&c, 1)) {
            // 1.0's "cached" is already the reserved-but-unused part.
            o.style = Some(OomStyle::TorchCached);
            o.reserved_unallocated_bytes = Some(cached);
            o.reserved_total_bytes = o.allocated_bytes.map(|a| a + cached);
        } else {
            o.style = Some(OomStyle::TorchReservedTotal);
            o.truncated = true;
        }
        return;
    } else {
        o.style = Some(OomStyle::TorchSentence);
        o.truncated = true;
        return;
    }
    for c in RE_PROCESS.captures_iter(text) {
        if let (Some(pid), Some(bytes)) = (c[1].parse().ok(), size(&c, 2)) {
            o.other_processes.push((pid, bytes));
        }
    }
    // `this process has 0 bytes memory in use` beside gigabytes allocated: NVML could not
    // attribute memory to processes (WSL, some containers), so the figure says nothing.
    o.this_process_bytes = RE_THIS_PROCESS
        .captures(text)
        .and_then(|c| size(&c, 1))
        .filter(|b| *b > 0);
    o.allowed_bytes = RE_ALLOWED.captures(text).and_then(|c| size(&c, 1));
    o.allocated_bytes = RE_BY_PYTORCH.captures(text).and_then(|c| size(&c, 1));
    o.private_pool_bytes = RE_PRIVATE.captures(text).and_then(|c| size(&c, 1));
    o.reserved_unallocated_bytes = RE_UNALLOCATED.captures(text).and_then(|c| size(&c, 1));
    if o.reserved_unallocated_bytes.is_none() {
        o.truncated = true;
    }
    if let (Some(a), Some(u)) = (o.allocated_bytes, o.reserved_unallocated_bytes) {
        o.reserved_total_bytes = Some(a + u);
    }
}

/// Bytes of a `TensorFlow` tensor from its shape and dtype (`[2048,768]`, `float`).
fn tensor_bytes(shape: Option<&str>, dtype: Option<&str>) -> Option<u64> {
    let shape = shape?;
    let mut elements: u64 = 1;
    let mut any = false;
    for dim in shape.split(',') {
        let d: u64 = dim.trim().parse().ok()?;
        elements = elements.checked_mul(d)?;
        any = true;
    }
    if !any {
        return None;
    }
    let width = match dtype? {
        "float" | "int32" | "uint32" | "float32" => 4,
        "half" | "bfloat16" | "int16" | "uint16" | "float16" => 2,
        "double" | "int64" | "uint64" | "complex64" | "float64" => 8,
        "int8" | "uint8" | "bool" | "qint8" | "quint8" => 1,
        "complex128" => 16,
        _ => return None,
    };
    elements.checked_mul(width)
}

fn cuda_error(text: &str) -> Option<CudaErrorInfo> {
    let has_context = [
        "CUDA error",
        "CUDA Error",
        "cuda runtime error",
        "cudaError",
        "CUDA_ERROR",
        "Cuda failure",
        "CUDA failure",
        "CUDARuntimeError",
        "CUDADriverError",
        "cudaCheckError",
        "CUresult",
        "THCudaCheck",
        "AcceleratorError",
        "CUDA kernel",
        "CUDA call failed",
        "CUDA driver error",
        "cudaSuccess",
        "Error [CUDA]",
        // numba: `CudaAPIError: [700] Call to cuMemcpyDtoH results in UNKNOWN_CUDA_ERROR`.
        "CudaAPIError",
        // Paddle: `ExternalError:  Cuda error(719), unspecified launch failure.`
        "Cuda error(",
        // vLLM's and SGLang's kernels: `Failed: Cuda error /w/csrc/custom_all_reduce.cuh:307
        // 'peer access is not supported between these two devices'`.
        "Failed: Cuda error ",
        // LAMMPS's GPU package: `Cuda driver error 804 in call at file '...'`.
        "Cuda driver error ",
        // deepmd-kit's check: `cuda assert: invalid argument .../gpu_cuda.h 48`.
        "cuda assert: ",
        // The last line of a check macro's report under a `CUDA Error:` header.
        "Error text: ",
        // The classic `HANDLE_ERROR` macro: `<message> in <file>.cu at line <n>`.
        ".cu at line ",
        ".cuh at line ",
        // The miners' check macro (`Cuda error in func 'x' at line 701 : unspecified launch
        // failure.`) and nvdiffrast's (`Cuda error: 700[cudaMemcpyAsync(...)]`).
        "Cuda error in func",
        "Cuda error: ",
        // The NVIDIA HPC compilers' runtime: `call to cuStreamSynchronize returned error 700:
        // Illegal address during kernel execution`.
        "Accelerator Fatal Error",
        "call to cu",
    ]
    .iter()
    .any(|w| text.contains(w));

    let by_name = RE_CUDA_NAME
        .captures_iter(text)
        .find_map(|c| lookup_cuda_error(&c[1]));
    // The first entry of the table whose message the line holds (one pass over the line for
    // all of them, rather than a search per entry).
    let by_message = match CUDA_MESSAGES.as_ref() {
        Some(messages) => messages
            .find_overlapping_iter(text)
            .map(|m| m.pattern().as_usize())
            .filter(|&i| CUDA_ERRORS[i].distinctive || has_context)
            .min()
            .map(|i| &CUDA_ERRORS[i]),
        None => CUDA_ERRORS
            .iter()
            .filter(|e| e.distinctive || has_context)
            .find(|e| text.contains(e.message)),
    };
    // cuda-gdb's report of a failed API call, in hex: `warning: Cuda API error detected:
    // cudaDeviceEnablePeerAccess returned (0x2c0)`.
    let by_debugger = has!(text, "Cuda API error detected")
        .then(|| RE_CUDA_GDB_RETURNED.captures(text))
        .flatten()
        .and_then(|c| u32::from_str_radix(&c[1], 16).ok())
        .and_then(|code| lookup_cuda_error(&code.to_string()));
    // The generic forms (`code=2`, `error=2`, `error code 2`) are CUDA's only beside other
    // CUDA words: `ERROR: failed with error code 1` is some program's exit status.
    let number = RE_CUDA_NUMBER.captures(text).and_then(|c| {
        (1..=11)
            .filter(|g| has_context || !GENERIC_NUMBER_GROUPS.contains(g))
            .find_map(|g| c.get(g))
            .and_then(|m| m.as_str().parse::<u32>().ok())
    });
    // MATLAB's words for the display watchdog ending a kernel: `The kernel execution failed
    // because the CUDA driver timeout was encountered.` (CUDA 702).
    let by_matlab = has!(text, "CUDA driver timeout was encountered")
        .then(|| lookup_cuda_error("702"))
        .flatten();
    // Blender Cycles names the error its own way: `Illegal address in CUDA queue
    // copy_from_device (integrator_shade_surface ...)`.
    let by_cycles = (has!(text, "Illegal address in CUDA queue")
        || has!(text, "Illegal address in cuda queue"))
    .then(|| lookup_cuda_error("700"))
    .flatten();
    let entry = by_name
        .or(by_message)
        .or(by_cycles)
        .or_else(|| cuew_error(text))
        .or(by_matlab)
        .or(by_debugger)
        .or_else(|| {
            let n = number?;
            // A bare old-style number: map CUDA ≤9 numbers first, they are what old logs have.
            let code = if has!(text, "cuda runtime error") || has!(text, "THCudaCheck") {
                legacy_code(n).unwrap_or(n)
            } else {
                n
            };
            lookup_cuda_error(&code.to_string())
        });
    match entry {
        Some(e) => Some(CudaErrorInfo {
            code: Some(e.code),
            name: Some(e.runtime_name.to_owned()),
            message: Some(e.message.to_owned()),
            sticky: e.sticky,
        }),
        None if has_context && (has!(text, "CUDA error:") || has!(text, "cuda runtime error")) => {
            let message = text
                .split_once("CUDA error:")
                // A message, not the rest of a 64 KiB line.
                .map(|(_, m)| m.trim().chars().take(160).collect());
            Some(CudaErrorInfo {
                code: number,
                name: None,
                message,
                sticky: false,
            })
        }
        None => None,
    }
}

/// Blender Cycles reads driver errors through CUEW, whose words are its own:
/// `Failed to configure CUDA context (Invalid context)`, `CUDA error: Launch failed in
/// cuCtxSynchronize()`, `Out of memory in cuMemAlloc_v2(&device_pointer, size)`. The words
/// count only in those three places, where nothing else can mean them.
fn cuew_error(text: &str) -> Option<&'static CudaErrorEntry> {
    const CUEW_WORDS: &[(&str, &str)] = &[
        ("Invalid value", "1"),
        ("Out of memory", "2"),
        ("Driver not initialized", "3"),
        ("No device", "100"),
        ("Invalid device", "101"),
        ("Invalid context", "201"),
        ("No binary for GPU", "209"),
        ("Invalid PTX", "218"),
        ("Unsupported PTX version", "222"),
        ("Invalid handle", "400"),
        ("Illegal address", "700"),
        ("Launch out of resources", "701"),
        ("Launch exceeded timeout", "702"),
        ("Illegal instruction", "715"),
        ("Misaligned address", "716"),
        ("Launch failed", "719"),
        ("Unknown error", "999"),
    ];
    // The three places all have one of these around the words; most lines have neither.
    if !(has!(text, "CUDA context (") || has!(text, " in cu")) {
        return None;
    }
    CUEW_WORDS.iter().find_map(|&(words, code)| {
        let named = text.match_indices(words).any(|(at, _)| {
            let before = &text[..at];
            let after = &text[at + words.len()..];
            before.ends_with("CUDA context (") && after.starts_with(')')
                || (before.ends_with("CUDA error: ") || before.is_empty())
                    && after.starts_with(" in cu")
        });
        named.then(|| lookup_cuda_error(code)).flatten()
    })
}

/// `does not have CUDA compute capability 5.0 or greater` (neon), `requires compute capability
/// 7.0 or higher`.
static RE_NEEDS_CC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:does not have|requires|require|need|needs) (?:a )?(?:CUDA )?compute capability (\d+\.\d+) or (?:greater|higher|above|newer)",
    )
});

/// `(2 vs. 0)`: the status a `Check failed: ... == X_STATUS_SUCCESS` got instead.
static RE_VS: LazyLock<Regex> = LazyLock::new(|| re(r"\((\d+) vs\. 0\)"));

/// The call a `Check failed: call(...) == STATUS_SUCCESS` names.
static RE_CHECKED_CALL: LazyLock<Regex> =
    LazyLock::new(|| re(r"Check failed: (?:\(?)([A-Za-z_][A-Za-z0-9_]*)\("));

/// `Request device [02:00.0]` (Intel's DMAR), `device=41:00.0` (AMD-Vi).
static RE_DMA_DEVICE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:Request device \[|device=)((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F])",
    )
});

/// Whether `compute_71`/`sm_71` names an architecture some NVIDIA GPU has. Numbers from 100 up
/// count as real: the newest architectures are added with each CUDA release, and a wrong "no"
/// here would hide a toolkit too old for a new GPU.
fn real_architecture(arch: &str) -> bool {
    const BELOW_100: &[u32] = &[
        10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88,
        89, 90,
    ];
    let digits: String = arch
        .rsplit('_')
        .next()
        .unwrap_or("")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse::<u32>()
        .map_or(true, |n| n >= 100 || BELOW_100.contains(&n))
}

static RE_PTXAS_ARCH: LazyLock<Regex> =
    LazyLock::new(|| re(r"Value '(sm_[0-9]+[a-z]?)' is not defined for option 'gpu-name'"));

/// An environment problem named by one of [`detail`]'s constants, which picks the rule's
/// variant.
fn named(env: EnvKind, which: &str) -> (EnvKind, Option<String>) {
    (env, Some(which.to_owned()))
}

fn env(text: &str) -> Option<(EnvKind, Option<String>)> {
    // The linker, building against a CUDA library, finds no unversioned `libX.so`: `/usr/bin/ld:
    // cannot find -lcuda` (Triton compiling its launcher, a source build).
    if has!(text, "cannot find -l")
        && let Some(c) = RE_LINKER_CUDA_LIB.captures(text)
    {
        return Some((
            EnvKind::LibMissing,
            Some(format!("{}lib{}.so", detail::FOR_THE_LINKER, &c[1])),
        ));
    }
    // A wrapper's own search for a CUDA library came up empty: scikit-cuda's `OSError: cublas
    // library not found`.
    if has!(text, " library not found")
        && let Some(c) = RE_NAMED_CUDA_LIB_NOT_FOUND.captures(text)
    {
        return Some((EnvKind::LibMissing, Some(format!("lib{}.so", &c[1]))));
    }
    // cuFFT's catch-all. With a CUDA 11.7 cuFFT on an RTX 40-series GPU it is the known bug
    // that a CUDA 11.8+ build fixes; the finding says so with less confidence.
    if has!(text, "CUFFT_INTERNAL_ERROR") {
        return Some(named(EnvKind::LibMismatch, detail::CUFFT_INTERNAL));
    }
    // `ldd` resolving the driver's library to the toolkit's link-time stub
    // (`libcuda.so.1 => /usr/local/cuda/lib64/stubs/libcuda.so.1`): a stub has no driver
    // behind it, so every CUDA call fails.
    if has!(text, " => ") && has!(text, "/stubs/libcuda.so") {
        return Some(named(EnvKind::LibMissing, detail::STUB_DRIVER_LIBRARY));
    }
    // PyTorch Lightning asked for GPUs the process cannot see: `You requested gpu: [0, 1, 2,
    // 3]\n But your machine only has: [0]`.
    if has!(text, "You requested gpu") || has!(text, "You requested GPUs") {
        return Some((EnvKind::VisibleDevices, None));
    }
    // nvidia-smi cannot reset a GPU or change its MIG mode while a process holds it
    // (nvidia-persistenced, DCGM, Fabric Manager, a monitoring agent, a job): `MIG mode is in
    // pending disable state for GPU ...:In use by another client`, `GPU 00000000:C1:00.0 is
    // currently in use by another process.`
    if (has!(text, "pending disable state") || has!(text, "pending enable state"))
        && has!(text, "In use by another client")
        || text.starts_with("GPU ") && has!(text, "is currently in use by another process")
    {
        return Some(named(EnvKind::VisibleDevices, detail::GPU_HELD_BY_CLIENT));
    }
    // NCCL refusing two ranks on one GPU: the job's device selection, not NCCL, is at fault.
    if has!(text, "Duplicate GPU detected") {
        return Some(named(EnvKind::VisibleDevices, detail::DUPLICATE_GPU));
    }
    // nvidia-container-cli asked for a GPU this namespace lacks, or one (a MIG instance, a
    // UUID) that does not exist: `device error: MIG-GPU-.../1/0: unknown device`.
    if has!(text, "nvidia-container-cli")
        && (has!(text, "/proc/driver/nvidia/gpus/") || has!(text, ": unknown device"))
    {
        return Some((EnvKind::VisibleDevices, None));
    }
    // torchvision's and torchaudio's check against the PyTorch they run with: `Detected that
    // PyTorch and TorchAudio were compiled with different CUDA versions`.
    if has!(text, "were compiled with different CUDA") {
        return Some((
            EnvKind::LibMismatch,
            Some(format!(
                "{} for another CUDA than PyTorch's",
                detail::COMPANION_BUILD
            )),
        ));
    }
    // NVML's own library did not load (the Kubernetes device plugin, DCGM): libnvidia-ml.
    // A driver library that is there but empty (an image committed from a WSL container, a
    // broken copy): `ldconfig: File /usr/lib/x86_64-linux-gnu/libcuda.so.1 is empty, not
    // checked.`
    if has!(text, "is empty, not checked")
        && let Some(c) = RE_LIB.captures(text)
    {
        return Some((EnvKind::LibMissing, Some(c[1].to_owned())));
    }
    // ollama found the driver's library but no GPU through it: the driver is not working.
    if has!(text, "no nvidia devices detected by library") {
        return Some((
            EnvKind::NoDriver,
            Some("the driver's library finds no GPU".to_owned()),
        ));
    }
    // JAX before 0.4.14 when no GPU backend started, most often a CPU-only jaxlib: `No
    // GPU/TPU found, falling back to CPU.` (an earlier error, if any, says why otherwise).
    if has!(text, "No GPU/TPU found, falling back to CPU") {
        return Some(named(EnvKind::TorchCpuBuild, detail::JAX_CPU_FALLBACK));
    }
    if has!(text, "could not load NVML library") {
        return Some((EnvKind::LibMissing, Some("libnvidia-ml.so.1".to_owned())));
    }
    // A PTX JIT failure on a GPU newer than the build: the build's PTX cannot be compiled for
    // it (architecture-specific `sm_90a` code, say).
    if has!(text, "CUDA_ERROR_INVALID_PTX")
        || has!(text, "cudaErrorInvalidPtx")
        || has!(text, "a PTX JIT compilation failed")
    {
        return Some((
            EnvKind::ArchUnsupported,
            Some("its PTX could not be compiled for this GPU".to_owned()),
        ));
    }
    // TensorFlow without kernels for the GPU's compute capability, JIT-compiling its PTX (slow
    // start-up, and no kernels at all where no PTX fits): `TensorFlow was not built with CUDA
    // kernel binaries compatible with compute capability 9.0.`
    if has!(text, "not built with CUDA kernel binaries")
        && let Some(c) = RE_TF_NO_KERNEL_BINARIES.captures(text)
    {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("{} sm_{}{}", detail::PTX_JIT_ONLY, &c[1], &c[2])),
        ));
    }
    // An extension's CUDA ops compiled out (detectron2, maskrcnn-benchmark): `RuntimeError: Not
    // compiled with GPU support (ROIAlign_forward at .../detectron2/layers/csrc/...)`.
    if has!(text, "Not compiled with GPU support") {
        let package = ["detectron2", "maskrcnn_benchmark", "mmcv", "torchvision"]
            .into_iter()
            .find(|p| text.contains(p))
            .unwrap_or("extension");
        return Some((
            EnvKind::TorchCpuBuild,
            Some(format!("{}{package}", detail::PACKAGE_WITHOUT_CUDA)),
        ));
    }
    // Paddle built for other GPUs: `The GPU architecture in your current machine is Pascal,
    // which is not compatible with Paddle installation`.
    if has!(text, "which is not compatible with Paddle installation") {
        return Some((EnvKind::ArchUnsupported, None));
    }
    // Paddle's loader: `The third-party dynamic library (cudnn64_7.dll) that Paddle depends on
    // is not configured correctly. (error code is 126)`.
    if has!(text, "third-party dynamic library")
        && let Some(c) = RE_PADDLE_THIRD_PARTY.captures(text)
    {
        return Some((EnvKind::LibMissing, Some(c[1].to_owned())));
    }
    // ONNX Runtime's CUDA provider found CUDA_PATH but not its libraries: `CUDA_PATH is set
    // but CUDA wasn't able to be loaded. Please install the correct version of CUDA and cuDNN`.
    if has!(text, "CUDA wasn't able to be loaded") {
        return Some((
            EnvKind::LibMissing,
            Some("CUDA and cuDNN for ONNX Runtime".to_owned()),
        ));
    }
    // Building a CUDA extension without a toolkit: `OSError: CUDA_HOME environment variable is
    // not set. Please set it to your CUDA install root.`
    if has!(text, "CUDA_HOME environment variable is not set") {
        return Some(named(EnvKind::LibMissing, detail::CUDA_HOME_UNSET));
    }
    // apex's own check: `Cuda extensions are being compiled with a version of Cuda that does
    // not match the version used to compile Pytorch binaries.`
    if has!(
        text,
        "compiled with a version of Cuda that does not match the version used to compile Pytorch"
    ) {
        return Some((
            EnvKind::LibMismatch,
            Some(format!(
                "{} (not the one PyTorch was built with)",
                detail::CUDA_TOOLKIT
            )),
        ));
    }
    // FAISS's device check: `Error: 'device_ < getNumDevices()' failed: Invalid GPU device 1`.
    if has!(text, "Invalid GPU device") {
        return Some((EnvKind::VisibleDevices, None));
    }
    // bitsandbytes (before 0.43) says this when its CUDA setup could not load libcudart,
    // whatever the build: `The installed version of bitsandbytes was compiled without GPU
    // support.`
    if has!(text, "bitsandbytes was compiled without GPU support") {
        return Some((
            EnvKind::LibMissing,
            Some("libcudart.so (for bitsandbytes' CUDA setup)".to_owned()),
        ));
    }
    // OpenCV's dnn module without its CUDA backend: `DNN module was not built with CUDA
    // backend; switching to CPU`.
    if has!(text, "DNN module was not built with CUDA backend") {
        return Some((
            EnvKind::TorchCpuBuild,
            Some(format!("{}OpenCV", detail::PACKAGE_WITHOUT_CUDA)),
        ));
    }
    // TensorRT older than the GPU: `Target GPU SM 120 is not supported by this TensorRT
    // release.`
    if has!(text, "TensorRT release")
        && let Some(c) = RE_TENSORRT_TARGET_SM.captures(text)
    {
        return Some((EnvKind::ArchUnsupported, Some(format!("sm_{}", &c[1]))));
    }
    // Windows' loader through a framework's own check: `Could not locate
    // cudnn_ops_infer64_8.dll. Please make sure it is in your library path!`, cuDNN 8's own
    // `Could not load library cudnn_ops_infer64_8.dll. Error code 126`.
    if (has!(text, "Could not locate ") || has!(text, "Could not load library "))
        && let Some(c) = RE_COULD_NOT_LOCATE_DLL.captures(text)
    {
        return Some((EnvKind::LibMissing, Some(c[1].to_owned())));
    }
    // nvidia-container-cli could not start CUDA on the host (a node without a working GPU
    // or driver): `nvidia-container-cli: initialization error: cuda error: unknown error`.
    if has!(
        text,
        "nvidia-container-cli: initialization error: cuda error"
    ) {
        return Some((EnvKind::NoDriver, None));
    }
    // FAISS's CPU-only package has no GPU classes: `module 'faiss' has no attribute
    // 'StandardGpuResources'`.
    if has!(text, "has no attribute") && RE_FAISS_GPU_ATTRIBUTE.is_match(text) {
        return Some((
            EnvKind::TorchCpuBuild,
            Some(format!("{}faiss", detail::PACKAGE_WITHOUT_CUDA)),
        ));
    }
    // TensorFlow fixes its visible devices when it first initializes the GPUs.
    if has!(
        text,
        "Visible devices cannot be modified after being initialized"
    ) {
        return Some(named(EnvKind::VisibleDevices, detail::VISIBLE_AFTER_INIT));
    }
    // Ultralytics' device check: `Invalid CUDA '--device cuda' requested, use '--device cpu' or
    // pass valid CUDA device(s)` (no GPU visible, or an index or string it does not take).
    if has!(text, "Invalid CUDA '") && has!(text, "requested") {
        return Some((EnvKind::VisibleDevices, None));
    }
    // Fabric Manager (NVSwitch systems) of another driver release than the loaded driver.
    if has!(text, "fabric manager NVIDIA GPU driver interface version")
        && has!(text, "match with driver version")
    {
        return Some((EnvKind::NvmlMismatch, None));
    }
    // nvidia-docker 1: `Error: Could not load UVM kernel module`.
    if has!(text, "Could not load UVM kernel module") {
        return Some(named(EnvKind::NoDriver, detail::NVIDIA_UVM));
    }
    // DeepSpeed's launcher: `ValueError: No slot '2' specified on host 'localhost'`.
    if has!(text, "No slot '") && has!(text, "specified on host") {
        return Some(named(EnvKind::VisibleDevices, detail::LAUNCHER_SLOT));
    }
    // FFmpeg's NVENC: `Driver does not support the required nvenc API version. Required: 12.0
    // Found: 11.1`, `The minimum required Nvidia driver for nvenc is 520.56.06 or newer`.
    if has!(
        text,
        "Driver does not support the required nvenc API version"
    ) || has!(text, "minimum required Nvidia driver for nvenc")
        // An application's own wording of the same check: `Required: NVENC API 13.0`, then
        // `Minimum required Nvidia driver is 570.0 or newer`.
        || text.starts_with("Minimum required Nvidia driver is")
        // NVIDIA's Video Processing Framework: `LoadNvEncAPI: Current Driver Version does not
        // support this NvEncodeAPI version, please upgrade driver`.
        || has!(text, "does not support this NvEncodeAPI version")
    {
        return Some(named(EnvKind::DriverTooOld, detail::NVENC));
    }
    // LightGBM built without its GPU learner: `[LightGBM] [Fatal] GPU Tree Learner was not
    // enabled in this build.`
    if has!(text, "GPU Tree Learner was not enabled") {
        return Some((
            EnvKind::TorchCpuBuild,
            Some(format!("{}LightGBM", detail::PACKAGE_WITHOUT_CUDA)),
        ));
    }
    // A miner or monitor that cannot load NVML on Windows: `Can't load NVML library,
    // dlopen(126): failed to load nvml.dll`.
    if has!(text, "failed to load nvml.dll") || has!(text, "Can't load NVML library") {
        return Some((EnvKind::LibMissing, Some("nvml.dll".to_owned())));
    }
    // xFormers built for another PyTorch has none of its CUDA operators: `xFormers wasn't
    // build with CUDA support` under each operator it lists.
    if has!(text, "xFormers wasn't build with CUDA support") {
        return Some((
            EnvKind::LibMismatch,
            Some(detail::EXTENSION_BUILD.to_owned()),
        ));
    }
    // Windows' loader message wrapped before the DLL's path: `OSError: [WinError 126] ...
    // Error loading` / `...\torch\lib\cudnn_cnn_infer64_8.dll" or` / `one of its dependencies.`
    if has!(text, ".dll\" or")
        && let Some(dll) = cuda_dll_named(text)
    {
        return Some((EnvKind::LibMissing, Some(dll.to_owned())));
    }
    // OptiX lives in the driver: an SDK newer than the driver's OptiX gets
    // `OPTIX_ERROR_UNSUPPORTED_ABI_VERSION (7801)`.
    if has!(text, "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION") {
        return Some(named(EnvKind::DriverTooOld, detail::OPTIX_ABI));
    }
    // A package whose compiled (CUDA) extension is not installed: `No module named
    // 'exllamav2_ext'`, `'flash_attn_2_cuda'`, `'mmcv._ext'`, `'xformers._C'`.
    if has!(text, "No module named '")
        && let Some(module) = compiled_extension_module(text)
    {
        return Some((
            EnvKind::LibMissing,
            Some(format!("{}{module}", detail::COMPILED_EXTENSION)),
        ));
    }
    // Omniverse's driver check (Isaac Sim, Isaac Lab): `The unsupported driver range: [0.0,
    // 535.129)`, then `rtx driver verification failed`.
    if let Some(rest) = text
        .split_once("The unsupported driver range: [")
        .map(|(_, r)| r)
        && let Some(needed) = rest
            .split_once(", ")
            .and_then(|(_, r)| r.split_once(')'))
            .map(|(v, _)| v.trim())
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    {
        return Some((
            EnvKind::DriverTooOld,
            Some(format!("the software needs driver {needed} or later")),
        ));
    }
    // DGL's CPU-only package: `Check failed: allow_missing: Device API cuda is not enabled.
    // Please install the cuda version of dgl.`
    if has!(text, "Device API cuda is not enabled") {
        return Some((
            EnvKind::TorchCpuBuild,
            Some(format!("{}DGL", detail::PACKAGE_WITHOUT_CUDA)),
        ));
    }
    // The open kernel module on a GPU without GSP (Maxwell, Pascal, Volta): `NVRM: installed in
    // this system is not supported by open nvidia.ko because it does not include the required
    // GPU System Processor (GSP)`, often hard-wrapped after `not supported by open`.
    if has!(text, "is not supported by open") || has!(text, "not supported by open nvidia.ko") {
        return Some(named(EnvKind::NoDriver, detail::OPEN_MODULE_UNSUPPORTED));
    }
    // Other packages' builds without CUDA: `This CTranslate2 package was not compiled with CUDA
    // support`, `XGBoost version not compiled with GPU support`.
    if has!(text, "not compiled with")
        && let Some(c) = RE_PACKAGE_WITHOUT_CUDA.captures(text)
    {
        return Some((
            EnvKind::TorchCpuBuild,
            Some(format!("{}{}", detail::PACKAGE_WITHOUT_CUDA, &c[1])),
        ));
    }
    // podman before 4.1 knows no CDI names and takes `nvidia.com/gpu=0` for a file: `Error:
    // stat nvidia.com/gpu=0: no such file or directory`.
    if has!(text, "stat nvidia.com/gpu=") {
        return Some(named(EnvKind::VisibleDevices, detail::CDI_UNRESOLVED));
    }
    // Paddle's own check: `Cannot use GPU because you have installed CPU version PaddlePaddle.`,
    // and PaddleClas': `You are using paddlepaddle cpu version! Please try to install
    // paddlepaddle-gpu`.
    // torchcodec's wheel from PyPI has no CUDA decoder: `RuntimeError: Unsupported device:
    // cuda` (its words; its CUDA build comes from PyTorch's CUDA index).
    if has!(text, "Unsupported device: cuda") {
        return Some((
            EnvKind::TorchCpuBuild,
            Some(format!("{}torchcodec", detail::PACKAGE_WITHOUT_CUDA)),
        ));
    }
    if has!(text, "installed CPU version PaddlePaddle")
        || has!(text, "You are using paddlepaddle cpu version")
    {
        return Some(named(EnvKind::TorchCpuBuild, detail::PADDLE_CPU));
    }
    // CUDA's assembler refusing an instruction this GPU lacks (bf16 before sm_80): `ptxas ...
    // error : Feature 'cvt.bf16.f32' requires .target sm_80 or higher`.
    if has!(text, "requires .target sm_")
        && let Some(c) = RE_PTXAS_REQUIRES_TARGET.captures(text)
    {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("needs sm_{}", &c[1])),
        ));
    }
    // TensorRT's check of the cuBLAS/cuDNN it loaded: `Myelin (Compiled against cuBLASLt
    // 11.9.2.0 but running against cuBLASLt 11.2.1.0.)`.
    if has!(text, "but running against")
        && let Some(c) = RE_COMPILED_RUNNING.captures(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!("{} {} (built with {})", &c[3], &c[4], &c[2])),
        ));
    }
    // XLA's NCCL collectives without a loadable NCCL: `ncclGetUniqueId(&id) failed: Unable to
    // load NCCL library`.
    if has!(text, "Unable to load NCCL library") {
        return Some((EnvKind::LibMissing, Some("libnccl".to_owned())));
    }
    // The image carries the driver's libraries that the runtime mounts from the host:
    // `nvidia-container-cli: mount error: file creation failed: .../libnvidia-ml.so.1: file
    // exists` (its second half alone, where a paste wrapped the line).
    if (has!(text, "nvidia-container-cli: mount error") || has!(text, "file creation failed: "))
        && has!(text, "file exists")
    {
        return Some(named(EnvKind::LibMismatch, detail::IMAGE_DRIVER_LIBRARIES));
    }
    // onnxruntime's CPU-only package (alone, or installed beside onnxruntime-gpu and
    // shadowing it): `Specified provider 'CUDAExecutionProvider' is not in available provider
    // names. Available providers: 'AzureExecutionProvider, CPUExecutionProvider'`.
    if has!(text, "CUDAExecutionProvider") && has!(text, "is not in available provider names") {
        return Some(named(EnvKind::TorchCpuBuild, detail::ONNXRUNTIME_CPU));
    }
    // The NVIDIA container runtime, configured to read the GPU list from volume mounts,
    // refuses the environment variable in an unprivileged container.
    if has!(
        text,
        "insufficient privileges to read device list from NVIDIA_VISIBLE_DEVICES",
    ) {
        return Some(named(
            EnvKind::VisibleDevices,
            detail::VISIBLE_DEVICES_ENVVAR_REFUSED,
        ));
    }
    // nvidia-docker 1's check of the image's CUDA against the driver's: `Error: unsupported
    // CUDA version: driver 7.0 < image 7.5`.
    if has!(text, "unsupported CUDA version: driver") {
        return Some((EnvKind::DriverTooOld, None));
    }
    // JAX with a CPU-only jaxlib on a machine with a GPU: `An NVIDIA GPU may be present on
    // this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.`
    if has!(text, "CUDA-enabled jaxlib is not installed") {
        return Some(named(EnvKind::TorchCpuBuild, detail::JAX_CPU));
    }
    // JAX's CUDA backend did not start; the reason, when there is one, is printed before.
    if has!(text, "no supported devices found for platform CUDA") {
        return Some(named(EnvKind::VisibleDevices, detail::JAX_NO_GPU));
    }
    // TensorFlow 1's loader: `Couldn't open CUDA library libMIOpen.so. LD_LIBRARY_PATH: ...`
    // (also for ROCm's libraries, which it loads the same way).
    if let Some(rest) = text
        .split_once("Couldn't open CUDA library ")
        .map(|(_, rest)| rest)
    {
        let lib: String = rest
            .split(|c: char| c.is_whitespace() || c == ';')
            .next()
            .unwrap_or(rest)
            .trim_end_matches('.')
            .chars()
            .take(64)
            .collect();
        return Some((EnvKind::LibMissing, Some(lib)));
    }
    // modprobe could not load an NVIDIA kernel module (`could not insert 'nvidia_331_uvm':
    // Function not implemented`): the driver is not (fully) loaded.
    if has!(text, "could not insert 'nvidia") {
        return Some((
            EnvKind::NoDriver,
            Some("an NVIDIA kernel module did not load".to_owned()),
        ));
    }
    // The container toolkit in CDI mode refuses docker's `--gpus`: `invoking the NVIDIA
    // Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not
    // supported. Please use the NVIDIA Container Runtime (e.g. specify the --runtime=nvidia
    // flag) instead.`
    if has!(text, "invoking the NVIDIA Container Runtime Hook directly") {
        return Some(named(EnvKind::VisibleDevices, detail::CDI_MODE_HOOK));
    }
    // FFmpeg's NVENC could not open an encode session: the GeForce session cap, or a GPU
    // without the encoder (`OpenEncodeSessionEx failed: unsupported device (2)`).
    if has!(text, "OpenEncodeSessionEx failed") || has!(text, "No NVENC capable devices found") {
        return Some(named(EnvKind::VisibleDevices, detail::NVENC_SESSION));
    }
    // Slurm refuses a GPU request the cluster does not define (`sbatch: error: Invalid generic
    // resource (gres) specification`).
    if has!(text, "Invalid generic resource (gres) specification") {
        return Some(named(EnvKind::VisibleDevices, detail::GRES_SPEC_INVALID));
    }
    // podman/CDI: the NVIDIA CDI specification is missing or stale.
    if has!(text, "unresolvable CDI devices") {
        return Some(named(EnvKind::VisibleDevices, detail::CDI_UNRESOLVED));
    }
    // TensorFlow 1's `Unable to load cuDNN DSO` (the library's name is on an earlier line),
    // JAX's `CUDA backend failed to initialize: Unable to load cuDNN. Is it installed?`.
    if has!(text, "Unable to load cuDNN") {
        return Some((EnvKind::LibMissing, Some("libcudnn".to_owned())));
    }
    // An OpenCL platform without a device (hashcat: `clGetDeviceIDs(): CL_DEVICE_NOT_FOUND`).
    if text.starts_with("clGetDeviceIDs") && has!(text, "CL_DEVICE_NOT_FOUND") {
        return Some(named(EnvKind::NoDriver, detail::OPENCL_NO_DEVICE));
    }
    // Docker (or compose) asked for GPUs both by count and by ID.
    if has!(text, "cannot set both Count and DeviceIDs") {
        return Some(named(EnvKind::VisibleDevices, detail::DOCKER_GPU_REQUEST));
    }
    // nouveau, not NVIDIA's driver, holds the GPU (`lspci -k`, `lshw`).
    if text.starts_with("Kernel driver in use: nouveau")
        || text.starts_with("configuration: driver=nouveau")
    {
        return Some(named(EnvKind::NoDriver, detail::NOUVEAU));
    }
    // PyTorch's own check of the cuDNN it loaded: `cuDNN version incompatibility: PyTorch was
    // compiled against (8, 3, 2) but linked against (8, 0, 3)`.
    // PyTorch 1.0-1.4: `cuDNN version mismatch: PyTorch was compiled against 7102 but linked
    // against 7605`.
    if has!(text, "cuDNN version incompatibility") || has!(text, "cuDNN version mismatch") {
        return Some((EnvKind::LibMismatch, Some("cuDNN".to_owned())));
    }
    // ROCm's and the Haskell CUDA bindings' words for a GPU the build has no code for.
    if has!(text, "hipErrorNoBinaryForGpu") || has!(text, "Unknown CUDA device compute capability")
    {
        return Some((EnvKind::ArchUnsupported, None));
    }
    // AliceVision (Meshroom's feature extraction): `CUDA-Enabled GPU detected, but the compute
    // capabilities is not enough.`, its minimum on a line after.
    if has!(text, "compute capabilities is not enough") {
        return Some((EnvKind::ArchUnsupported, None));
    }
    // A library's own minimum: `Device 0 does not have CUDA compute capability 5.0 or greater`.
    if let Some(c) = RE_NEEDS_CC.captures(text) {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("needs sm_{}", c[1].replace('.', ""))),
        ));
    }
    // TensorFlow's session option names a GPU the process does not have; MXNet's engine the
    // same (`Invalid GPU Id: 1, Valid device id should be less than device_count: 1`).
    if has!(text, "'visible_device_list' listed an invalid GPU id") || has!(text, "Invalid GPU Id:")
    {
        return Some((EnvKind::VisibleDevices, None));
    }
    // nvidia-smi with NVML up but no GPU in its list; Slurm's slurmd finding none of the GPUs
    // that gres.conf declares (the node is drained with this reason).
    if text.starts_with("No devices were found")
        || (has!(text, "gres/gpu count reported lower than configured (0 <"))
    {
        return Some(named(EnvKind::VisibleDevices, detail::NO_GPU_ENUMERATED));
    }
    // Some of them: `gres/gpu count reported lower than configured (3 < 4)`.
    if has!(text, "gres/gpu count reported lower than configured (") {
        return Some(named(EnvKind::VisibleDevices, detail::GPUS_MISSING));
    }
    // A virtual GPU without a license (`nvidia-smi -q`): throttled, then CUDA is refused.
    if text.starts_with("License Status") && has!(text, ": Unlicensed") {
        return Some(named(EnvKind::VisibleDevices, detail::VGPU_UNLICENSED));
    }
    // CUDA's assembler does not know the GPU's architecture: the toolkit is older than it.
    if has!(text, "is not defined for option 'gpu-name'")
        && let Some(c) = RE_PTXAS_ARCH.captures(text)
    {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("ptxas does not know {}", &c[1])),
        ));
    }
    if let Some(c) = RE_DRIVER_FOUND.captures(text) {
        return Some((EnvKind::DriverTooOld, Some(c[1].to_owned())));
    }
    // MATLAB's GPU support (gpuArray, CUDA MEX files): `The CUDA driver was found, but it is
    // too old. The CUDA driver on your system supports CUDA version 5.5. The required CUDA
    // version is 7.5 or greater.` The version is given as cudaDriverGetVersion's number.
    if has!(text, "CUDA driver was found, but it is too old") {
        let supports = RE_MATLAB_DRIVER_CUDA.captures(text).and_then(|c| {
            let major: u32 = c[1].parse().ok()?;
            let minor: u32 = c[2].parse().ok()?;
            // A garbled version (`99999999.5`) gives no number rather than an overflow.
            let version = major
                .checked_mul(1000)?
                .checked_add(minor.checked_mul(10)?)?;
            Some(version.to_string())
        });
        return Some((EnvKind::DriverTooOld, supports));
    }
    // MATLAB again, when no driver library is there at all: `The CUDA driver could not be
    // loaded. The library name used was 'nvcuda.dll'.` (or `libcuda.so.1`).
    if has!(text, "The CUDA driver could not be loaded") {
        return Some((EnvKind::NoDriver, None));
    }
    // NVIDIA's NGC containers check the GPU too: `WARNING: Detected NVIDIA H200 GPU, which is
    // not yet supported in this version of the container`, and when no GPU passes, `ERROR: No
    // supported GPU(s) detected to run this container`.
    if has!(
        text,
        "which is not yet supported in this version of the container"
    ) || has!(text, "No supported GPU(s) detected to run this container")
    {
        return Some(named(EnvKind::ArchUnsupported, detail::CONTAINER_GPU));
    }
    // NVIDIA's NGC containers check the driver at start-up: `ERROR: This container was built
    // for NVIDIA Driver Release 450.51 or later, but` (the version found is on the next line).
    if has!(text, "built for NVIDIA Driver Release")
        && let Some(c) = RE_NGC_DRIVER.captures(text)
    {
        return Some((
            EnvKind::DriverTooOld,
            Some(format!("the container needs driver {} or later", &c[1])),
        ));
    }
    // XLA refuses a ptxas it knows to miscompile: `ptxas 12.3.103 has a bug that we think can
    // affect XLA. Please use a different version.`
    if has!(text, "has a bug that we think can affect XLA")
        && let Some(c) = RE_PTXAS_VERSION.captures(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!("{}{}", detail::PTXAS_REFUSED, &c[1])),
        ));
    }
    // Two applications' words for a driver too old for them, behind one cheap check
    // (`driver`/`Driver`) since they run for every line that gets this far.
    if has!(text, "river")
        && let Some(too_old) = application_driver_check(text)
    {
        return Some(too_old);
    }
    if has!(text, "older than the")
        && let Some(c) = RE_XLA_DRIVER_OLDER.captures(text)
    {
        return Some((
            EnvKind::DriverTooOld,
            Some(format!(
                "{} {} (the driver's CUDA is {})",
                detail::XLA_PTX_COMPILER,
                &c[2],
                &c[1]
            )),
        ));
    }
    if has!(text, "Unsupported .version")
        && let Some(c) = RE_PTXAS_FILE_VERSION.captures(text)
    {
        return Some((
            EnvKind::LibMissing,
            Some(format!(
                "{} (PTX {}; this ptxas reads up to {})",
                detail::PTXAS_TOO_OLD,
                &c[1],
                &c[2]
            )),
        ));
    }
    if has!(text, "driver version is insufficient for CUDA runtime version")
        || has!(text, "cudaErrorInsufficientDriver")
        || has!(text, "CUDA_ERROR_INSUFFICIENT_DRIVER")
        || has!(text, "PTX was compiled with an unsupported toolchain")
        || has!(text, "UnsupportedPtxVersion")
        || has!(text, "UNSUPPORTED_PTX_VERSION")
        || has!(text, "please update your driver to a newer version")
        || has!(text, "API call is not supported in the installed CUDA driver")
        || has!(text, "NVIDIA driver on your system is too old")
        // The same warning wrapped by a terminal after its first words (`CUDA initialization:
        // The NVIDIA driver on your` / `system is too old (found version 12040)`): PyTorch
        // has no other message that starts so.
        || text.trim_end().ends_with("CUDA initialization: The NVIDIA driver on your")
        // ollama: `your nvidia driver is too old or missing`.
        || has!(text, "nvidia driver is too old")
        // The driver's libcuda lacks an entry point the software was built for.
        || (has!(text, "symbol lookup for cu") && has!(text, "failed"))
        // The driver's PTX JIT (numba's `cuLinkAddData`, OptiX) reading PTX from a newer CUDA:
        // `ptxas application ptx input, line 9; fatal : Unsupported .version 8.1; current
        // version is '8.0'`.
        || (has!(text, "Unsupported .version") && has!(text, "current version is"))
    {
        return Some((EnvKind::DriverTooOld, None));
    }
    // 803: the CUDA driver library (libcuda, often a newer `cuda-compat` copy) and the loaded
    // kernel driver do not go together; 804: that compat copy was tried on a GPU that cannot
    // use it. Both mean the kernel driver is too old for the CUDA in use (or was upgraded
    // without a reboot). The detail names the error so the rule can say which.
    if has!(
        text,
        "system has unsupported display driver / cuda driver combination",
    ) || has!(text, "cudaErrorSystemDriverMismatch")
        || has!(text, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH")
    {
        return Some(named(EnvKind::DriverTooOld, detail::ERROR_803));
    }
    if has!(
        text,
        "forward compatibility was attempted on non supported HW",
    ) || has!(text, "cudaErrorCompatNotSupportedOnDevice")
        || has!(text, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE")
    {
        return Some(named(EnvKind::DriverTooOld, detail::ERROR_804));
    }
    if has!(text, "Torch not compiled with CUDA enabled")
        || has!(text, "compiled without CUDA support")
        || has!(text, "Torch not compiled with CUDA")
        // `python -m torch.utils.collect_env` on a CPU-only wheel.
        || has!(text, "CUDA used to build PyTorch: None")
    {
        return Some((EnvKind::TorchCpuBuild, None));
    }
    if let Some(c) = RE_SM.captures(text) {
        return Some((EnvKind::ArchUnsupported, Some(c[1].to_owned())));
    }
    // Kernels that exist only for newer architectures: FlashAttention 2 needs Ampere (sm_80)
    // or newer, vLLM refuses bfloat16 below compute capability 8.0. The detail is the
    // architecture the software needs, not the GPU's.
    if has!(text, "FlashAttention only supports Ampere GPUs or newer") {
        return Some((EnvKind::ArchUnsupported, Some("needs sm_80".to_owned())));
    }
    if let Some(c) = RE_MIN_CAPABILITY.captures(text) {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("needs sm_{}{}", &c[1], &c[2])),
        ));
    }
    // TVM's (and TileLang's) target check: `Check failed: (0) is false: Not supported cuda
    // -keys=cuda,gpu -arch=sm_100`.
    if has!(text, "Not supported cuda")
        && let Some(arch) = text
            .split_once("-arch=")
            .map(|(_, rest)| rest.split_whitespace().next().unwrap_or(rest))
            .filter(|arch| arch.starts_with("sm_"))
    {
        return Some((EnvKind::ArchUnsupported, Some(arch.to_owned())));
    }
    if has!(text, "kernel image is available")
        // The error by its number alone (Faiss' `details: CUDA error 209 ...`, cut short).
        || (has!(text, "CUDA error 209") || has!(text, "cuda error 209"))
        // TensorRT older than the GPU: `Assertion failed: Unsupported SM.` (caskUtils.cpp).
        || has!(text, "Unsupported SM.")
        // llama.cpp: `ggml-cuda was compiled without support for the current GPU architecture`.
        || has!(text, "compiled without support for the current GPU architecture")
        // cudaErrorInvalidKernelImage (200), as TensorFlow's start-up words it on a GPU newer
        // than its CUDA: `Status: device kernel image is invalid`.
        || has!(text, "device kernel image is invalid")
        || has!(text, "cudaErrorNoKernelImageForDevice")
        || has!(text, "CUDA_ERROR_NO_BINARY_FOR_GPU")
        || has!(text, "no longer supports this GPU because it is too old")
        || has!(text, "is not compatible with the current PyTorch installation")
        || (has!(text, "invalid device function")
            && (has!(text, "CUDA") || has!(text, "cuda") || has!(text, "Error text: ")))
    {
        return Some((EnvKind::ArchUnsupported, None));
    }
    // The kernel's own words for the same thing: `NVRM: API mismatch: the client has the
    // version 535.129.03, but this kernel module has the version 535.113.01`.
    if text
        .to_ascii_lowercase()
        .contains("driver/library version mismatch")
        || has!(text, "NVRM: API mismatch")
    {
        return Some((EnvKind::NvmlMismatch, None));
    }
    if has!(text, "kmod-nvidia")
        && let Some(c) = RE_KMOD_VS_DRIVER.captures(text)
    {
        return Some((
            EnvKind::NvmlMismatch,
            Some(format!("kernel module {}, driver {}", &c[1], &c[2])),
        ));
    }
    if let Some(c) = RE_KERNEL_VS_DSO.captures(text) {
        let detail = match c.get(2) {
            Some(dso) => format!("kernel module {}, libcuda {}", &c[1], dso.as_str()),
            None => format!("kernel module {}", &c[1]),
        };
        return Some((EnvKind::NvmlMismatch, Some(detail)));
    }
    // NVML's own code for the same (NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18), as ollama and
    // other Go/C programs log it: `nvmlInit_v2 err: 18`, `nvml vram init failure: 18`.
    if has!(text, "NVML_ERROR_LIB_RM_VERSION_MISMATCH")
        || has!(text, "NVML/RM version mismatch")
        || (has!(text, "nvml") || has!(text, "NVML"))
            && (has!(text, "err: 18") || has!(text, "failure: 18"))
    {
        return Some((EnvKind::NvmlMismatch, None));
    }
    // The kernel module loaded, but another driver (nouveau) holds the GPU.
    if has!(text, "NVIDIA probe routine was not called") {
        return Some(named(EnvKind::NoDriver, detail::NOUVEAU));
    }
    if let Some(c) = RE_UNKNOWN_CC.captures(text) {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("sm_{}{}", &c[1], &c[2])),
        ));
    }
    if let Some(c) = RE_PTX_TARGET.captures(text) {
        return Some((EnvKind::ArchUnsupported, Some(c[1].to_owned())));
    }
    if let Some(c) = RE_LIB_NOT_FOUND.captures(text) {
        let lib = c
            .get(1)
            .map(|m| m.as_str().to_owned())
            .or_else(|| c.get(2).map(|m| format!("lib{}", m.as_str())));
        return Some((EnvKind::LibMissing, lib));
    }
    // A TensorFlow build without NCCL (Windows, some source builds) asked for NCCL's ops.
    if has!(text, "No OpKernel was registered to support Op 'Nccl") {
        return Some((
            EnvKind::LibMissing,
            Some("NCCL (this TensorFlow build has none)".to_owned()),
        ));
    }
    // XLA's compiler needs CUDA's libdevice (nvvm/libdevice/libdevice.10.bc) and ptxas; TF's
    // eager ops compiled by XLA report only `UnknownError: JIT compilation failed. [Op:FloorMod]`
    // (the driver's own `a PTX JIT compilation failed` is another matter, above).
    if has!(text, "Can't find libdevice directory")
        || has!(text, "libdevice not found")
        || text.contains("JIT compilation failed. [Op:")
    {
        return Some(named(EnvKind::LibMissing, detail::XLA_CUDA_DIR));
    }
    // TensorFlow with no DNN support registered for its stream executor: cuDNN did not load
    // (`Fail to find the dnn implementation.` under `[[{{node CudnnRNN}}]]`).
    if has!(text, "Fail to find the dnn implementation") {
        return Some((EnvKind::LibMissing, Some("libcudnn".to_owned())));
    }
    // onnxruntime on Windows: error 126 (module not found) loading its CUDA provider, whose
    // own dependencies (cuDNN, cuBLAS DLLs) are missing or of another version.
    if has!(text, "LoadLibrary failed with error 126") && has!(text, "cuda") {
        return Some((
            EnvKind::LibMissing,
            Some("a CUDA DLL of onnxruntime's CUDA provider".to_owned()),
        ));
    }
    // onnxruntime-gpu could not create its CUDA provider and goes on with the CPU: `Failed to
    // create CUDAExecutionProvider. Please reference .../CUDA-ExecutionProvider.html
    // #requirements to ensure all dependencies are met.`
    if has!(text, "Failed to create CUDAExecutionProvider") {
        return Some(named(EnvKind::LibMissing, detail::ORT_CUDA_PROVIDER));
    }
    // Windows' loader could not load a Python extension module or a DLL it needs: `ImportError:
    // DLL load failed while importing onnxruntime_pybind11_state: The specified module could
    // not be found.` (the reason is in the system's language).
    if has!(text, "DLL load failed while importing ")
        && let Some(c) = RE_DLL_IMPORT.captures(text)
    {
        return Some((EnvKind::LibMissing, Some(c[1].to_owned())));
    }
    // NVRTC (CuPy, numba, cuda-python) rejected a compile option: usually the GPU
    // architecture, which an NVRTC older than the GPU does not know.
    if has!(text, "NVRTC_ERROR_INVALID_OPTION") {
        return Some(named(EnvKind::LibMismatch, detail::NVRTC_OPTION));
    }
    // JAX and TensorFlow check the cuDNN they load against the one they were built with.
    if let Some(c) = RE_CUDNN_RUNTIME.captures(text) {
        return Some((
            EnvKind::LibMismatch,
            Some(format!("cuDNN {} (built with {})", &c[1], &c[2])),
        ));
    }
    // (A cheap substring test first: these regexes would otherwise run on every line here.)
    if has!(text, "was built against")
        && let Some(c) = RE_BUILT_AGAINST.captures(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!("{} {} (built with {})", &c[1], &c[2], &c[3])),
        ));
    }
    if has!(text, "Outdated ")
        && let Some(c) = RE_OUTDATED_INSTALL.captures(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!("{} (older than the build needs)", &c[1])),
        ));
    }
    // An extension linked against PyTorch's own CUDA library of another release:
    // `OSError: libtorch_cuda_cpp.so: cannot open shared object file`.
    if has!(text, "cannot open shared object")
        && let Some(m) = RE_TORCH_LIB.find(text)
    {
        return Some((EnvKind::LibMissing, Some(m.as_str().to_owned())));
    }
    if let Some(c) = RE_LIB.captures(text) {
        // "libcudnn_cnn_infer.so.8." at the end of a sentence: the dot is not the version's.
        let lib = c[1].trim_end_matches('.').to_owned();
        // The library loads, but an older (or other) version than the caller was linked
        // against: `libcublas.so.11: undefined symbol: cublasLtGetStatusString, version
        // libcublasLt.so.11`, or glibc's other wording, `symbol cublasLtHSHMatmulAlgoInit
        // version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time
        // reference`. The library right after `version` is the one that lacks the symbol.
        if has!(text, "undefined symbol") || has!(text, "with link time reference") {
            let culprit = RE_LIB
                .captures_iter(text)
                .find(|v| {
                    v.get(0)
                        .is_some_and(|m| text[..m.start()].ends_with("version "))
                })
                .map_or(lib, |v| v[1].trim_end_matches('.').to_owned());
            return Some((EnvKind::LibMismatch, Some(culprit)));
        }
        let cannot_load = has!(text, "cannot open shared object")
            || has!(text, "Could not load")
            // TensorFlow 1.x on Windows: `Could not find 'cudart64_100.dll'`.
            || has!(text, "Could not find")
            // FFmpeg's `Cannot load libcuda.so.1`.
            || has!(text, "Cannot load")
            || has!(text, "could not load")
            || has!(text, "not found")
            || has!(text, "Unable to load")
            || has!(text, "No such file")
            || has!(text, "cannot find")
            || has!(text, "not loaded");
        // libcuda and libnvidia-ml come with the driver, not with CUDA; the driver is often
        // there and only its libraries are not where the loader looks (a container without
        // them, WSL's /usr/lib/wsl/lib, a broken symlink), so this is a missing library.
        if cannot_load || has!(text, "Failed to dlopen") || has!(text, "couldn't find") {
            return Some((EnvKind::LibMissing, Some(lib)));
        }
    }
    // Any other shared library: a GPU stack's (ROCm's libhsa-runtime64), a package's own
    // (libfaiss), PyTorch's (caffe2_nvrtc.dll). Read after the CUDA names above, which say more.
    // (NCCL looks for its optional plugins on every start and says so at INFO: `NET/Plugin :
    // dlerror=libnccl-net.so: cannot open shared object file ... using internal
    // implementation`.)
    if (has!(text, "cannot open shared object")
        || has!(text, "or one of its dependencies")
        || has!(text, "Library not loaded"))
        && !(has!(text, "NCCL INFO") || has!(text, "Plugin"))
        && let Some(c) = RE_ANY_LIB.captures(text)
        && let Some(lib) = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3))
    {
        return Some((EnvKind::LibMissing, Some(lib.as_str().to_owned())));
    }
    // A compiled extension built against another PyTorch than the installed one: the C++
    // symbol it needs is in a PyTorch namespace (`flash_attn_2_cuda...so: undefined symbol:
    // _ZN3c104cuda9SetDeviceEi`).
    if has!(text, "undefined symbol: _ZN")
        && let Some(extension) = torch_extension_lacking_a_symbol(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!("{}{extension}", detail::TORCH_EXTENSION)),
        ));
    }
    // A compiled extension built with a newer C++ compiler than the C++ runtime that got
    // loaded (a conda environment's older libstdc++): the symbol is in `std`
    // (`pytorch3d/_C...so: undefined symbol: _ZNSt15__exception_ptr13exception_ptr9_M_addrefEv`).
    if (has!(text, "undefined symbol: _ZNSt")
        || has!(text, "undefined symbol: _ZNKSt")
        || has!(text, "undefined symbol: _ZSt"))
        && has!(text, ".so")
    {
        return Some(named(EnvKind::LibMismatch, detail::OLDER_LIBSTDCXX));
    }
    // A library (PyTorch's own `libtorch_cuda.so` most often) was linked against a newer
    // NCCL/cuBLAS/cuDNN/... than the one that got loaded: `undefined symbol: ncclCommRegister`.
    if has!(text, "undefined symbol")
        && let Some(c) = RE_UNDEFINED_CUDA_SYMBOL.captures(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!(
                "lib{} (lacks {})",
                c[2].to_ascii_lowercase(),
                &c[1]
            )),
        ));
    }
    // Building a CUDA extension with a toolkit other than the one PyTorch was built with.
    if has!(text, "Installed CUDA version")
        && let Some(c) = RE_DEEPSPEED_CUDA.captures(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!(
                "{} {} (PyTorch built with {})",
                detail::CUDA_TOOLKIT,
                &c[1],
                &c[2]
            )),
        ));
    }
    if let Some(c) = RE_DETECTED_CUDA.captures(text) {
        return Some((
            EnvKind::LibMismatch,
            Some(match c.get(2) {
                Some(built) => format!(
                    "{} {} (PyTorch built with {})",
                    detail::CUDA_TOOLKIT,
                    &c[1],
                    built.as_str()
                ),
                None => format!(
                    "{} {} (not the one PyTorch was built with)",
                    detail::CUDA_TOOLKIT,
                    &c[1]
                ),
            }),
        ));
    }
    // TensorFlow 2.9+ when it finds no usable cuDNN: `DNN library is not found.`
    if has!(text, "DNN library is not found") {
        return Some((EnvKind::LibMissing, Some("libcudnn".to_owned())));
    }
    // TensorFlow's summary after its per-library "Could not load dynamic library" lines.
    if has!(text, "Cannot dlopen some GPU libraries") {
        return Some((EnvKind::LibMissing, None));
    }
    if has!(text, "invalid value for --gpu-architecture")
        || has!(text, "Unsupported gpu architecture")
        // Older nvcc's words for an architecture newer than it: `nvcc fatal   : Value 'sm_75'
        // is not defined for option 'gpu-architecture'`.
        || has!(text, "is not defined for option 'gpu-architecture'")
    {
        // The compiler is older than the architecture it was asked for.
        let arch = RE_QUOTED_ARCH.captures(text).map(|c| c[1].to_owned());
        // Unless no GPU ever had that architecture (`compute_71`): then the build script
        // asked for a typo, which no toolkit supports, and the line is a plain build failure.
        if arch.as_deref().is_some_and(|a| !real_architecture(a)) {
            return None;
        }
        return Some((
            EnvKind::ArchUnsupported,
            arch.map(|a| format!("{}{a}", detail::COMPILER_TOO_OLD)),
        ));
    }
    // nvcc compiling for an architecture that lacks an atomic overload the code calls:
    // `error: no instance of overloaded function "atomicAdd" matches the argument list`
    // (`atomicAdd(double *, double)` needs sm_60, 64-bit `atomicMin` sm_35).
    if has!(text, "no instance of overloaded function \"atomic")
        && let Some(function) = text
            .split_once("overloaded function \"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(name, _)| name)
    {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("{}{function}", detail::ATOMIC_OVERLOAD)),
        ));
    }
    // OpenGL found no driver it could load: `libGL error: failed to load driver: swrast`
    // (Mesa's software renderer, the last resort when no NVIDIA GL library is there), or
    // Mesa's own would not load: `libGL error: MESA-LOADER: failed to open iris:
    // .../envs/x/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found`.
    if has!(text, "libGL error: ")
        && (has!(text, "failed to load driver") || has!(text, "MESA-LOADER: failed to open"))
    {
        let which = if has!(text, "GLIBCXX_") {
            detail::GL_LIBSTDCXX
        } else {
            detail::GL_DRIVER
        };
        return Some(named(EnvKind::LibMissing, which));
    }
    // pip has no release of a package built for the CUDA version in its name: `ERROR: No
    // matching distribution found for cupy-cuda90<10,>=9`, `... for cumm-cu100`.
    if has!(text, "No matching distribution found for ")
        && let Some(c) = RE_PIP_CUDA_PACKAGE.captures(text)
    {
        return Some((
            EnvKind::LibMissing,
            Some(format!("{}{}", detail::PIP_CUDA_BUILD, &c[1])),
        ));
    }
    // The driver's (or the toolkit's) ptxas given PTX made for a newer GPU than this one.
    if has!(text, "SM version specified by .target is higher than") {
        return Some(named(EnvKind::ArchUnsupported, detail::PTX_TARGET_NEWER));
    }
    // A build's CMake that found no cuDNN or NCCL: MindSpore's `Failed to find cudnn library
    // file, please set environment variable CUDNN_HOME`, FindCUDNN's `Could NOT find CUDNN
    // (missing: CUDNN_LIBRARY ...)`.
    if has!(text, "Failed to find cudnn") || has!(text, "Could NOT find CUDNN") {
        return Some((EnvKind::LibMissing, Some("libcudnn".to_owned())));
    }
    if has!(text, "Could NOT find NCCL") {
        return Some((EnvKind::LibMissing, Some("libnccl".to_owned())));
    }
    // Paddle refusing an operation the loaded cuDNN is too old for: `Dilations conv is not
    // supported in this cuDNN version(5.1.10).` (another, older cuDNN than the one meant).
    if has!(text, "is not supported in this cuDNN version")
        && let Some(c) = RE_CUDNN_VERSION_IN_PARENS.captures(text)
    {
        return Some((
            EnvKind::LibMismatch,
            Some(format!("cuDNN {} (older than the build needs)", &c[1])),
        ));
    }
    // The driver release does not drive this GPU (the kernel wraps its sentence over lines:
    // `NVRM: installed in this system is not supported by the` / `NVRM: NVIDIA 570.86.15
    // driver release.`).
    if has!(text, "NVRM:")
        && (has!(text, "installed in this system is not supported by the")
            || (has!(text, "is not supported by the NVIDIA") && has!(text, "driver release")))
    {
        return Some(named(EnvKind::NoDriver, detail::GPU_NOT_IN_RELEASE));
    }
    // WSL 2 or a Hyper-V GPU-partitioned guest whose path to the Windows driver is missing.
    if has!(text, "GPU access blocked by the operating system") {
        return Some(named(EnvKind::NoDriver, detail::GPU_PARAVIRTUAL_BLOCKED));
    }
    // CUDAnative (Julia) on a GPU its toolchain cannot target: `ERROR: Device capability
    // v1.1.0 not supported by available toolchain`.
    if has!(text, "not supported by available toolchain") && has!(text, "apability") {
        return Some((EnvKind::ArchUnsupported, None));
    }
    // text-embeddings-inference's image for another architecture: `Could not start backend:
    // Runtime compute cap 75 is not compatible with compile time compute cap 80`.
    if has!(text, "is not compatible with compile time compute cap")
        && let Some(c) = RE_RUNTIME_COMPUTE_CAP.captures(text)
    {
        return Some((EnvKind::ArchUnsupported, Some(format!("sm_{}", &c[1]))));
    }
    // Kokkos checks the architecture it was built for at start-up: `Kokkos::Cuda::initialize
    // ERROR: running kernels compiled for compute capability 7.0 (>= 5.0) on device with
    // compute capability 5.0`.
    if has!(text, "running kernels compiled for compute capability")
        && let Some(c) = RE_KOKKOS_ARCH.captures(text)
    {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("{}{}.{}", detail::KOKKOS_ARCH, &c[1], &c[2])),
        ));
    }
    // The NVIDIA container runtime gave up waiting for the driver to bring the GPUs up
    // (before 1.0 its words were `initialization error: driver error: timed out`).
    if (has!(text, "driver rpc error") || has!(text, "initialization error: driver error"))
        && has!(text, "timed out")
    {
        return Some(named(EnvKind::NoDriver, detail::DRIVER_RPC_TIMEOUT));
    }
    // The shell's, Windows' and Go's words for a program that is not there.
    if has!(text, "nvidia-smi")
        && (has!(text, "command not found")
            || has!(text, "nvidia-smi: not found")
            || has!(text, "is not recognized as an internal or external command")
            || has!(text, "executable file not found")
            || has!(text, "nvidia-smi is not installed")
            || text.starts_with("nvidia-smi not found"))
    {
        return Some(named(EnvKind::NoDriver, detail::NVIDIA_SMI_MISSING));
    }
    if has!(text, "communicate with the NVIDIA driver")
        || has!(text, "Found no NVIDIA driver")
        || has!(text, "CUDA driver initialization failed")
        || has!(text, "NVIDIA driver is not loaded")
        || has!(text, "NVIDIA kernel module")
            && (has!(text, "not loaded") || has!(text, "failed"))
        || has!(text, "CUDA driver is a stub library")
        // nvidia-container-cli: `initialization error: nvml error: driver not loaded`.
        || has!(text, "nvml error: driver not loaded")
    {
        return Some((EnvKind::NoDriver, None));
    }
    // NVML found the driver but could not open /dev/nvidia*: in containers, the access that
    // the host's systemd took away from the container's device cgroup.
    // NVML_ERROR_FUNCTION_NOT_FOUND: the libnvidia-ml that loaded lacks a function the caller
    // needs: a stale copy or a shim comes before the driver's own (`Failed to initialize NVML:
    // Function Not Found`, `Failed to properly shut down NVML: Function Not Found`).
    if has!(text, "NVML: Function Not Found") {
        return Some((EnvKind::LibMismatch, Some("libnvidia-ml.so.1".to_owned())));
    }
    if has!(text, "Failed to initialize NVML: Unknown Error") {
        return Some(named(EnvKind::VisibleDevices, detail::DEVICE_ACCESS_LOST));
    }
    // TensorFlow's diagnosis after a failed cuInit, and programs that open the device node
    // themselves.
    if has!(
        text,
        "kernel driver does not appear to be running on this host",
    ) || has!(text, "could not open the device file /dev/nvidia")
        // docker passing a device node the host does not have (`--device /dev/nvidia-uvm`):
        // `error gathering device information while adding custom device "/dev/nvidia-uvm":
        // no such file or directory`: the driver (or its uvm module) is not loaded.
        || (has!(text, "adding custom device \"/dev/nvidia")
            && has!(text, "no such file or directory"))
    {
        return Some((EnvKind::NoDriver, None));
    }
    // The host driver supports an older CUDA than the container image needs.
    if let Some(c) = RE_UNSATISFIED_CUDA.captures(text) {
        return Some((
            EnvKind::DriverTooOld,
            Some(format!("image needs CUDA {}", &c[1])),
        ));
    }
    // A container started without the GPUs: NGC images say so at start, docker when the
    // nvidia runtime is not installed or configured.
    if has!(text, "The NVIDIA Driver was not detected")
        || has!(text, "unknown or invalid runtime name: nvidia")
        // docker without the NVIDIA container toolkit: `could not select device driver ""
        // with capabilities: [[gpu]]`.
        || has!(text, "could not select device driver")
        // TensorFlow in a container without the device nodes: `failed call to cuInit:
        // UNKNOWN ERROR (303)`, then `no NVIDIA GPU device is present: /dev/nvidia0 does not
        // exist`.
        || has!(text, "no NVIDIA GPU device is present")
        || has!(text, "cuInit: UNKNOWN ERROR (303)")
    {
        return Some(named(
            EnvKind::VisibleDevices,
            detail::CONTAINER_WITHOUT_GPUS,
        ));
    }
    // A GPU that the installed driver branch dropped: `NVRM: The NVIDIA GeForce GTX 1050 GPU
    // installed in this system is supported through the NVIDIA 580.xx Legacy drivers. ...
    // The 595.71.05 NVIDIA driver will ignore this GPU.`
    if has!(text, "Legacy drivers") && has!(text, "supported through the NVIDIA") {
        return Some((
            EnvKind::NoDriver,
            Some(format!(
                "{}{}",
                detail::LEGACY_GPU,
                RE_LEGACY_BRANCH
                    .captures(text)
                    .map_or_else(String::new, |c| format!(" ({} legacy driver)", &c[1]))
            )),
        ));
    }
    if has!(text, "NVRM: No NVIDIA GPU found") {
        return Some((EnvKind::NoDriver, None));
    }
    // The Rust `cudarc` crate looking for the driver's library: `Unable to find cuda lib under
    // the names ["cuda", "nvcuda"]`.
    if has!(text, "Unable to find cuda lib under the names") {
        return Some((EnvKind::LibMissing, Some("libcuda.so.1".to_owned())));
    }
    // The same crate for CUDA's own libraries: `Unable to find nvrtc lib under the names
    // ["nvrtc", "nvrtc64", ...]`.
    if has!(text, "lib under the names")
        && let Some(c) = RE_CUDARC_LIB.captures(text)
    {
        return Some((EnvKind::LibMissing, Some(format!("lib{}", &c[1]))));
    }
    // ONNX Runtime's CUDA provider that would not load (onnxruntime-node, the C API):
    // `OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library`.
    if has!(text, "ExecutionProvider_Cuda") && has!(text, "Failed to load shared library") {
        return Some((
            EnvKind::LibMissing,
            Some("libonnxruntime_providers_cuda.so".to_owned()),
        ));
    }
    // NVML finds no kernel driver: `pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded`,
    // `Failed to initialize NVML: Driver Not Loaded` (NVML_ERROR_DRIVER_NOT_LOADED).
    if has!(text, "NVMLError_DriverNotLoaded")
        || has!(text, "NVML_ERROR_DRIVER_NOT_LOADED")
        || (has!(text, "NVML") && has!(text, ": Driver Not Loaded"))
    {
        return Some((EnvKind::NoDriver, None));
    }
    // xFormers built for another PyTorch or CUDA: `xFormers can't load C++/CUDA extensions.
    // xFormers was built for:` (the versions follow on the next lines).
    if has!(text, "xFormers can't load C++/CUDA extensions") {
        return Some((
            EnvKind::LibMismatch,
            Some(detail::EXTENSION_BUILD.to_owned()),
        ));
    }
    // The GPU has no bfloat16 (before Ampere): PyTorch's autocast refuses it.
    // A build that cannot find CUDA's headers: `x.cu.cc:10:0: fatal error: cuda/include/cuda.h:
    // No such file or directory`, `fatal error: cudnn.h: No such file or directory`.
    if has!(text, "fatal error: ")
        && has!(text, ": No such file or directory")
        && let Some(header) = header_not_found(text)
    {
        // Any other header belongs to a library whose development files are missing too
        // (MediaPipe's GPU build: `fatal error: EGL/egl.h: No such file or directory`).
        let kind = if is_cuda_header(header) {
            detail::CUDA_HEADER
        } else {
            detail::BUILD_HEADER
        };
        return Some((EnvKind::LibMissing, Some(format!("{kind}{header}"))));
    }
    // torch.compile's Triton backend refusing a GPU before Volta: `Found NVIDIA GeForce GTX 1070
    // which is too old to be supported by the triton GPU compiler, ... Triton only supports
    // devices of CUDA Capability >= 7.0`.
    if has!(text, "too old to be supported by the triton GPU compiler") {
        let needed = text
            .split_once("CUDA Capability >= ")
            .and_then(|(_, rest)| rest.split([',', ' ']).next())
            .map_or_else(|| "70".to_owned(), |v| v.replace('.', ""));
        return Some((EnvKind::ArchUnsupported, Some(format!("needs sm_{needed}"))));
    }
    if has!(text, "does not support bfloat16") {
        return Some((
            EnvKind::ArchUnsupported,
            Some("no bfloat16 before sm_80".to_owned()),
        ));
    }
    // jaxlib's cuSolver handle could not be created (`operation cusolverDnCreate(&handle)
    // failed: cuSolver internal error`, `gpusolverDnCreate` since jaxlib 0.4): the CUDA
    // libraries it loaded are not the ones it was built with.
    if ((has!(text, "cusolverDnCreate") || has!(text, "gpusolverDnCreate"))
        && has!(text, "cuSolver internal error"))
        // jaxlib's later words for the same failure: `RuntimeError: cuSolver internal error`.
        || text.starts_with("RuntimeError: cuSolver internal error")
    {
        return Some((EnvKind::LibMismatch, Some("libcusolver".to_owned())));
    }
    // RAPIDS built without code for this GPU: `This cuDF installation is missing the necessary
    // PTX files that are <=50.`
    if has!(text, "installation is missing the necessary PTX files") {
        return Some((EnvKind::ArchUnsupported, None));
    }
    // GPUs that are too old for the build: TensorFlow skips them, ollama falls back to the CPU.
    if let Some(c) = RE_MIN_CUDA_CAPABILITY.captures(text) {
        return Some((
            EnvKind::ArchUnsupported,
            Some(format!("needs sm_{}", c[1].replace('.', ""))),
        ));
    }
    if has!(text, "CUDA GPU is too old") {
        return Some((EnvKind::ArchUnsupported, None));
    }
    // cuInit failed with CUDA 999 while the driver itself is present: most often its unified
    // memory module (nvidia_uvm) is in a bad state after a suspend, or missing (in a container
    // or an LXC guest: /dev/nvidia-uvm not passed in). PyTorch words it its own way; the
    // others name the call (`failed call to cuInit: CUDA_ERROR_UNKNOWN`, FFmpeg's
    // `cu->cuInit(0) failed -> CUDA_ERROR_UNKNOWN: unknown error`, `cuInit failed: unknown
    // error`).
    if has!(
        text,
        "CUDA unknown error - this may be due to an incorrectly set up environment",
    ) || (has!(text, "cuInit")
        && (has!(text, "CUDA_ERROR_UNKNOWN") || has!(text, "unknown error")))
    {
        return Some(named(EnvKind::NoDriver, detail::NVIDIA_UVM));
    }
    // Error 100 means the driver answered but showed no GPU: without a driver the runtime
    // reports 35 (insufficient driver) instead. An empty or wrong CUDA_VISIBLE_DEVICES, or a
    // container started without GPUs, is what hides them.
    if has!(text, "no CUDA-capable device is detected")
        || has!(text, "cudaErrorNoDevice")
        || has!(text, "CUDA_ERROR_NO_DEVICE")
        || has!(text, "No CUDA GPUs are available")
    {
        return Some(named(EnvKind::VisibleDevices, detail::NO_CUDA_DEVICE));
    }
    // CUDA 46: the GPU is visible but takes no work (exclusive-process mode with another
    // process on it, MPS, a GPU needing a reset, an unlicensed vGPU).
    if has!(text, "all CUDA-capable devices are busy or unavailable")
        // The same error as CUDA 11+ words it.
        || has!(text, "CUDA-capable device(s) is/are busy or unavailable")
        || has!(text, "cudaErrorDevicesUnavailable")
        || has!(text, "CUDA_ERROR_DEVICES_UNAVAILABLE")
    {
        return Some(named(EnvKind::VisibleDevices, detail::DEVICES_BUSY));
    }
    // CUDA 101 and its kin: an index past the last GPU the job can see.
    if has!(text, "invalid device ordinal")
        || has!(text, "cudaErrorInvalidDevice")
        || has!(text, "CUDA_ERROR_INVALID_DEVICE")
        // PyTorch's check of an ordinal against the devices it can see (the lazy-init form).
        || has!(text, "device >= 0 && device < num_gpus")
        // `torch.load` of tensors saved on a GPU this machine does not show.
        || RE_DESERIALIZE_DEVICE.is_match(text)
    {
        return Some((EnvKind::VisibleDevices, None));
    }
    None
}

/// ethminer's check, with the driver's CUDA version (cudaDriverGetVersion): `CUDA error:
/// Insufficient CUDA driver: 9020`; and applications that name the driver they need:
/// Redshift's `Please make sure you have NVIDIA driver 551.78 or later installed.`
fn application_driver_check(text: &str) -> Option<(EnvKind, Option<String>)> {
    if has!(text, "Insufficient CUDA driver") {
        return Some((
            EnvKind::DriverTooOld,
            RE_INSUFFICIENT_DRIVER_VERSION
                .captures(text)
                .map(|c| c[1].to_owned()),
        ));
    }
    let c = RE_NEEDS_DRIVER.captures(text)?;
    Some((
        EnvKind::DriverTooOld,
        Some(format!("the software needs driver {} or later", &c[1])),
    ))
}

fn nccl(text: &str) -> Option<NcclInfo> {
    if has!(text, "Watchdog caught collective")
        || has!(text, "collective operation timeout")
        || (has!(text, "NCCL") && has!(text, "timed out"))
        || (has!(text, "WorkNCCL") && has!(text, "timing out"))
        // The watchdog's description of the work that timed out, on a line of its own when
        // the message was wrapped (`WorkNCCL(SeqNum=12590, OpType=_ALLGATHER_BASE, ...,`), and
        // PyTorch ≥ 2.3's `Timeout at NCCL work: 12590, last enqueued NCCL work: ...`.
        || has!(text, "WorkNCCL(SeqNum=")
        || has!(text, "Timeout at NCCL work")
        // The watchdog's own stack when the line before it was cut off: `frame #1:
        // c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(...)`.
        || has!(text, "WorkNCCL::checkTimeout")
    {
        return Some(NcclInfo {
            kind: "timeout".to_owned(),
            timeout_ms: RE_NCCL_TIMEOUT_MS.captures(text).and_then(|c| int(&c, 1)),
            version: None,
        });
    }
    // NCCL's bootstrap found no network interface to use (`Bootstrap : no socket interface
    // found`: NCCL_SOCKET_IFNAME names none that exists, or the pod has only loopback).
    if has!(text, "no socket interface found") {
        return Some(NcclInfo {
            kind: "no socket interface found".to_owned(),
            timeout_ms: None,
            version: None,
        });
    }
    if let Some(c) = RE_NCCL_ERROR_IN.captures(text) {
        let kind = c.get(1).map_or("error", |m| m.as_str());
        let kind = kind.split(" (").next().unwrap_or(kind).trim().to_owned();
        return Some(NcclInfo {
            kind,
            timeout_ms: None,
            version: c.get(2).map(|m| m.as_str().to_owned()),
        });
    }
    if has!(text, "NCCL failure")
        && let Some(c) = RE_NCCL_TEST_FAILURE.captures(text)
    {
        return Some(NcclInfo {
            kind: c[1].to_owned(),
            timeout_ms: None,
            version: None,
        });
    }
    if let Some(c) = RE_NCCL_NAME.captures(text) {
        return Some(NcclInfo {
            kind: c[1].to_owned(),
            timeout_ms: None,
            version: None,
        });
    }
    // A build older than the GPU: `NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn
    // maxSharedMem 79856` (NCCL 2.25 on an RTX 5090; it fails to launch its kernels).
    if has!(text, "ncclMaxSharedMem") && has!(text, "exceeds device") {
        return Some(NcclInfo {
            kind: "ncclMaxSharedMem exceeds the GPU's shared memory (an NCCL release older than the GPU)"
                .to_owned(),
            timeout_ms: None,
            version: None,
        });
    }
    if ((has!(text, "NCCL WARN") || (has!(text, " WARN ") && RE_NCCL_SOURCE_WARN.is_match(text)))
        && (has!(text, "failed")
            || has!(text, "rror")
            || has!(text, "failure")
            // `NCCL WARN NET/IB : Unable to open device erdma_1`.
            || has!(text, "Unable to")))
        || (has!(text, "shared memory segment") && has!(text, "nccl"))
    {
        let kind = if has!(text, "shm") || has!(text, "shared memory") {
            "shared memory (/dev/shm) failure"
        } else {
            "NCCL WARN"
        };
        return Some(NcclInfo {
            kind: kind.to_owned(),
            timeout_ms: None,
            version: None,
        });
    }
    // NCCL's trace of an error code returned up its call stack, which follows a warning that
    // may name no failure (`NCCL WARN Message truncated : received 256 bytes instead of 4`):
    // `NCCL INFO bootstrap.cc:554 -> 3`.
    if has!(text, " -> ")
        && let Some(c) = RE_NCCL_RETURN.captures(text)
    {
        let kind = match &c[1] {
            "1" => "ncclUnhandledCudaError",
            "2" => "ncclSystemError",
            "3" => "ncclInternalError",
            "4" => "ncclInvalidArgument",
            "5" => "ncclInvalidUsage",
            _ => "ncclRemoteError",
        };
        return Some(NcclInfo {
            kind: kind.to_owned(),
            timeout_ms: None,
            version: None,
        });
    }
    // Horovod and TensorFlow: `ncclCommInitRank failed: unhandled cuda error`.
    if let Some((_, why)) = text.split_once("ncclCommInitRank failed: ") {
        return Some(NcclInfo {
            // The reason ends the line; keep a sane length of it.
            kind: why.trim().chars().take(120).collect(),
            timeout_ms: None,
            version: None,
        });
    }
    if has!(text, "NCCL communicator was aborted")
        || has!(text, "NCCL error")
        // Paddle: `(External)  Nccl error, unhandled cuda error`.
        || has!(text, "Nccl error")
        || has!(text, "NCCL Error")
    {
        return Some(NcclInfo {
            kind: "error".to_owned(),
            timeout_ms: None,
            version: None,
        });
    }
    None
}

/// The host running out of memory, which kills GPU jobs as surely as the GPU does but needs
/// other fixes.
/// TensorFlow's placer: `Cannot assign a device for operation MatMul: Could not satisfy
/// explicit device specification '/device:GPU:0' because no supported kernel for GPU devices
/// is available`, TF1's `... because the node was colocated with a group of nodes that
/// required incompatible device`, and `... because no devices matching that specification are
/// registered in this process`.
fn tf_placement(text: &str) -> Option<ObsKind> {
    if !has!(text, "Could not satisfy explicit device specification") {
        return None;
    }
    let no_gpu_kernel = if has!(text, "no supported kernel for GPU devices")
        || has!(
            text,
            "colocated with a group of nodes that required incompatible device",
        ) {
        true
    } else if has!(
        text,
        "no devices matching that specification are registered",
    ) {
        false
    } else {
        return None;
    };
    Some(ObsKind::TfPlacement {
        no_gpu_kernel,
        op: RE_TF_PLACED_OP.captures(text).map(|c| c[1].to_owned()),
    })
}

fn host_memory(text: &str) -> Option<ObsKind> {
    // The kernel (`Out of memory: Killed process 4242 (python)`, a cgroup's `Memory cgroup
    // out of memory: Killed process ...`), and Slurm's report of it (`Detected 1 oom_kill
    // event in StepId=123.batch`, `oom-kill event(s)`).
    if has!(text, "Killed process") && has!(text, "out of memory")
        || has!(text, "Out of memory: Kill")
        || has!(text, "oom_kill event")
        || has!(text, "oom-kill event")
        || has!(text, "OOM Killed")
    {
        let detail = RE_KILLED_PROCESS
            .captures(text)
            .map(|c| format!("{} (pid {})", &c[2], &c[1]));
        return Some(ObsKind::HostMemory {
            what: HostMemoryKind::OomKilled,
            detail,
        });
    }
    // LLVM's `LLVM ERROR: out of memory` is its host allocator giving up (a kernel compiler
    // that runs in the job: OpenCL's, NVRTC's, Triton's), not the GPU's memory.
    if has!(text, "DefaultCPUAllocator: can't allocate memory")
        || has!(text, "DefaultCPUAllocator: not enough memory")
        || has!(text, "_ArrayMemoryError")
        || text.starts_with("LLVM ERROR: out of memory")
    {
        let detail = RE_CPU_ALLOC.captures(text).and_then(|c| {
            c.get(1)
                .and_then(|m| m.as_str().parse::<u64>().ok())
                .map(crate::units::format_bytes)
                .or_else(|| Some(format!("{} {}", c.get(2)?.as_str(), c.get(3)?.as_str())))
        });
        return Some(ObsKind::HostMemory {
            what: HostMemoryKind::AllocFailed,
            detail,
        });
    }
    // PyTorch's DataLoader: `This might be caused by insufficient shared memory (shm)`.
    if has!(text, "insufficient shared memory") {
        return Some(ObsKind::HostMemory {
            what: HostMemoryKind::SharedMemory,
            detail: None,
        });
    }
    None
}

fn kernel(text: &str) -> Option<ObsKind> {
    let pci = || RE_PCI.captures(text).map(|c| c[1].to_owned());
    if let Some(c) = RE_XID.captures(text)
        && let Ok(xid) = c[2].parse::<u32>()
    {
        let detail = c
            .get(3)
            .map(|m| m.as_str().trim().to_owned())
            .filter(|s| !s.is_empty());
        return Some(ObsKind::Xid {
            xid,
            pci: c
                .get(1)
                .map(|m| m.as_str().trim_start_matches("PCI:").to_owned())
                .or_else(pci),
            detail,
        });
    }
    // nvidia-smi's words for a GPU the driver can no longer reach: `Unable to determine the
    // device handle for GPU 0000:0B:00.0: Unknown Error` (or `: GPU is lost`).
    let no_handle =
        has!(text, "Unable to determine the device handle for GPU") && has!(text, "Unknown Error");
    // The PCI core for a device that did not wake up (a passed-through GPU after its VM
    // stopped): `vfio-pci 0000:0a:00.0: Unable to change power state from D3cold to D0, device
    // inaccessible`. Like a GPU that fell off the bus, it is gone until the host resets it.
    let not_woken = has!(text, "from D3cold to D0, device inaccessible");
    if has!(text, "fallen off the bus") || has!(text, "GPU is lost") || no_handle || not_woken {
        return Some(ObsKind::Xid {
            xid: 79,
            pci: pci(),
            detail: Some(text.chars().take(200).collect()),
        });
    }
    if has!(
        text,
        "PCI I/O region assigned to your NVIDIA device is invalid",
    ) {
        return Some(ObsKind::PciBarUnassigned { pci: pci() });
    }
    if has!(text, "reserve [mem")
        && let Some(c) = RE_BAR_BUSY.captures(text)
    {
        return Some(ObsKind::PciBarBusy {
            pci: Some(c[1].to_owned()),
        });
    }
    // The driver's status for a GPU that takes no work until it is reset (after an
    // uncontained error): `Assertion failed: Reset required [NV_ERR_RESET_REQUIRED]`.
    if has!(text, "NV_ERR_RESET_REQUIRED") {
        return Some(ObsKind::GpuResetRequired { pci: pci() });
    }
    // The driver dumps its GSP RPC history when a call to the GPU's firmware times out or
    // fails (Xid 119/120); the dump may be all that was copied.
    if has!(text, "RPC event history (CPU <- GSP)") || has!(text, "RPC history (CPU -> GSP)") {
        return Some(ObsKind::Xid {
            xid: 119,
            pci: pci(),
            detail: Some(
                "GSP RPC history dump (printed when a call to the GPU's firmware fails)".to_owned(),
            ),
        });
    }
    // An oops, a soft lockup or a BUG whose faulting instruction is in NVIDIA's module: the
    // register dump's `RIP: 0010:_raw_q_schedule+0x2f/0xb0 [nvidia_uvm]`. (A call trace's
    // frames in the module only say that it was on the stack.)
    if let Some(rip) = text.split_once("RIP: ").map(|(_, rip)| rip)
        && let Some(module) = rip
            .rsplit_once('[')
            .and_then(|(_, m)| m.strip_suffix(']'))
            .filter(|m| m.starts_with("nvidia"))
    {
        return Some(ObsKind::DriverCrash {
            module: module.to_owned(),
        });
    }
    // The IOMMU refused a device's DMA: with GPUs, peer-to-peer and GPUDirect transfers.
    if (has!(text, "DMAR:") && has!(text, "fault")) || has!(text, "IO_PAGE_FAULT") {
        return Some(ObsKind::IommuFault {
            pci: RE_DMA_DEVICE
                .captures(text)
                .map(|c| c[1].to_owned())
                .or_else(pci),
        });
    }
    // The GSP firmware file of the loaded module's version is not installed: `Direct firmware
    // load for nvidia/570.144/gsp_ga10x.bin failed with error -2`, `RmFetchGspRmImages: No
    // firmware image found`. nouveau's firmware lives under `nvidia/` too, but by chip, not
    // by driver version, and without `/gsp_` (`nvidia/gp107/acr/ucode_load.bin`,
    // `nvidia/ad102/gsp/gsp-535.113.01.bin`).
    let firmware_missing =
        (has!(text, "firmware load for nvidia/") && has!(text, "/gsp_") && has!(text, "failed"))
            || has!(text, "RmFetchGspRmImages: No firmware image found");
    let gsp = has!(text, "Cannot initialize GSP firmware RM")
        || (has!(text, "kgspInitRm") && has!(text, "cannot initialize"))
        // The firmware file of the loaded module's version is not installed: `Direct firmware
        // load for nvidia/570.144/gsp_ga10x.bin failed with error -2`, `RmFetchGspRmImages: No
        // firmware image found`.
        || firmware_missing;
    if gsp || has!(text, "RmInitAdapter failed") || has!(text, "rm_init_adapter failed") {
        return Some(ObsKind::GpuInitFailed {
            gsp,
            firmware_missing,
            pci: pci(),
        });
    }
    let lower = text.to_ascii_lowercase();
    if lower.contains("ecc") && !lower.contains("ecc mode") {
        let uncorrected = lower.contains("uncorrectable")
            || lower.contains("uncorrected")
            || lower.contains("double bit")
            || lower.contains("double-bit")
            || lower.contains("(dbe)");
        let corrected = !uncorrected
            && (lower.contains("correctable")
                || lower.contains("corrected")
                || lower.contains("single bit")
                || lower.contains("single-bit"));
        if (uncorrected || corrected) && (lower.contains("error") || lower.contains("nvrm")) {
            if lower.contains("cudaerror") || lower.contains("cuda error") {
                return None;
            }
            // The host's RAM, not the GPU's: a BMC's event (`Uncorrectable ECC ... @P2-DIMMF1`)
            // or the kernel's EDAC driver (`EDAC MC0: 1 UE ... DIMM#0`).
            if lower.contains("dimm") || lower.contains("edac") {
                return Some(ObsKind::HostEcc {
                    corrected,
                    module: RE_DIMM.find(text).map(|m| m.as_str().to_owned()),
                });
            }
            return Some(ObsKind::Ecc { corrected });
        }
    }
    if has!(text, "AER:") || has!(text, "PCIe Bus Error") {
        let uncorrected = has!(text, "Uncorrected") || has!(text, "Fatal");
        if uncorrected || has!(text, "Corrected") {
            return Some(ObsKind::Aer {
                corrected: !uncorrected,
                pci: pci(),
            });
        }
    }
    // hashcat: `Driver temperature threshold met on GPU #3. Expect reduced performance.`,
    // and its watchdog's `Temperature limit on GPU #3 reached, aborting...`.
    if has!(text, "temperature threshold met")
        || (has!(text, "Temperature limit on GPU") && has!(text, "reached"))
        || has!(text, "Temperature abort trigger")
        || lower.contains("thermal violation")
        || lower.contains("clocks event due to thermal")
        || lower.contains("clocks event due to power")
        || ((lower.contains("hw slowdown")
            || lower.contains("thermal slowdown")
            || lower.contains("power brake"))
            && lower.contains(": active"))
    {
        return Some(ObsKind::ThermalPower);
    }
    if (has!(text, "Slowdown") || has!(text, "slowdown"))
        && (lower.contains("thermal") || lower.contains("power") || lower.contains("hw"))
        && (lower.contains("active") || lower.contains("gpu") || lower.contains("nvrm"))
        && !lower.contains("not active")
    {
        return Some(ObsKind::ThermalPower);
    }
    None
}

/// `10 469767680`: a step and a byte count and nothing else, as `print(step,
/// torch.cuda.memory_allocated())` writes them, with spaces, tabs or a comma between. Such a
/// series is how people watch for a leak, and it has no word the prefilter could find, so
/// the scanner also offers lines that start with a digit here (before any cleaning: this
/// must stay cheap, and it stops at the first byte that is not a digit or a separator).
/// Allocators hand out memory in multiples of 256 (XLA's BFC) or 512 (`PyTorch`) bytes, so a
/// count that is not one, or is under 1 MiB, is some other number.
pub(crate) fn bare_reading(line: &[u8]) -> Option<ObsKind> {
    if !line.first()?.is_ascii_digit() {
        return None;
    }
    // One pass: at most two numbers; a `\r` ends the line's first segment (see the scanner).
    let mut numbers = [0u64; 2];
    let mut digits = [0usize; 2];
    let mut count = 0;
    let mut in_number = false;
    for &b in line {
        match b {
            b'0'..=b'9' => {
                if !in_number {
                    if count == 2 {
                        return None;
                    }
                    count += 1;
                    in_number = true;
                }
                let n = &mut numbers[count - 1];
                *n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
                digits[count - 1] += 1;
            }
            b' ' | b'\t' | b',' => in_number = false,
            b'\r' => break,
            _ => return None,
        }
    }
    let [step, bytes] = numbers;
    (count == 2 && digits[0] <= 9 && bytes >= 1 << 20 && bytes % 256 == 0).then_some(
        ObsKind::MemoryReading {
            bytes,
            step: Some(step),
        },
    )
}

fn memory_reading(text: &str) -> Option<ObsKind> {
    if let Some(c) = RE_SMI_ROW.captures(text) {
        return Some(ObsKind::MemoryReading {
            bytes: int(&c, 1)? * 1024 * 1024,
            step: None,
        });
    }
    if let Some(reading) = bare_reading(text.as_bytes()) {
        return Some(reading);
    }
    let c = RE_MEM_READING.captures(text)?;
    let number = c.get(1)?.as_str();
    let bytes = if let Some(unit) = c.get(2) {
        parse_size(number, unit.as_str())?
    } else {
        // A bare number is bytes only when it is large; "mem: 12" is not a reading.
        let n: u64 = number.replace(',', "").parse().ok()?;
        if n < 1 << 20 {
            return None;
        }
        n
    };
    let step = RE_STEP.captures(text).and_then(|c| int(&c, 1));
    Some(ObsKind::MemoryReading { bytes, step })
}

fn cublas_code(status: &str) -> Option<u32> {
    Some(match status {
        "CUBLAS_STATUS_SUCCESS" => 0,
        "CUBLAS_STATUS_NOT_INITIALIZED" => 1,
        "CUBLAS_STATUS_ALLOC_FAILED" => 3,
        "CUBLAS_STATUS_INVALID_VALUE" => 7,
        "CUBLAS_STATUS_ARCH_MISMATCH" => 8,
        "CUBLAS_STATUS_MAPPING_ERROR" => 11,
        "CUBLAS_STATUS_EXECUTION_FAILED" => 13,
        "CUBLAS_STATUS_INTERNAL_ERROR" => 14,
        "CUBLAS_STATUS_NOT_SUPPORTED" => 15,
        "CUBLAS_STATUS_LICENSE_ERROR" => 16,
        _ => return None,
    })
}

/// cuDNN ≤8 numbers its statuses 0–9ish; cuDNN 9 renumbered them by category (1xxx
/// initialisation, 2xxx bad parameter, 3xxx not supported, 4xxx internal, 5xxx execution).
/// A line that prints a number (`CUDNN_STATUS_... (3000)` or `status 4000`) says which.
/// cuBLAS's status for its number.
fn cublas_status_of(code: u32) -> Option<&'static str> {
    Some(match code {
        1 => "CUBLAS_STATUS_NOT_INITIALIZED",
        3 => "CUBLAS_STATUS_ALLOC_FAILED",
        7 => "CUBLAS_STATUS_INVALID_VALUE",
        8 => "CUBLAS_STATUS_ARCH_MISMATCH",
        11 => "CUBLAS_STATUS_MAPPING_ERROR",
        13 => "CUBLAS_STATUS_EXECUTION_FAILED",
        14 => "CUBLAS_STATUS_INTERNAL_ERROR",
        15 => "CUBLAS_STATUS_NOT_SUPPORTED",
        16 => "CUBLAS_STATUS_LICENSE_ERROR",
        _ => return None,
    })
}

/// cuDNN ≤8's status for its number.
fn cudnn_status_of(code: u32) -> Option<&'static str> {
    Some(match code {
        1 => "CUDNN_STATUS_NOT_INITIALIZED",
        2 => "CUDNN_STATUS_ALLOC_FAILED",
        3 => "CUDNN_STATUS_BAD_PARAM",
        4 => "CUDNN_STATUS_INTERNAL_ERROR",
        5 => "CUDNN_STATUS_INVALID_VALUE",
        6 => "CUDNN_STATUS_ARCH_MISMATCH",
        7 => "CUDNN_STATUS_MAPPING_ERROR",
        8 => "CUDNN_STATUS_EXECUTION_FAILED",
        9 => "CUDNN_STATUS_NOT_SUPPORTED",
        _ => return None,
    })
}

fn cudnn_code(status: &str, text: &str) -> Option<u32> {
    static RE_NUM: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?:\(|code[ =:]*|status[ =:]*)(\d{1,4})\)?"));
    if let Some(n) = RE_NUM.captures(text).and_then(|c| c[1].parse::<u32>().ok()) {
        return Some(n);
    }
    Some(match status {
        "CUDNN_STATUS_SUCCESS" => 0,
        "CUDNN_STATUS_NOT_INITIALIZED" => 1,
        "CUDNN_STATUS_ALLOC_FAILED" => 2,
        "CUDNN_STATUS_BAD_PARAM" => 3,
        "CUDNN_STATUS_INTERNAL_ERROR" => 4,
        "CUDNN_STATUS_INVALID_VALUE" => 5,
        "CUDNN_STATUS_ARCH_MISMATCH" => 6,
        "CUDNN_STATUS_MAPPING_ERROR" => 7,
        "CUDNN_STATUS_EXECUTION_FAILED" => 8,
        "CUDNN_STATUS_NOT_SUPPORTED" => 9,
        "CUDNN_STATUS_LICENSE_ERROR" => 10,
        // cuDNN 9-only names.
        "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH" => 1002,
        "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH" => 1003,
        "CUDNN_STATUS_DEPRECATED" => 1004,
        "CUDNN_STATUS_LICENSE_ERROR_9" => 1005,
        "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED" => 1007,
        "CUDNN_STATUS_BAD_PARAM_NULL_POINTER" => 2002,
        "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER" => 2003,
        "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED" => 2004,
        "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND" => 2005,
        "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT" => 2006,
        "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH" => 2007,
        "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH" => 2008,
        "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES" => 2009,
        "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE" => 2010,
        "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN" => 3001,
        "CUDNN_STATUS_NOT_SUPPORTED_SHAPE" => 3002,
        "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE" => 3003,
        "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT" => 3004,
        "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER" => 3005,
        "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART" => 3006,
        "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH" => 3007,
        "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING" => 3008,
        "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE" => 3009,
        "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT" => 3010,
        "CUDNN_STATUS_NOT_SUPPORTED_PADDING" => 3011,
        "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM" => 3012,
        "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED" => 4001,
        "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE" => 4002,
        "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED" => 4003,
        "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED" => 4004,
        "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM" => 4005,
        "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED" => 4006,
        "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER" => 5001,
        "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS" => 5002,
        "CUDNN_STATUS_EXECUTION_FAILED_CUDART" => 5003,
        "CUDNN_STATUS_EXECUTION_FAILED_CURAND" => 5004,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> ObsKind {
        let mut ctx = Context::default();
        let found = recognize(text, &mut ctx);
        assert_eq!(found.observations.len(), 1, "{text}: {found:?}");
        found
            .observations
            .into_iter()
            .next()
            .map(|(k, _)| k)
            .unwrap()
    }

    #[test]
    fn two_cuda_messages_on_a_line_give_the_tables_first() {
        // The messages are matched in one pass; the entry is still the table's first (700
        // before 716), not the one the line names first.
        match one(
            "RuntimeError: CUDA error: misaligned address, then an illegal memory access was encountered",
        ) {
            ObsKind::CudaError(e) => assert_eq!(e.code, Some(700)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn blender_cycles_words_for_driver_errors() {
        let code = |text: &str| match one(text) {
            ObsKind::CudaError(e) => e.code,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            code("Failed to configure CUDA context (Invalid context)"),
            Some(201)
        );
        assert_eq!(
            code("CUDA error: Launch failed in cuCtxSynchronize(), line 1372"),
            Some(719)
        );
        // 209 is also read as what it means: no kernel for this GPU's architecture.
        let mut ctx = Context::default();
        let found = recognize(
            "CUDA error: No binary for GPU in cuModuleLoad(...)",
            &mut ctx,
        );
        assert!(
            found
                .observations
                .iter()
                .any(|(o, _)| matches!(o, ObsKind::CudaError(e) if e.code == Some(209))),
            "{found:?}"
        );
        assert!(
            found.observations.iter().any(|(o, _)| matches!(
                o,
                ObsKind::Env {
                    env: EnvKind::ArchUnsupported,
                    ..
                }
            )),
            "{found:?}"
        );
        // The words alone, in a sentence, are not an error report.
        let found = recognize("CUDA note: Invalid context handling was improved", &mut ctx);
        assert!(found.observations.is_empty(), "{found:?}");
    }

    fn oom_of(text: &str) -> OomInfo {
        match one(text) {
            ObsKind::Oom(o) => o,
            other => panic!("not an OOM: {other:?}"),
        }
    }

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    #[test]
    fn torch_sentence_form() {
        let o = oom_of(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 10.29 GiB is free. Including non-PyTorch memory, this process has 129.51 GiB memory in use. Of the allocated memory 75.59 GiB is allocated by PyTorch, and 53.41 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
        );
        assert_eq!(o.style, Some(OomStyle::TorchSentence));
        assert_eq!(o.requested_bytes, Some(12 * GIB));
        assert_eq!(o.gpu, Some(0));
        assert_eq!(o.free_bytes, parse_size("10.29", "GiB"));
        assert_eq!(o.reserved_unallocated_bytes, parse_size("53.41", "GiB"));
        assert!(!o.truncated);
    }

    #[test]
    fn torch_21_typo_and_other_process() {
        let o = oom_of(
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 138.00 MiB. GPU 0 has a total capacty of 15.90 GiB of which 8.44 MiB is free. Process 1246069 has 577.00 MiB memory in use. Including non-PyTorch memory, this process has 15.32 GiB memory in use. Of the allocated memory 14.12 GiB is allocated by PyTorch, and 410.41 MiB is reserved by PyTorch but unallocated.",
        );
        assert_eq!(o.requested_bytes, Some(138 * MIB));
        assert_eq!(o.other_processes, vec![(1_246_069, 577 * MIB)]);
        assert_eq!(o.this_process_bytes, parse_size("15.32", "GiB"));
    }

    #[test]
    fn torch_1x_forms() {
        let o = oom_of(
            "RuntimeError: CUDA out of memory. Tried to allocate 152.00 MiB (GPU 0; 31.72 GiB total capacity; 24.89 GiB already allocated; 6.12 MiB free; 30.70 GiB reserved in total by PyTorch)",
        );
        assert_eq!(o.style, Some(OomStyle::TorchReservedTotal));
        assert_eq!(
            o.reserved_unallocated_bytes,
            Some(parse_size("30.70", "GiB").unwrap() - parse_size("24.89", "GiB").unwrap())
        );
        let o = oom_of(
            "RuntimeError: CUDA out of memory. Tried to allocate 16.00 GiB (GPU 0; 11.93 GiB total capacity; 4.00 GiB already allocated; 7.33 GiB free; 179.00 KiB cached)",
        );
        assert_eq!(o.style, Some(OomStyle::TorchCached));
        assert_eq!(o.reserved_unallocated_bytes, Some(179 * 1024));
        let o = oom_of(
            "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58",
        );
        assert_eq!(o.style, Some(OomStyle::TorchThc));
    }

    #[test]
    fn other_frameworks() {
        let o = oom_of(
            "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 322,122,547,200 bytes (allocated so far: 0 bytes).",
        );
        assert_eq!(o.requested_bytes, Some(300 * GIB));
        assert_eq!(o.framework, Some(Framework::Cupy));
        assert_eq!(o.style, Some(OomStyle::Cupy));
        assert_eq!(o.allocated_bytes, Some(0));
        // With a pool limit: the limit and what the pool holds are taken too.
        let o = oom_of(
            "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 805,306,368 bytes (allocated so far: 536,870,912 bytes, limit set to: 1,073,741,824 bytes).",
        );
        assert_eq!(o.style, Some(OomStyle::Cupy));
        assert_eq!(o.requested_bytes, Some(768 * MIB));
        assert_eq!(o.allocated_bytes, Some(512 * MIB));
        assert_eq!(o.allowed_bytes, Some(GIB));
        let o = oom_of(
            "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 300.00GiB with allocator GPU_0_bfc on device 0.",
        );
        assert_eq!(o.requested_bytes, Some(300 * GIB));
        assert_eq!(o.framework, Some(Framework::Jax));
        // jaxlib logs through its vendored copy of TensorFlow's allocator: JAX, not TensorFlow.
        let o = oom_of(
            "2022-08-05 10:00:26.833817: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 9.00MiB (rounded to 9437184)requested by op ",
        );
        assert_eq!(o.framework, Some(Framework::Jax));
        assert_eq!(o.requested_bytes, Some(9 * MIB));
        let o = oom_of(
            "E0000 external/local_xla/xla/tsl/framework/bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB requested by op tensorflow/core/kernels/x.cc",
        );
        assert_eq!(o.framework, Some(Framework::Tensorflow));
        let o = oom_of(
            "ResourceExhaustedError:  OOM when allocating tensor with shape[2048,768] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
        );
        assert_eq!(o.requested_bytes, Some(2048 * 768 * 4));
        let o = oom_of(
            "W bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.25GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
        );
        assert!(o.not_a_failure);
        let o = oom_of(
            "HIP out of memory. Tried to allocate 64.00 GiB. GPU 0 has a total capacity of 63.98 GiB of which 48.63 GiB is free.",
        );
        assert_eq!(o.device_kind.as_deref(), Some("HIP"));
    }

    #[test]
    fn cuda_errors_and_asserts() {
        match one("torch.AcceleratorError: CUDA error: device-side assert triggered") {
            ObsKind::CudaError(e) => {
                assert_eq!(e.code, Some(710));
                assert!(e.sticky);
            }
            other => panic!("{other:?}"),
        }
        match one("RuntimeError: cuda runtime error (59) : device-side assert triggered at x.cu:1")
        {
            ObsKind::CudaError(e) => assert_eq!(e.code, Some(710)),
            other => panic!("{other:?}"),
        }
        match one(
            "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1515: indexSelectSmallIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        ) {
            ObsKind::DeviceAssert {
                assertion,
                location,
            } => {
                assert_eq!(assertion, "srcIndex < srcSelectDimSize");
                assert_eq!(
                    location.as_deref(),
                    Some("Indexing.cu:1515 indexSelectSmallIndex")
                );
            }
            other => panic!("{other:?}"),
        }
        match one(
            "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
        ) {
            ObsKind::CudaError(e) => assert_eq!(e.code, Some(700)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn more_cuda_error_shapes() {
        match one("RuntimeError: CUDA driver error: device not ready") {
            ObsKind::CudaError(e) => assert_eq!(e.code, Some(600)),
            other => panic!("{other:?}"),
        }
        match one("CUDA error = 999at main.cu:196'cudaDeviceSynchronize()/n") {
            ObsKind::CudaError(e) => assert_eq!(e.code, Some(999)),
            other => panic!("{other:?}"),
        }
        match one(
            "Check failed: err == CUBLAS_STATUS_SUCCESS (1 vs. 0) : Create cublas handle failed",
        ) {
            ObsKind::Cublas(s) => assert_eq!(s.status, "CUBLAS_STATUS_NOT_INITIALIZED"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            one("[0] Tesla V100-SXM2-16GB | 44'C,   0 % | 15836 / 16130 MB |"),
            ObsKind::GpuMemory { gpu: Some(0), .. }
        ));
    }

    #[test]
    fn smi_memory_rows_take_their_index_from_the_table() {
        // A 2018 table: the index rows name no trigger word, so only the header and the
        // memory rows are read.
        let table = [
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
            "| 23%   34C    P8    19W / 250W |  11004MiB / 11178MiB |      0%      Default |",
            "| 23%   38C    P8    20W / 250W |  10766MiB / 11178MiB |      0%      Default |",
            "| 23%   38C    P8    21W / 250W |    432MiB / 11178MiB |      0%      Default |",
            "|  GPU       PID   Type   Process name                             Usage      |",
        ];
        let mut ctx = Context::default();
        let gpus: Vec<Option<u32>> = table
            .iter()
            .flat_map(|line| recognize(line, &mut ctx).observations)
            .filter_map(|(k, _)| match k {
                ObsKind::GpuMemory { gpu, .. } => Some(gpu),
                _ => None,
            })
            .collect();
        assert_eq!(gpus, vec![Some(0), Some(1), Some(2)]);
        assert_eq!(
            ctx.smi_next_gpu, None,
            "the process table ends the device rows"
        );
    }

    #[test]
    fn kernel_lines() {
        match one(
            "[ 123.4] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        ) {
            ObsKind::Xid { xid, pci, .. } => {
                assert_eq!(xid, 79);
                assert_eq!(pci.as_deref(), Some("0000:05:00"));
            }
            other => panic!("{other:?}"),
        }
        // nvidia-smi cannot reach the GPU any more: the same state as Xid 79.
        match one("Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error") {
            ObsKind::Xid { xid, pci, .. } => {
                assert_eq!(xid, 79);
                assert_eq!(pci.as_deref(), Some("0000:0B:00.0"));
            }
            other => panic!("{other:?}"),
        }
        match one("NVRM: Xid (0000:03:00): 14, Channel 00000001") {
            ObsKind::Xid { xid, .. } => assert_eq!(xid, 14),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            one("pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0"),
            ObsKind::Aer {
                corrected: false,
                ..
            }
        ));
    }

    #[test]
    fn env_messages() {
        assert!(matches!(
            one(
                "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"
            ),
            ObsKind::Env {
                env: EnvKind::LibMissing,
                ..
            }
        ));
        assert!(matches!(
            one("Failed to initialize NVML: Driver/library version mismatch"),
            ObsKind::Env {
                env: EnvKind::NvmlMismatch,
                ..
            }
        ));
        assert!(matches!(
            one("torch.AcceleratorError: CUDA error: invalid device ordinal"),
            ObsKind::Env {
                env: EnvKind::VisibleDevices,
                ..
            }
        ));
    }

    #[test]
    fn tensorflow_cudnn_could_not_start() {
        match one(
            "tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.",
        ) {
            ObsKind::Cudnn(s) => assert_eq!(s.status, "HANDLE_CREATION_FAILED"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn driver_and_device_messages_of_cuda_11_and_later() {
        let env_of = |text: &str| match one(text) {
            ObsKind::Env { env, detail } => (env, detail),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            env_of(
                "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination"
            ),
            (EnvKind::DriverTooOld, Some("error 803".to_owned()))
        );
        assert_eq!(
            env_of(
                "RuntimeError: jaxlib/cuda/versions_helpers.cc:98: operation cuInit(0) failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
            ),
            (EnvKind::DriverTooOld, Some("error 803".to_owned()))
        );
        assert_eq!(
            env_of(
                "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW"
            ),
            (EnvKind::DriverTooOld, Some("error 804".to_owned()))
        );
        assert_eq!(
            env_of(
                "NVRM: API mismatch: the client has the version 535.129.03, but this kernel module has the version 535.113.01.  Please make sure that this kernel module and all NVIDIA driver components have the same version."
            ),
            (EnvKind::NvmlMismatch, None)
        );
        assert_eq!(
            env_of(
                "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown."
            ),
            (EnvKind::NoDriver, None)
        );
        assert_eq!(
            env_of("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"),
            (
                EnvKind::VisibleDevices,
                Some(detail::DEVICES_BUSY.to_owned())
            )
        );
    }

    #[test]
    fn more_install_and_visibility_messages() {
        let env_of = |text: &str| match one(text) {
            ObsKind::Env { env, detail } => (env, detail),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            env_of(
                "OSError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"
            ),
            (
                EnvKind::LibMismatch,
                Some("libnccl (lacks ncclCommRegister)".to_owned())
            )
        );
        assert_eq!(
            env_of(
                "The detected CUDA version (12.1) mismatches the version that was used to compile"
            ),
            (
                EnvKind::LibMismatch,
                Some("CUDA toolkit 12.1 (not the one PyTorch was built with)".to_owned())
            )
        );
        assert_eq!(
            env_of(
                "torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at \"../aten/src/ATen/cuda/CUDAContext.cpp\":50, please report a bug to PyTorch."
            ),
            (EnvKind::VisibleDevices, None)
        );
        assert_eq!(
            env_of(
                "RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device."
            ),
            (EnvKind::VisibleDevices, None)
        );
        assert_eq!(
            env_of(
                "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero."
            ),
            (EnvKind::NoDriver, Some("nvidia_uvm".to_owned()))
        );
        assert_eq!(
            env_of("CUDA used to build PyTorch: None"),
            (EnvKind::TorchCpuBuild, None)
        );
        for (line, want) in [
            (
                "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:296] kernel version 352.63.0 does not match DSO version 361.93.2 -- cannot find working devices in this configuration",
                (
                    EnvKind::NvmlMismatch,
                    Some("kernel module 352.63.0, libcuda 361.93.2".to_owned()),
                ),
            ),
            ("nvmlInit_v2 err: 18", (EnvKind::NvmlMismatch, None)),
            (
                "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).",
                (EnvKind::NoDriver, Some(detail::NOUVEAU.to_owned())),
            ),
            (
                "Failed to initialize NVML: Unknown Error",
                (EnvKind::VisibleDevices, Some("device access".to_owned())),
            ),
            (
                "W tensorflow/compiler/xla/service/gpu/llvm_gpu_backend/nvptx_backend_lib.cc:135] Unknown compute capability (7, 5) .Defaulting to telling LLVM that we're compiling for sm_30",
                (EnvKind::ArchUnsupported, Some("sm_75".to_owned())),
            ),
            (
                "LLVM ERROR: PTX version 8.5 does not support target 'sm_120' (or 'sm_120a'). Minimum required PTX version is 8.7",
                (EnvKind::ArchUnsupported, Some("sm_120".to_owned())),
            ),
            (
                "/root/torch/install/share/lua/5.1/cudnn/ffi.lua:1278: 'libcudnn (R4) not found in library path.",
                (EnvKind::LibMissing, Some("libcudnn".to_owned())),
            ),
            (
                "Error: Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion at (/paddle/paddle/fluid/platform/dynload/cudnn.cc:63)",
                (EnvKind::LibMissing, Some("libcudnn".to_owned())),
            ),
            (
                "Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice. This may result",
                (EnvKind::LibMissing, Some(detail::XLA_CUDA_DIR.to_owned())),
            ),
            (
                "No OpKernel was registered to support Op 'NcclAllReduce' used by {{node NcclAllReduce}} with these attrs: [reduction=\"sum\"]",
                (
                    EnvKind::LibMissing,
                    Some("NCCL (this TensorFlow build has none)".to_owned()),
                ),
            ),
            (
                "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7201 (compatibility version 7200) but source was compiled with 7004 (compatibility version 7000).  If using a binary install, upgrade your CuDNN library to match.",
                (
                    EnvKind::LibMismatch,
                    Some("cuDNN 7201 (built with 7004)".to_owned()),
                ),
            ),
        ] {
            assert_eq!(env_of(line), want, "{line}");
        }
        for (line, want) in [
            (
                "Ignoring visible gpu device (device: 0, name: GeForce GTX 660M, pci bus id: 0000:01:00.0, compute capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.",
                (EnvKind::ArchUnsupported, Some("needs sm_35".to_owned())),
            ),
            (
                "2024/01/14 19:50:06 gpu.go:138: CUDA GPU is too old. Falling back to CPU mode. Compute Capability detected: 5.2",
                (EnvKind::ArchUnsupported, None),
            ),
            (
                "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:140] kernel driver does not appear to be running on this host (gzhao-b1208): /proc/driver/nvidia/version does not exist",
                (EnvKind::NoDriver, None),
            ),
            (
                "NVIDIA: could not open the device file /dev/nvidiactl (No such file or ",
                (EnvKind::NoDriver, None),
            ),
            (
                "nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0, please update your driver",
                (
                    EnvKind::DriverTooOld,
                    Some("image needs CUDA 9.0".to_owned()),
                ),
            ),
            (
                "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.",
                (
                    EnvKind::VisibleDevices,
                    Some("container without GPUs".to_owned()),
                ),
            ),
            (
                "Error response from daemon: unknown or invalid runtime name: nvidia",
                (
                    EnvKind::VisibleDevices,
                    Some("container without GPUs".to_owned()),
                ),
            ),
        ] {
            assert_eq!(env_of(line), want, "{line}");
        }
        for (line, want) in [
            (
                "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
                (
                    EnvKind::VisibleDevices,
                    Some("container without GPUs".to_owned()),
                ),
            ),
            (
                "W tensorflow/stream_executor/cuda/cuda_driver.cc:312] failed call to cuInit: UNKNOWN ERROR (303)",
                (
                    EnvKind::VisibleDevices,
                    Some("container without GPUs".to_owned()),
                ),
            ),
            (
                "NVML ERROR: RM has detected an NVML/RM version mismatch.",
                (EnvKind::NvmlMismatch, None),
            ),
            (
                "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version 384.90.0 does not match DSO versio",
                (
                    EnvKind::NvmlMismatch,
                    Some("kernel module 384.90.0".to_owned()),
                ),
            ),
            (
                "DNN library is not found.",
                (EnvKind::LibMissing, Some("libcudnn".to_owned())),
            ),
        ] {
            assert_eq!(env_of(line), want, "{line}");
        }
        // MXNet prints the expected status first.
        match one(
            "Check failed: err == CUDNN_STATUS_SUCCESS (1 vs. 0) CUDNN_STATUS_NOT_INITIALIZED",
        ) {
            ObsKind::Cudnn(s) => assert_eq!(s.status, "CUDNN_STATUS_NOT_INITIALIZED"),
            other => panic!("{other:?}"),
        }
        for line in [
            "UnknownError (see above for traceback): ncclCommInitRank failed: unhandled cuda error",
            "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'",
        ] {
            assert!(matches!(one(line), ObsKind::Nccl(_)), "{line}");
        }
        match one(
            "[12:44:34] src/storage/./pooled_storage_manager.h:84: cudaMalloc failed: out of memory",
        ) {
            ObsKind::Oom(o) => assert_eq!(o.style, Some(OomStyle::CudaCall)),
            other => panic!("{other:?}"),
        }
        // numba numbers the driver API's errors in brackets.
        match one(
            "numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuMemcpyDtoH results in UNKNOWN_CUDA_ERROR",
        ) {
            ObsKind::CudaError(e) => assert_eq!(e.code, Some(700)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kernel_lines_that_name_an_earlier_fault() {
        let mut ctx = Context::default();
        // Xid 45 is the cleanup; the driver names the NVLink error that caused it.
        let found = recognize(
            "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
            &mut ctx,
        );
        let xids: Vec<u32> = found
            .observations
            .iter()
            .filter_map(|(k, _)| match k {
                ObsKind::Xid { xid, .. } => Some(*xid),
                _ => None,
            })
            .collect();
        assert_eq!(xids, vec![45, 149]);
        match one("[   84.738339] NVRM: GPU6 RPC event history (CPU <- GSP):") {
            ObsKind::Xid { xid, .. } => assert_eq!(xid, 119),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_oom_while_the_context_is_created() {
        match one(
            "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:0 failed. Status: out of memory",
        ) {
            ObsKind::Oom(o) => {
                assert_eq!(o.style, Some(OomStyle::ContextInit));
                assert_eq!(o.gpu, Some(0));
            }
            other => panic!("{other:?}"),
        }
        // JAX on an H200 that another process filled (validation/explain-init.sh).
        match one(
            "E1130 01:36:02.795996     623 platform_util.cc:279] Failed to create stream executor for device CUDA:0: : CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        ) {
            ObsKind::Oom(o) => {
                assert_eq!(o.style, Some(OomStyle::ContextInit));
                assert_eq!(o.gpu, Some(0));
            }
            other => panic!("{other:?}"),
        }
        match one(
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:936] failed to create context: CUDA_ERROR_OUT_OF_MEMORY; failed call to cuCtxCreate",
        ) {
            ObsKind::Oom(o) => assert_eq!(o.style, Some(OomStyle::ContextInit)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn host_memory_is_not_gpu_memory() {
        let host = |text: &str| match one(text) {
            ObsKind::HostMemory { what, detail } => (what, detail),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            host(
                "[12345.678901] Out of memory: Killed process 4242 (python) total-vm:123456789kB, anon-rss:98765432kB, file-rss:0kB"
            ),
            (
                HostMemoryKind::OomKilled,
                Some("python (pid 4242)".to_owned())
            )
        );
        assert_eq!(
            host(
                "Memory cgroup out of memory: Killed process 777 (python3) total-vm:50000000kB, anon-rss:30000000kB"
            ),
            (
                HostMemoryKind::OomKilled,
                Some("python3 (pid 777)".to_owned())
            )
        );
        assert_eq!(
            host(
                "slurmstepd: error: Detected 1 oom_kill event in StepId=123.batch. Some of the step tasks have been OOM Killed."
            ),
            (HostMemoryKind::OomKilled, None)
        );
        assert_eq!(
            host(
                "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 34359738368 bytes. Error code 12 (Cannot allocate memory)"
            ),
            (HostMemoryKind::AllocFailed, Some("32.00 GiB".to_owned()))
        );
        assert_eq!(
            host(
                "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 28.6 GiB for an array with shape (100000, 76800) and data type float32"
            ),
            (HostMemoryKind::AllocFailed, Some("28.6 GiB".to_owned()))
        );
        assert_eq!(
            host(
                "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."
            ),
            (HostMemoryKind::SharedMemory, None)
        );
    }

    #[test]
    fn wrong_library_versions_and_newer_gpus_needed() {
        let env_of = |text: &str| match one(text) {
            ObsKind::Env { env, detail } => (env, detail),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            env_of(
                "OSError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cublas/lib/libcublas.so.11: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11"
            ),
            (EnvKind::LibMismatch, Some("libcublasLt.so.11".to_owned()))
        );
        assert_eq!(
            env_of(
                "OSError: /home/u/env/lib/python3.10/site-packages/nvidia/cublas/lib/libcublas.so.11: symbol cublasLtHSHMatmulAlgoInit version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference"
            ),
            (EnvKind::LibMismatch, Some("libcublasLt.so.11".to_owned()))
        );
        assert_eq!(
            env_of(
                "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching major version and equal or higher minor version."
            ),
            (
                EnvKind::LibMismatch,
                Some("cuDNN 8.5.0 (built with 8.6.0)".to_owned())
            )
        );
        assert_eq!(
            env_of(
                "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1956] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU."
            ),
            (EnvKind::LibMissing, None)
        );
        assert_eq!(
            env_of(
                "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory"
            ),
            (
                EnvKind::LibMissing,
                Some("libcudnn_cnn_infer.so.8".to_owned())
            )
        );
        assert_eq!(
            env_of("RuntimeError: FlashAttention only supports Ampere GPUs or newer."),
            (EnvKind::ArchUnsupported, Some("needs sm_80".to_owned()))
        );
        assert_eq!(
            env_of(
                "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5."
            ),
            (EnvKind::ArchUnsupported, Some("needs sm_80".to_owned()))
        );
        assert_eq!(
            env_of(
                "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is newer. The copy of cuDNN that is installed must be at least as new as the version against which JAX was built."
            ),
            (
                EnvKind::LibMismatch,
                Some("cuDNN 8600 (built with 8906)".to_owned())
            )
        );
        assert_eq!(
            env_of(
                "I0105 14:05:05.749943 140453630969664 xla_bridge.py:660] Unable to initialize backend 'cuda': Found cuSOLVER version 11002, but JAX was built against version 11401, which is newer."
            ),
            (
                EnvKind::LibMismatch,
                Some("cuSOLVER 11002 (built with 11401)".to_owned())
            )
        );
        assert_eq!(
            env_of("E   Outdated cuDNN installation found."),
            (
                EnvKind::LibMismatch,
                Some("cuDNN (older than the build needs)".to_owned())
            )
        );
        match one(
            "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.",
        ) {
            ObsKind::Cudnn(s) => assert_eq!(s.status, "HANDLE_CREATION_FAILED"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nccl_tests_failure_line() {
        // nccl-tests' own wording, with the file and line of the failing check.
        match one("NCCL failure common.cu:874 'unhandled system error'") {
            ObsKind::Nccl(n) => assert_eq!(n.kind, "unhandled system error"),
            other => panic!("{other:?}"),
        }
        match one("fastmoe: Test NCCL failure common.cu:777 'unhandled system error'") {
            ObsKind::Nccl(n) => assert_eq!(n.kind, "unhandled system error"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn memory_readings() {
        assert_eq!(
            one("step 120 | loss 2.31 | mem: 12.5G"),
            ObsKind::MemoryReading {
                bytes: parse_size("12.5", "G").unwrap(),
                step: Some(120)
            }
        );
        // A bare `step bytes` pair, as `print(step, torch.cuda.memory_allocated())` writes it.
        assert_eq!(
            one("10 469767680"),
            ObsKind::MemoryReading {
                bytes: 469_767_680,
                step: Some(10)
            }
        );
        assert_eq!(
            one("20, 805317120"),
            ObsKind::MemoryReading {
                bytes: 805_317_120,
                step: Some(20)
            }
        );
        // Not byte counts: too small, not a multiple of 256, a third column.
        for text in ["10 4096", "10 469767681", "10 469767680 3"] {
            let mut ctx = Context::default();
            assert!(recognize(text, &mut ctx).observations.is_empty(), "{text}");
        }
        assert_eq!(
            one("2026/11/29 18:50:39.033, 2719 MiB"),
            ObsKind::MemoryReading {
                bytes: 2719 * MIB,
                step: None
            }
        );
    }
}
