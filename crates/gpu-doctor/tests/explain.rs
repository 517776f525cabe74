//! `gpu-doctor explain` end to end: the built binary on the real H200 outputs in
//! `testdata/h200/`, snapshots of its text and JSON output, exit statuses, the kernel log
//! read from a file (`--kernel-log`), and hostile input on standard input.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn gpu_doctor(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.current_dir(root())
        .args(args)
        .env_remove("GPU_DOCTOR_KERNEL_LOG")
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("gpu-doctor runs");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        // The scanner may stop reading early only by finishing; write all of it.
        pipe.write_all(bytes).expect("write stdin");
    }
    child.wait_with_output().expect("gpu-doctor finishes")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const FIXTURES: &[&str] = &[
    "err-oom",
    "err-frag",
    "err-frag-oom-real",
    "err-assert",
    "err-illegal",
    "err-badordinal",
    "err-cupy_oom",
    "err-jax_oom",
    "err-init-torch",
    "err-init-cupy",
    "err-init-jax",
    "err-host-alloc",
    "err-shape-mismatch",
    "err-segfault",
    "err-missing-lib",
    "err-nccl-debug",
    "err-graph-capture",
    "err-jax-oom-beside-holder",
    "err-cupy-oom-beside-holder",
    "err-macro-trap",
    "err-macro-oom",
];

#[test]
fn h200_fixtures_text() {
    for name in FIXTURES {
        let path = format!("testdata/h200/{name}.txt");
        let out = gpu_doctor(&["explain", &path], None);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        insta::assert_snapshot!(format!("text_{name}"), text(&out));
    }
}

#[test]
fn h200_fixtures_json() {
    for name in FIXTURES {
        let path = format!("testdata/h200/{name}.txt");
        let out = gpu_doctor(&["explain", "--json", &path], None);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(doc["schema_version"], 1);
        assert!(doc["findings"].as_array().is_some_and(|f| !f.is_empty()));
        insta::assert_json_snapshot!(format!("json_{name}"), doc);
    }
}

#[test]
fn primary_causes_of_the_h200_fixtures() {
    let expect = [
        ("err-oom", "oom_capacity"),
        ("err-frag", "oom_capacity"),
        ("err-frag-oom-real", "oom_fragmentation"),
        ("err-assert", "device_assert"),
        ("err-illegal", "illegal_access"),
        ("err-badordinal", "env_visible_devices"),
        ("err-cupy_oom", "oom_capacity"),
        ("err-jax_oom", "oom_capacity"),
        // Another process held the whole GPU. PyTorch's bare `CUDA error: out of memory`
        // carries nothing that says so (the finding says that it cannot tell); CuPy's
        // `allocated so far: 0 bytes` and JAX's failed stream executor do.
        ("err-init-torch", "oom_capacity"),
        ("err-init-cupy", "oom_other_process"),
        ("err-init-jax", "oom_other_process"),
        ("err-host-alloc", "other"),
        // Failures that are not the GPU's: a shape bug on the GPU and a native crash (GD579),
        // a package's missing shared library (GD543); NCCL's debug trace of two ranks on one
        // GPU keeps the device-selection error first.
        ("err-shape-mismatch", "other"),
        ("err-segfault", "other"),
        ("err-missing-lib", "env_lib_missing"),
        ("err-nccl-debug", "env_visible_devices"),
        // A call that CUDA-graph capture forbids: the framework's (or the program's) bug.
        ("err-graph-capture", "other"),
        // 100 GiB beside a process holding 60 GiB of the 140: JAX's refused preallocation says
        // others were there first; CuPy's message names only the request (--live tells).
        ("err-jax-oom-beside-holder", "oom_other_process"),
        ("err-cupy-oom-beside-holder", "oom_capacity"),
        // A CUDA C program's check macros: the classic HANDLE_ERROR line after a kernel that
        // trapped (CUDA 719), and the multi-line report of a 1 TiB cudaMalloc.
        ("err-macro-trap", "illegal_access"),
        ("err-macro-oom", "oom_capacity"),
    ];
    for (name, cause) in expect {
        let out = gpu_doctor(
            &["explain", "--json", &format!("testdata/h200/{name}.txt")],
            None,
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["findings"][0]["cause"], cause, "{name}");
    }
}

#[test]
fn clean_input_exits_0_and_says_so() {
    let out = gpu_doctor(
        &["explain", "-"],
        Some(b"epoch 1 loss 0.31\nepoch 2 loss 0.29\n"),
    );
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("clean_stdin", text(&out));
    let out = gpu_doctor(&["explain", "--json", "-"], Some(b"all good\n"));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["findings"], serde_json::json!([]));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn missing_file_is_a_usage_error() {
    let out = gpu_doctor(&["explain", "no/such/file.log"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error: cannot open no/such/file.log"), "{err}");
    assert!(err.contains("hint:"), "{err}");
}

#[test]
fn kernel_log_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("kern.log");
    // NVRM lines as the real H200 printed them (testdata/h200/env.txt), plus Xid lines in
    // the dmesg, journal and /dev/kmsg shapes.
    std::fs::write(
        &log,
        "[    0.608368] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)\n\
         [ 8812.120001] NVRM: Xid (PCI:0000:18:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.\n\
         Nov 29 18:50:03 h200 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n\
         4,357,3517699,c;NVRM: Persistence mode is deprecated and will be removed in a future release. Please use nvidia-persistenced instead.\n",
    )
    .unwrap();
    let log = log.to_string_lossy().into_owned();
    let out = gpu_doctor(&["explain", "--kernel-log", &log], None);
    assert_eq!(out.status.code(), Some(1));
    let shown = text(&out).replace(&log, "KERNEL_LOG");
    insta::assert_snapshot!("kernel_log", shown);
    // The job's output and the kernel log together: the hardware fault comes first.
    let job = b"RuntimeError: CUDA error: unspecified launch failure\n";
    let out = gpu_doctor(&["explain", "--json", "--kernel-log", &log, "-"], Some(job));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["findings"][0]["cause"], "hw_xid");
    let later: Vec<&str> = doc["findings"].as_array().unwrap()[1..]
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(later.contains(&"GD510"), "{later:?}");
}

#[test]
fn hostile_stdin_does_not_break_it() {
    // Invalid UTF-8, NUL bytes, colour codes, carriage-return progress bars, rank prefixes
    // and a 20 MB line without a newline, then a real error.
    let mut input = Vec::new();
    input.extend_from_slice(b"\xff\xfe\x00\x00garbage\x1b[31m red \x1b[0m\n");
    for i in 0..200 {
        input.extend_from_slice(format!(" {i}%|###   | {i}/200 [00:01<00:02]\r").as_bytes());
    }
    input.push(b'\n');
    input.extend(std::iter::repeat_n(b'x', 20 << 20));
    input.push(b'\n');
    input.extend_from_slice(
        b"[rank3]: \x1b[1;31mtorch.AcceleratorError\x1b[0m: CUDA error: an illegal memory access was encountered\n",
    );
    let out = gpu_doctor(&["explain", "--json", "-"], Some(&input));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &doc["findings"][0];
    assert_eq!(f["cause"], "illegal_access");
    assert!(f["message"].as_str().unwrap().contains("on rank 3"), "{f}");
    assert_eq!(f["evidence"][0]["line"], 4);
}

#[test]
fn live_facts_name_the_other_process() {
    // A recording of two H200s where another job holds GPU 0; the job's OOM carries no
    // numbers of its own, so only the live facts can say who holds the memory.
    let job = b"RuntimeError: CUDA error: out of memory\n";
    let out = gpu_doctor(
        &[
            "--source",
            "replay:testdata/run/two-gpus-other-process.ndjson",
            "explain",
            "--live",
            "-",
        ],
        Some(job),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("live_other_process", text(&out));
    // Without a usable source, --live warns and goes on.
    let out = gpu_doctor(
        &[
            "--source",
            "replay:no/such.ndjson",
            "explain",
            "--live",
            "-",
        ],
        Some(job),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: --live"));
}

#[test]
fn no_input_on_a_terminal_is_not_assumed() {
    // With stdin closed (not a terminal), explain reads it as empty input.
    let out = gpu_doctor(&["explain"], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_job_killed_for_host_memory_is_told_apart_from_a_gpu_oom() {
    // What torchrun prints when the kernel's OOM killer takes a rank, with the kernel's own
    // line: the fix is on the host, so the GPU out-of-memory advice must not appear.
    let job = b"[Mon Mar  4 10:00:00 2024] Out of memory: Killed process 4242 (python) total-vm:123456789kB, anon-rss:98765432kB, file-rss:0kB, shmem-rss:0kB\n\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n\
  exitcode  : -9 (pid: 4242)\n\
  traceback : Signal 9 (SIGKILL) received by PID 4242\n";
    let out = gpu_doctor(&["explain", "-"], Some(job));
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("host_oom_kill", text(&out));
}

#[test]
fn a_failure_of_no_known_gpu_cause_is_a_failure_not_a_clean_log() {
    // transformers#680: BERT's 512 position embeddings indexed past their end (on the CPU).
    let job = b"  File \"/miniconda3/lib/python3.6/site-packages/torch/nn/functional.py\", line 1506, in embedding\n\
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n\
RuntimeError: index out of range at ../aten/src/TH/generic/THTensorEvenMoreMath.cpp:193\n";
    let out = gpu_doctor(&["explain", "-"], Some(job));
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("unrecognised_failure", text(&out));
}
