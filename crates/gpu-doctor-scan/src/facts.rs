//! What the scanner found: [`LogFacts`], a bounded, typed list of [`Observation`]s.
//!
//! The types here are plain data for the rules. They say what a line *is* (an OOM message
//! with its numbers, a CUDA error with its code) and never what it *means*: deciding that an
//! OOM is fragmentation or that an error is a knock-on is the rules' job.

use serde::Serialize;
use std::collections::BTreeSet;

/// The framework or layer that printed a line, as far as the line itself tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    Pytorch,
    Tensorflow,
    Jax,
    Cupy,
    /// The CUDA runtime or driver API used directly (or a library whose name is unknown).
    Cuda,
    Nccl,
    /// The kernel log (`NVRM`, `PCIe` AER, ...).
    Kernel,
    Other,
}

impl Framework {
    pub fn as_str(self) -> &'static str {
        match self {
            Framework::Pytorch => "pytorch",
            Framework::Tensorflow => "tensorflow",
            Framework::Jax => "jax",
            Framework::Cupy => "cupy",
            Framework::Cuda => "cuda",
            Framework::Nccl => "nccl",
            Framework::Kernel => "kernel",
            Framework::Other => "other",
        }
    }
}

/// Which shape of out-of-memory message a line has. The shapes carry different numbers and
/// some numbers change meaning between them (1.0's "cached" is reserved-but-unused, 1.4's
/// "reserved in total" is all reserved memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OomStyle {
    /// `PyTorch` ≤0.4: `cuda runtime error (2) : out of memory`.
    TorchThc,
    /// `PyTorch` 1.0–1.3: `(GPU 0; X total capacity; Y already allocated; Z free; W cached)`.
    TorchCached,
    /// `PyTorch` 1.4–2.0: `...; W reserved in total by PyTorch)`.
    TorchReservedTotal,
    /// `PyTorch` 2.1+: the sentence form (`GPU 0 has a total capacity of ...`).
    TorchSentence,
    /// `PyTorch` with `backend:cudaMallocAsync`: `Allocation on device 0 would exceed allowed memory`.
    TorchMallocAsync,
    /// `CUDA error: out of memory` from a CUDA call outside the caching allocator.
    CudaCall,
    /// Apple's MPS backend.
    TorchMps,
    /// `TensorFlow`: `OOM when allocating tensor with shape[...]`.
    TfOpKernel,
    /// The BFC allocator (`TensorFlow` and JAX): `Allocator (GPU_0_bfc) ran out of memory trying to allocate`.
    Bfc,
    /// JAX/XLA: `RESOURCE_EXHAUSTED: Out of memory while trying to allocate`.
    Xla,
    /// `CuPy`: `OutOfMemoryError: Out of memory allocating N bytes (allocated so far: M bytes)`.
    Cupy,
    /// NCCL: `Cuda failure 2 'out of memory'`.
    Nccl,
    /// cuBLAS/cuDNN could not get memory (`CUBLAS_STATUS_ALLOC_FAILED`).
    Library,
    /// Creating the CUDA context itself ran out of memory (`CUDA runtime implicit
    /// initialization on GPU:0 failed. Status: out of memory`, `cuCtxCreate:
    /// CUDA_ERROR_OUT_OF_MEMORY`): the process had not allocated anything yet.
    ContextInit,
    /// vLLM: the memory left for the KV cache holds fewer tokens than the model's context
    /// (`The model's max seq len (4096) is larger than the maximum number of tokens that can be
    /// stored in KV cache (3664)`, `No available memory for the cache blocks`).
    KvCache,
    /// Triton: a kernel's block needs more on-chip shared memory than the GPU has (`out of
    /// resource: shared memory, Required: 131072, Hardware limit: 101376`).
    SharedMemory,
    /// TensorRT's builder: `Error Code 2: OutOfMemory`, and `Skipping tactic ... due to
    /// insufficient memory` (marked not a failure). While it picks tactics it reports each one
    /// that did not fit with the error, then skips it and goes on.
    TensorRtBuilder,
    /// Anything else that plainly says out of memory.
    Generic,
}

/// An out-of-memory message with every number it carried, in bytes. Absent numbers are
/// `None`, never 0.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct OomInfo {
    pub framework: Option<Framework>,
    pub style: Option<OomStyle>,
    /// `CUDA`, `HIP`, `XPU`, `MPS`, ... when the message names it.
    pub device_kind: Option<String>,
    /// The device ordinal the message names (the CUDA ordinal, not the `NVML` index).
    pub gpu: Option<u32>,
    pub requested_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// All memory this process holds on the GPU, `PyTorch's` and everything else's (`NVML`).
    pub this_process_bytes: Option<u64>,
    /// Memory handed out to tensors by the framework's allocator.
    pub allocated_bytes: Option<u64>,
    /// Reserved by the allocator but not handed out (`PyTorch` ≥2.1 states it; older messages
    /// are converted).
    pub reserved_unallocated_bytes: Option<u64>,
    /// All memory reserved by the allocator, when the message gives it.
    pub reserved_total_bytes: Option<u64>,
    /// The per-process limit (`set_per_process_memory_fraction`, a pool limit).
    pub allowed_bytes: Option<u64>,
    /// Memory in private pools (CUDA graphs).
    pub private_pool_bytes: Option<u64>,
    /// Other processes on the GPU and what they hold (`PyTorch` ≥2.1 via `NVML`).
    pub other_processes: Vec<(u32, u64)>,
    /// The `TensorFlow` "ran out of memory ... this is not a failure" warning.
    pub not_a_failure: bool,
    /// The message ended before its numbers did (cut by a log collector or a terminal).
    pub truncated: bool,
    /// The evaluation function (`validate`, `evaluation_loop`) that the Python traceback
    /// before the message passed through, when it passed through one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub during_evaluation: Option<String>,
}

/// A CUDA runtime or driver error, as named or numbered in the line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CudaErrorInfo {
    /// The runtime enum value (`cudaError_t`), when known.
    pub code: Option<u32>,
    /// `cudaErrorIllegalAddress` style name, when known.
    pub name: Option<String>,
    /// The human string (`an illegal memory access was encountered`).
    pub message: Option<String>,
    /// The error corrupts the CUDA context: the process must be restarted.
    pub sticky: bool,
}

/// A status code from cuBLAS or cuDNN.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LibStatus {
    /// `CUBLAS_STATUS_ALLOC_FAILED`, `CUDNN_STATUS_NOT_INITIALIZED`, ...
    pub status: String,
    pub code: Option<u32>,
    /// The call it came from (`cublasCreate(handle)`), when printed.
    pub call: Option<String>,
}

impl LibStatus {
    /// The status of a failure whose message does not name it (DyNet's `CUBLAS failure in
    /// cublasSgemm(...)`, which prints the number on a line of its own).
    pub const UNKNOWN: &'static str = "unknown";
}

/// An NCCL failure or a collective that timed out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NcclInfo {
    /// `unhandled cuda error`, `ncclSystemError`, `timeout`, ...
    pub kind: String,
    /// The watchdog timeout in milliseconds, for timeouts.
    pub timeout_ms: Option<u64>,
    /// The NCCL version, when printed.
    pub version: Option<String>,
}

/// Driver and installation problems that a message names outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvKind {
    /// The driver is older than the CUDA runtime (`driver ... too old`, error 35, PTX 222).
    DriverTooOld,
    /// A CPU-only `PyTorch` (`Torch not compiled with CUDA enabled`).
    TorchCpuBuild,
    /// No kernel for this GPU's architecture (`sm_XX is not compatible`, error 209).
    ArchUnsupported,
    /// A CUDA library cannot be loaded (`libcudart.so.12: cannot open shared object file`).
    LibMissing,
    /// A CUDA library loads but is not the version the software was built against
    /// (`undefined symbol: ..., version libcublasLt.so.11`, `Loaded runtime CuDNN library:
    /// 8.5.0 but source was compiled with: 8.6.0`).
    LibMismatch,
    /// `Driver/library version mismatch` (`NVML`).
    NvmlMismatch,
    /// No driver, or the driver is not loaded (`couldn't communicate with the NVIDIA driver`).
    NoDriver,
    /// The device the job asked for is not visible (`invalid device ordinal`, `No CUDA GPUs are available`).
    VisibleDevices,
}

/// Details of an [`ObsKind::Env`] that pick a rule's variant: the scanner writes them and the
/// rules match on them, so both name them from here. (Other details carry a value: a driver
/// version, an `sm_XX`, a library's file name.)
pub mod detail {
    /// The CPU-only build of a framework (GD541's variants).
    pub const PYTORCH_CPU: &str = "pytorch";
    pub const TENSORFLOW_CPU: &str = "tensorflow";
    pub const CONDA_CPU: &str = "conda";
    pub const JAX_CPU: &str = "jax";
    /// nouveau, the open-source driver, holds the GPU instead of NVIDIA's (`lspci -k`'s
    /// `Kernel driver in use: nouveau`, the kernel's `NVIDIA probe routine was not called`).
    pub const NOUVEAU: &str = "nouveau holds the GPU";
    /// Docker refused the GPU request itself: a count and device IDs together.
    pub const DOCKER_GPU_REQUEST: &str = "docker GPU request";
    /// Slurm found fewer GPUs on the node than configured, but not none.
    pub const GPUS_MISSING: &str = "fewer GPUs than configured";
    /// A virtual GPU without a license (`License Status : Unlicensed`).
    pub const VGPU_UNLICENSED: &str = "vGPU unlicensed";
    /// OpenCL found no device on a platform (`clGetDeviceIDs(): CL_DEVICE_NOT_FOUND`).
    pub const OPENCL_NO_DEVICE: &str = "OpenCL platform without a device";
    /// The `nvidia_uvm` module is not loaded (CUDA error 999 with a driver present).
    pub const NVIDIA_UVM: &str = "nvidia_uvm";
    /// CUDA errors 803 and 804: which libcuda meets which kernel driver.
    pub const ERROR_803: &str = "error 803";
    pub const ERROR_804: &str = "error 804";
    /// GD546's variants.
    pub const DEVICE_ACCESS_LOST: &str = "device access";
    pub const JAX_NO_GPU: &str = "JAX found no GPU";
    pub const CDI_UNRESOLVED: &str = "CDI";
    pub const DUPLICATE_GPU: &str = "duplicate GPU";
    pub const NO_GPU_ENUMERATED: &str = "no GPU enumerated";
    pub const CONTAINER_WITHOUT_GPUS: &str = "container without GPUs";
    /// CUDA 46 (`all CUDA-capable devices are busy or unavailable`): the GPU is visible but
    /// refuses new work.
    pub const DEVICES_BUSY: &str = "devices busy or unavailable";
    /// CUDA 100 (`no CUDA-capable device is detected`): the driver answered but showed no GPU.
    pub const NO_CUDA_DEVICE: &str = "no CUDA-capable device";
    /// Starts the detail of torchvision/torchaudio built for another CUDA than PyTorch.
    pub const COMPANION_BUILD: &str = "a torchvision/torchaudio build";
    /// Starts the detail of a CUDA toolkit other than the one PyTorch was built with.
    pub const CUDA_TOOLKIT: &str = "CUDA toolkit";
    /// Starts the detail of XLA's warning that the driver is older than its PTX compiler.
    pub const XLA_PTX_COMPILER: &str = "XLA's PTX compiler";
    /// JAX before 0.4.14 fell back to the CPU (`No GPU/TPU found, falling back to CPU`).
    pub const JAX_CPU_FALLBACK: &str = "JAX fell back to the CPU";
    /// TensorFlow has no kernels for the GPU's compute capability and JIT-compiles its PTX.
    pub const PTX_JIT_ONLY: &str = "only PTX to JIT-compile for";
    /// onnxruntime lists no CUDA provider: its CPU-only package is installed (or shadows the
    /// GPU one).
    pub const ONNXRUNTIME_CPU: &str = "onnxruntime";
    /// onnxruntime-gpu could not create its CUDA provider: the CUDA or cuDNN its release was
    /// built for is missing (GD543's variant).
    pub const ORT_CUDA_PROVIDER: &str = "onnxruntime's CUDA provider";
    /// The container runtime refused `NVIDIA_VISIBLE_DEVICES` from an unprivileged container.
    pub const VISIBLE_DEVICES_ENVVAR_REFUSED: &str = "NVIDIA_VISIBLE_DEVICES refused";
    /// Starts the detail of another package built without CUDA (`This CTranslate2 package was
    /// not compiled with CUDA support`, `XGBoost version not compiled with GPU support`); the
    /// package's name follows.
    pub const PACKAGE_WITHOUT_CUDA: &str = "built without CUDA: ";
    /// A CPU-only PaddlePaddle (`Cannot use GPU because you have installed CPU version`).
    pub const PADDLE_CPU: &str = "paddle";
    /// The container image carries its own copy of the driver's libraries, which the NVIDIA
    /// container runtime must mount from the host (`mount error: file creation failed: ...
    /// libnvidia-ml.so.1: file exists`).
    pub const IMAGE_DRIVER_LIBRARIES: &str = "driver libraries inside the image";
    /// NVRTC rejected a compile option (`NVRTC_ERROR_INVALID_OPTION`).
    pub const NVRTC_OPTION: &str = "NVRTC rejected an option";
    /// TensorFlow's visible devices were set after its GPUs were initialized (`Visible devices
    /// cannot be modified after being initialized`).
    pub const VISIBLE_AFTER_INIT: &str = "visible devices set after initialization";
    /// nvidia-smi is not installed or not on the PATH (`bash: nvidia-smi: command not found`):
    /// says nothing yet about the driver.
    pub const NVIDIA_SMI_MISSING: &str = "nvidia-smi not found";
    /// FFmpeg's NVENC needs a newer driver than the one loaded.
    pub const NVENC: &str = "NVENC";
    /// The open kernel module does not drive this GPU (no GSP: Maxwell, Pascal, Volta).
    pub const OPEN_MODULE_UNSUPPORTED: &str = "open kernel module without GSP";
    /// nvidia-container-cli timed out waiting for the driver (`driver rpc error: timed out`).
    pub const DRIVER_RPC_TIMEOUT: &str = "driver rpc timeout";
    /// DeepSpeed's launcher was given a GPU id that its host's slot list lacks (`No slot '2'
    /// specified on host 'localhost'`): `CUDA_VISIBLE_DEVICES` and `--include` disagree.
    pub const LAUNCHER_SLOT: &str = "launcher slot";
    /// Starts the detail of a library the linker cannot find (`cannot find -lcuda`): the
    /// unversioned name follows.
    pub const FOR_THE_LINKER: &str = "for the linker: ";
    /// The driver's module build refused a compiler other than the one that built the kernel
    /// (`gcc-version-check failed`).
    pub const GCC_MISMATCH: &str = "the compiler is not the one that built the kernel";
    /// Starts the detail of an architecture the CUDA compiler does not know (`nvcc fatal :
    /// Value 'sm_75' is not defined for option 'gpu-architecture'`); the architecture follows.
    pub const COMPILER_TOO_OLD: &str = "the compiler does not know ";
    /// Starts the detail of an atomic function whose overload for the argument types the
    /// target architecture lacks (`no instance of overloaded function "atomicAdd" matches the
    /// argument list`); the function follows.
    pub const ATOMIC_OVERLOAD: &str = "an atomic the target architecture lacks: ";
    /// OpenGL found no driver it could load (`libGL error: failed to load driver: swrast`):
    /// the NVIDIA GL libraries are not there (a container without the graphics capability).
    pub const GL_DRIVER: &str = "no OpenGL driver library";
    /// Mesa's driver would not load against an older libstdc++ that a conda environment put
    /// first (`MESA-LOADER: failed to open swrast: .../libstdc++.so.6: version
    /// `GLIBCXX_3.4.30' not found`).
    pub const GL_LIBSTDCXX: &str = "OpenGL driver against an older libstdc++";
    /// A compiled extension needs a `std` symbol that the loaded libstdc++ lacks: it was built
    /// with a newer compiler (`undefined symbol: _ZNSt15__exception_ptr...`).
    pub const OLDER_LIBSTDCXX: &str = "an older libstdc++ than the extension's compiler";
    /// Starts the detail of a package named for a CUDA version that pip has no release of
    /// (`No matching distribution found for cupy-cuda90`); the requirement follows.
    pub const PIP_CUDA_BUILD: &str = "no pip release of a package for this CUDA: ";
    /// PTX generated for a newer GPU than the one the driver compiles it for (`ptxas fatal :
    /// SM version specified by .target is higher than default SM version assumed`).
    pub const PTX_TARGET_NEWER: &str = "PTX for a newer GPU architecture";
    /// An NGC container release that does not support this GPU (`Detected NVIDIA ... GPU, which
    /// is not yet supported in this version of the container`).
    pub const CONTAINER_GPU: &str = "GPU not supported by this container release";
    /// The driver release does not drive this GPU (`NVRM: The NVIDIA GPU ... installed in this
    /// system is not supported by the NVIDIA 570.86.15 driver release`): a GPU newer than the
    /// driver, one the branch dropped, or a vGPU given a passthrough driver.
    pub const GPU_NOT_IN_RELEASE: &str = "GPU not supported by the driver release";
    /// NVML inside WSL 2 or a Hyper-V GPU-partitioned guest cannot reach the Windows driver
    /// (`Failed to initialize NVML: GPU access blocked by the operating system`).
    pub const GPU_PARAVIRTUAL_BLOCKED: &str = "GPU access blocked by the operating system";
    /// Starts the detail of Kokkos built for another architecture than the GPU's (`running
    /// kernels compiled for compute capability 7.0 ... on device with compute capability
    /// 5.0`); the GPU's compute capability follows.
    pub const KOKKOS_ARCH: &str = "Kokkos built for another architecture than compute capability ";
    /// Starts the detail of a ptxas that XLA refuses for a known bug (`ptxas 12.3.103 has a
    /// bug that we think can affect XLA`); its version follows.
    pub const PTXAS_REFUSED: &str = "XLA refuses ptxas ";
    /// cuFFT's `CUFFT_INTERNAL_ERROR`.
    pub const CUFFT_INTERNAL: &str = "cuFFT internal error";
    /// `ldd` resolves libcuda.so.1 to the CUDA toolkit's link-time stub.
    pub const STUB_DRIVER_LIBRARY: &str = "the toolkit's stub libcuda";
    /// `torch.cuda.is_available()` answered False, with no reason printed.
    pub const TORCH_NO_GPU: &str = "PyTorch sees no GPU";
    /// TensorFlow listed no GPU (`[]` after `tf.config.list_physical_devices('GPU')`, `Num
    /// GPUs Available: 0`), with no reason printed.
    pub const TENSORFLOW_NO_GPU: &str = "TensorFlow sees no GPU";
    /// No CUDA toolkit to build a CUDA extension with (`CUDA_HOME environment variable is not
    /// set`).
    pub const CUDA_HOME_UNSET: &str = "no CUDA toolkit to build extensions";
    /// A compiled extension (xFormers) built for another PyTorch, CUDA or Python.
    pub const EXTENSION_BUILD: &str = "a compiled extension built for another PyTorch";
    /// Starts the detail of a compiled extension that lacks a C++ symbol of the installed
    /// PyTorch (`_scatter_cuda.so: undefined symbol: _ZN3c10...`); the extension's name follows.
    pub const TORCH_EXTENSION: &str = "an extension built against another PyTorch: ";
    /// Starts the detail of a CUDA header the compiler cannot find (`fatal error: cuda.h: No
    /// such file or directory`); the header follows.
    pub const CUDA_HEADER: &str = "a CUDA header not found: ";
    /// A build's compiler finds no header of another library (`fatal error: EGL/egl.h: No such
    /// file or directory`).
    pub const BUILD_HEADER: &str = "a header not found: ";
    /// The driver's OptiX is older than the OptiX SDK the software was built with
    /// (`OPTIX_ERROR_UNSUPPORTED_ABI_VERSION`).
    pub const OPTIX_ABI: &str = "the driver's OptiX is older than the software's";
    /// Starts the detail of a package's compiled extension that is not installed (`No module
    /// named 'exllamav2_ext'`); the module follows.
    pub const COMPILED_EXTENSION: &str = "a compiled extension not installed: ";
    /// The installed driver branch no longer supports the GPU; an older (legacy) one does.
    pub const LEGACY_GPU: &str = "the driver does not support this GPU";
    /// The CUDA toolkit's ptxas (run on a file by Triton or a build) is older than the PTX it
    /// was given.
    pub const PTXAS_TOO_OLD: &str = "the CUDA toolkit's ptxas is older than the PTX";
    /// The NVIDIA container toolkit in CDI mode refuses docker's `--gpus` hook.
    pub const CDI_MODE_HOOK: &str = "container toolkit in CDI mode";
    /// Slurm does not know the generic resource (GPU) the job asked for.
    pub const GRES_SPEC_INVALID: &str = "invalid gres request";
    /// NVENC would not open an encode session (`OpenEncodeSessionEx failed: out of memory
    /// (10)`, `No NVENC capable devices found`).
    pub const NVENC_SESSION: &str = "no NVENC encode session";
    /// XLA cannot find CUDA's libdevice or ptxas where it looks.
    pub const XLA_CUDA_DIR: &str = "CUDA's libdevice and ptxas for XLA";
    /// nvidia-smi cannot reset the GPU or change its MIG mode: a process holds it.
    pub const GPU_HELD_BY_CLIENT: &str = "GPU held by another client";
}

/// What a line was recognised as.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ObsKind {
    Oom(OomInfo),
    CudaError(CudaErrorInfo),
    /// A failed device-side assertion: `Assertion `srcIndex < srcSelectDimSize` failed.`
    DeviceAssert {
        assertion: String,
        /// `Indexing.cu:1515 indexSelectSmallIndex`, when printed.
        location: Option<String>,
    },
    Cublas(LibStatus),
    Cudnn(LibStatus),
    Nccl(NcclInfo),
    Env {
        env: EnvKind,
        /// A number the message carries: the driver's CUDA version (`found version 11000`),
        /// the GPU's `sm_XX`, the missing library's name.
        detail: Option<String>,
    },
    /// An ECC error of the host's RAM, not the GPU's (a BMC's `Uncorrectable ECC ...
    /// @P2-DIMMF1`, the kernel's EDAC lines).
    HostEcc {
        corrected: bool,
        /// The memory module, when named (`P2-DIMMF1`).
        module: Option<String>,
    },
    /// An Xid line from the kernel log (`NVRM: Xid (PCI:0000:05:00): 79, ...`).
    Xid {
        xid: u32,
        pci: Option<String>,
        /// The text after the number.
        detail: Option<String>,
    },
    /// An ECC error line (uncorrectable unless `corrected`).
    Ecc {
        corrected: bool,
    },
    /// A `PCIe` AER line.
    Aer {
        corrected: bool,
        pci: Option<String>,
    },
    /// The GPU slowed down for heat or power.
    ThermalPower,
    /// A memory reading printed by the job (`memory_allocated=1.2 GiB`, `mem: 12.3G`), in bytes.
    /// A series of these shows growth over iterations.
    MemoryReading {
        bytes: u64,
        /// The step or iteration printed on the same line, if any.
        step: Option<u64>,
    },
    /// An allocator statistic (`TensorFlow` BFC `InUse:`, `LargestFreeBlock:`, `Limit:`).
    AllocatorStat {
        key: String,
        bytes: u64,
    },
    /// A GPU's memory as a tool printed it into the log (nvidia-smi, gpustat, `TensorFlow`'s
    /// device listing): any of used, free and total, in bytes.
    GpuMemory {
        gpu: Option<u32>,
        used_bytes: Option<u64>,
        free_bytes: Option<u64>,
        total_bytes: Option<u64>,
    },
    /// A process row of an nvidia-smi table printed into the log.
    GpuProcess {
        gpu: u32,
        pid: u32,
        bytes: u64,
    },
    /// A temperature from `nvidia-smi -q` (`GPU Current Temp`, `GPU Max Operating Temp`,
    /// `GPU Slowdown Temp`), with its key in `snake_case`.
    Temperature {
        key: String,
        celsius: u32,
    },
    /// A compute-sanitizer report header (`========= Invalid __global__ read of size 4 bytes`).
    SanitizerReport {
        what: String,
    },
    /// The host (not the GPU) ran out of memory: the kernel's OOM killer, a failed CPU
    /// allocation, or a full `/dev/shm`.
    HostMemory {
        what: HostMemoryKind,
        /// The killed process (`python (pid 4242)`) or the size asked for, when printed.
        detail: Option<String>,
    },
    /// The kernel crashed or locked up inside an NVIDIA kernel module: the faulting instruction
    /// (`RIP: 0010:_raw_q_schedule+0x2f/0xb0 [nvidia_uvm]`) is the driver's.
    DriverCrash {
        /// The module (`nvidia_uvm`, `nvidia`, `nvidia_modeset`).
        module: String,
    },
    /// The IOMMU blocked a device's DMA (`DMAR: [DMA Write] Request device [02:00.0] fault
    /// addr ...`, AMD's `IO_PAGE_FAULT`).
    IommuFault {
        /// The device whose DMA faulted, when the line names it.
        pci: Option<String>,
    },
    /// The driver could not bring a GPU up (`RmInitAdapter failed`), or its GSP firmware
    /// could not start (`Cannot initialize GSP firmware RM`).
    GpuInitFailed {
        gsp: bool,
        /// The GSP firmware file of the loaded module's version is not installed (`Direct
        /// firmware load for nvidia/570.144/gsp_ga10x.bin failed`).
        firmware_missing: bool,
        pci: Option<String>,
    },
    /// The GPU's PCI memory window was not assigned, so the driver cannot probe it: `NVRM:
    /// This PCI I/O region assigned to your NVIDIA device is invalid: BAR0 is 0M @ 0x0`.
    PciBarUnassigned {
        pci: Option<String>,
    },
    /// The kernel could not reserve the GPU's PCI memory window for its driver (`vfio-pci
    /// 0000:b3:00.0: BAR 1: can't reserve [mem ...]`): another driver holds it, most often
    /// the firmware's framebuffer on the GPU the machine booted with.
    PciBarBusy {
        pci: Option<String>,
    },
    /// The output came from inside a container: a docker compose service's prefix
    /// (`qna-transformers_1  | `), a shell prompt with a container ID as host name
    /// (`root@f14d48a29224:/app#`). Not an error: context for "no driver" messages, which
    /// inside a container mean the container was not given the GPU.
    Container {
        /// How the log shows it, for the finding's evidence.
        how: String,
    },
    /// The log shows this machine has an NVIDIA GPU with its driver loaded, in a line that is
    /// no error: the driver's `/proc/driver/nvidia/gpus/.../information` (`GPU Firmware:`), a
    /// CI runner's `GPUs UIDs: GPU-...`, a start script's `NVIDIA GPU detected`. Context for
    /// a missing nvidia-smi, which beside it means this environment was not given the
    /// driver's files.
    GpuPresent {
        /// How the log shows it, for the finding's evidence.
        how: String,
    },
    /// The driver refuses work until the GPU is reset: `NVRM: nvAssertOkFailedNoLog:
    /// Assertion failed: Reset required [NV_ERR_RESET_REQUIRED]`.
    GpuResetRequired {
        pci: Option<String>,
    },
    /// TensorFlow could not place an operation on the device asked for: `Could not satisfy
    /// explicit device specification '/device:GPU:0' because no supported kernel for GPU
    /// devices is available` (or no GPU is registered at all).
    TfPlacement {
        /// The operation has no GPU kernel (or is colocated with one that has none); false
        /// when TensorFlow has no GPU device at all.
        no_gpu_kernel: bool,
        /// The operation or node, when named.
        op: Option<String>,
    },
    /// A line that says the job failed, of a failure no recogniser knew: a Python exception,
    /// a fatal check, a crash (see `failure`).
    Failure {
        form: FailureForm,
        /// The exception's class name (`ValueError`), for a Python exception.
        name: Option<String>,
    },
    /// An NVIDIA driver installer's (nvidia-installer's, DKMS's) error.
    DriverInstall {
        outcome: DriverInstallOutcome,
        /// The error's text after `ERROR:`.
        detail: Option<String>,
    },
}

/// Which host-memory failure a line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostMemoryKind {
    /// The kernel's OOM killer (or a cgroup's, or Slurm's report of it) killed a process.
    OomKilled,
    /// A CPU allocation failed (`DefaultCPUAllocator: can't allocate memory`, numpy's
    /// `Unable to allocate 28.6 GiB for an array`).
    AllocFailed,
    /// Shared memory (`/dev/shm`) is too small: `DataLoader` workers, NCCL's shm transport.
    SharedMemory,
}

/// How a failure line says the job failed, from least to most telling (the order GD579 picks
/// by).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureForm {
    /// A process that died of a signal: `Segmentation fault`, `Aborted (core dumped)`.
    Crash,
    /// A fatal check or an uncaught C++ exception: glog's `F...] Check failed:`,
    /// `terminate called after throwing`, `fatal error`.
    Fatal,
    /// A Python exception line: `ValueError: ...`.
    Exception,
}

/// What an NVIDIA driver installer (nvidia-installer, DKMS) reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverInstallOutcome {
    /// The installation failed (`ERROR: Unable to build the NVIDIA kernel module`).
    Failed,
    /// The installer refused because an NVIDIA kernel module is loaded: a driver is in use.
    ModuleLoaded,
    /// DKMS would not replace a module of the same version: already installed.
    SameVersionInstalled,
}

impl ObsKind {
    /// The PCI address of the device a kernel-log line names, for the kinds that carry one.
    pub fn pci(&self) -> Option<&str> {
        match self {
            ObsKind::Xid { pci, .. }
            | ObsKind::Aer { pci, .. }
            | ObsKind::IommuFault { pci }
            | ObsKind::GpuInitFailed { pci, .. }
            | ObsKind::GpuResetRequired { pci }
            | ObsKind::PciBarUnassigned { pci }
            | ObsKind::PciBarBusy { pci } => pci.as_deref(),
            _ => None,
        }
    }

    /// A short name for the kind, for counts and bounds.
    pub fn name(&self) -> &'static str {
        match self {
            ObsKind::Oom(_) => "oom",
            ObsKind::CudaError(_) => "cuda_error",
            ObsKind::DeviceAssert { .. } => "device_assert",
            ObsKind::Cublas(_) => "cublas",
            ObsKind::Cudnn(_) => "cudnn",
            ObsKind::Nccl(_) => "nccl",
            ObsKind::Env { .. } => "env",
            ObsKind::Xid { .. } => "xid",
            ObsKind::Ecc { .. } => "ecc",
            ObsKind::HostEcc { .. } => "host_ecc",
            ObsKind::Aer { .. } => "aer",
            ObsKind::ThermalPower => "thermal_power",
            ObsKind::MemoryReading { .. } => "memory_reading",
            ObsKind::AllocatorStat { .. } => "allocator_stat",
            ObsKind::SanitizerReport { .. } => "sanitizer_report",
            ObsKind::GpuMemory { .. } => "gpu_memory",
            ObsKind::GpuProcess { .. } => "gpu_process",
            ObsKind::Temperature { .. } => "temperature",
            ObsKind::HostMemory { .. } => "host_memory",
            ObsKind::DriverInstall { .. } => "driver_install",
            ObsKind::Failure { .. } => "failure",
            ObsKind::IommuFault { .. } => "iommu_fault",
            ObsKind::DriverCrash { .. } => "driver_crash",
            ObsKind::TfPlacement { .. } => "tf_placement",
            ObsKind::GpuResetRequired { .. } => "gpu_reset_required",
            ObsKind::PciBarUnassigned { .. } => "pci_bar_unassigned",
            ObsKind::PciBarBusy { .. } => "pci_bar_busy",
            ObsKind::Container { .. } => "container",
            ObsKind::GpuPresent { .. } => "gpu_present",
            ObsKind::GpuInitFailed { .. } => "gpu_init_failed",
        }
    }
}

/// One recognised line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// Which input it came from (`stdin`, a file name, `kernel log`).
    pub source: String,
    /// 1-based line number (lines end at `\n`; `\r` progress-bar segments share a number).
    pub line: u64,
    /// The `[rankN]:` prefix the line carried, if any.
    pub rank: Option<u32>,
    /// The framework that printed it, as far as the line tells.
    pub framework: Option<Framework>,
    /// The cleaned line (no colour codes, no rank prefix), cut at a sane length.
    pub text: String,
    pub kind: ObsKind,
    /// Global order of the observation across all inputs (0-based), so the rules can tell
    /// what came first even across files.
    pub seq: u64,
}

/// Everything the scanner recognised in one or more inputs.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct LogFacts {
    /// In input order. At most [`crate::ScanOptions::keep_first`] +
    /// [`crate::ScanOptions::keep_last`] of each kind.
    pub observations: Vec<Observation>,
    /// Frameworks seen anywhere (import paths, exception names), as context.
    pub frameworks: BTreeSet<Framework>,
    /// Ranks seen in `[rankN]:` prefixes.
    pub ranks: BTreeSet<u32>,
    pub bytes_scanned: u64,
    pub lines_scanned: u64,
    /// Lines longer than the cap; only their first part was read.
    pub long_lines: u64,
    /// Observations not kept because of the per-kind bound.
    pub dropped_observations: u64,
    /// Inputs scanned, in order.
    pub sources: Vec<String>,
}

impl LogFacts {
    /// Observations of one kind, in order.
    pub fn of_kind<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Observation> + 'a {
        self.observations
            .iter()
            .filter(move |o| o.kind.name() == name)
    }

    /// Whether nothing at all was recognised.
    pub fn is_empty(&self) -> bool {
        self.observations.is_empty()
    }
}
