//! Hostile input: random mixes of trigger words, control bytes, invalid UTF-8, colour codes,
//! carriage returns and rank prefixes, fed in chunks of every size. The scanner must never
//! panic, must keep its bounds, and must find the same things however the input is split.
//! This is the stable-Rust stand-in for the cargo-fuzz target `fuzz/fuzz_targets/scan.rs`
//! (run by `fuzz/run.sh` when nightly and cargo-fuzz are missing).

use gpu_doctor_scan::{LogFacts, ScanOptions, Scanner};

/// xorshift64*: deterministic, so a failure reproduces from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PIECES: &[&[u8]] = &[
    b"CUDA out of memory. Tried to allocate ",
    b"12.00 GiB",
    b" (GPU 0; 7.92 GiB total capacity; ",
    b"GPU 0 has a total capacity of 139.80 GiB of which 10.29 GiB is free. ",
    b"and 53.41 GiB is reserved by PyTorch but unallocated.",
    b"Process 1234 has 17179869184.00 GiB memory in use. ",
    b"CUDA error: an illegal memory access was encountered",
    b"Assertion `srcIndex < srcSelectDimSize` failed.",
    b"Indexing.cu:1515: indexSelectSmallIndex: block: [0,0,0]",
    b"NVRM: Xid (PCI:0000:05:00): 79, ",
    b"Xid 999999999999999999999",
    b"CUBLAS_STATUS_",
    b"CUDNN_STATUS_NOT_SUPPORTED (3000)",
    b"NCCL error in: x.cpp:1, unhandled cuda error, NCCL version 2.1",
    b"Watchdog caught collective operation timeout: Timeout(ms)=99999999999999999999",
    b"mem: 1e308G",
    b"step 18446744073709551616 mem: 12.5G",
    b"libcudart.so.12: cannot open shared object file",
    b"Allocation on device 0 would exceed allowed memory. (out of memory)",
    b"Currently allocated     : ",
    b"[rank3]: ",
    b"[rank99999999999]: ",
    b"\x1b[1;31m",
    b"\x1b]0;title\x07",
    b"\x1b[",
    b"\r",
    b"\n",
    b"\r\n",
    b"\x00",
    b"\xff\xfe",
    b"\xe2\x82",
    b" ",
    b"0",
    b"9999999999999999999999",
    b",",
    b"=========     Invalid __global__ read of size 4 bytes",
    b"| 0 1234 C python 7773MiB |",
    b"[0] Tesla | 15836 / 16130 MB |",
    // The line-start look: lines without a trigger word, read by how they begin.
    b"Traceback (most recent call last):",
    b"  File \"train.py\", line 282, in validate",
    b"  File \"",
    b"ERROR: Unable to load the kernel module",
    b"DKMS will not replace this module.",
    b"No devices were found",
    b"Reason=gres/gpu count reported lower than configured (0 < ",
    b"thread 'main' panicked at src/main.rs:1:1:",
    b"Cuda(NoBinaryForGpu)",
    b"Cuda(",
    b"CudaError::",
    b"ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'",
    b"torch 2.1.0+cpu",
    b"cpuonly ",
    b"print(tf.test.is_built_with_cuda())",
    b"False",
    b"[1478401.486981] DMAR: [DMA Write] Request device [",
    b"[ ",
    b"[rank",
    b"kernel version 515.48.7 does not match DSO version ",
    b"ExternalError:  Cuda error(",
    b"Kernel driver in use: nouveau",
    b"On entry to GEMM_EX  parameter number 9 had an illegal value",
    b"instance-fjhn02ur:454:484 [0] include/socket.h:185 WARN Call to connect failed : ",
    b"include/socket.h:344 WARN ",
    b"h:1:2 [",
    b":99999999999999999999 WARN failed",
    b"_pytorch_select           0.1                       cpu_0",
    b"  jaxlib             conda-forge/linux-64::jaxlib-0.4.4-cpu_py311h7146453_1",
    b"python3: ./src/cuda.c:36: check_error: Assertion `0' failed.",
    b"NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED]",
    b"/sbin/ldconfig.real: File /usr/lib/x86_64-linux-gnu/libcuda.so.1 is empty, not checked.",
    b"No GPU/TPU found, falling back to CPU.",
    b"TensorFlow was not built with CUDA kernel binaries compatible with compute capability 99999999999999999999.",
    b"Specified provider 'CUDAExecutionProvider' is not in available provider names.",
    b"insufficient privileges to read device list from NVIDIA_VISIBLE_DEVICES envvar",
    b"Ultralytics YOLOv8.1.3 Python-3.10.11 torch-2.1.0+cpu",
    b"ptxas x, line 1; error   : Feature '.bf16' requires .target sm_99999999999999999999 or higher",
    b"Compiled against cuBLASLt 11.9.2.0 but running against cuBLASLt ",
    b"NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
    b"This CTranslate2 package was not compiled with CUDA support",
    b"stat nvidia.com/gpu=",
    b"Uncorrectable ECC / other uncorrectable memory error @P2-DIMMF1",
    b"Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices",
    b"CUBLAS error: 99999999999999999999",
];

fn random_input(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.below(60) {
        if rng.below(8) == 0 {
            out.push(rng.next() as u8);
        } else {
            out.extend_from_slice(PIECES[rng.below(PIECES.len())]);
        }
    }
    out
}

fn scan(input: &[u8], chunk: usize, opts: ScanOptions) -> LogFacts {
    let mut s = Scanner::new(opts);
    s.begin_source("input");
    for piece in input.chunks(chunk.max(1)) {
        s.feed(piece);
    }
    s.finish()
}

#[test]
fn random_input_never_panics_and_chunking_does_not_matter() {
    let opts = ScanOptions {
        max_line_bytes: 300,
        keep_first: 8,
        keep_last: 8,
        chunk_bytes: 64,
    };
    for seed in 1..=1000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let input = random_input(&mut rng);
        let whole = scan(&input, input.len(), opts);
        for chunk in [1, 2, 3, 7, 64] {
            let split = scan(&input, chunk, opts);
            assert_eq!(
                whole.observations, split.observations,
                "seed {seed}, chunk {chunk}: observations depend on chunking"
            );
            assert_eq!(whole.lines_scanned, split.lines_scanned, "seed {seed}");
        }
        for kind in ["oom", "cuda_error", "xid", "memory_reading"] {
            assert!(
                whole.of_kind(kind).count() <= 16,
                "seed {seed}: bound on {kind}"
            );
        }
        // The rules must take whatever the scanner produced.
        let _ = gpu_doctor_model::SCHEMA_VERSION;
    }
}

#[test]
fn observations_are_bounded_per_kind() {
    let mut s = Scanner::new(ScanOptions::default());
    s.begin_source("flood");
    let line = b"RuntimeError: CUDA error: an illegal memory access was encountered\n";
    for _ in 0..20_000 {
        s.feed(line);
    }
    let facts = s.finish();
    let kept = facts.of_kind("cuda_error").count();
    assert_eq!(kept, 128, "first 64 and last 64");
    assert_eq!(facts.dropped_observations, 20_000 - 128);
    let last = facts.observations.last().unwrap();
    assert_eq!(last.line, 20_000, "the last occurrence is kept");
    assert_eq!(facts.lines_scanned, 20_000);
}
