//! Unit tests of the ordering and of each rule on small, real-shaped inputs.

use super::*;
use std::fmt::Write as _;

fn codes(text: &str) -> Vec<(String, Cause, Severity)> {
    explain_text(text.as_bytes())
        .into_iter()
        .map(|f| (f.code.0, f.cause, f.severity))
        .collect()
}

/// Asserts the primary finding's cause for each text.
fn assert_primary_causes(cases: &[(&str, Cause)]) {
    for &(text, cause) in cases {
        assert_eq!(codes(text).first().map(|c| c.1), Some(cause), "{text}");
    }
}

/// Asserts the primary finding's rule and cause for each text.
fn assert_primary_findings(cases: &[(&str, &str, Cause)]) {
    for &(text, code, cause) in cases {
        let got = codes(text);
        assert_eq!(
            got.first().map(|c| (c.0.as_str(), c.1)),
            Some((code, cause)),
            "{text}"
        );
    }
}

/// Whether one of the finding's remedies has a command that contains `needle`.
fn has_remedy_command(f: &gpu_doctor_model::Finding, needle: &str) -> bool {
    f.remedies
        .iter()
        .any(|r| r.command.as_deref().is_some_and(|c| c.contains(needle)))
}

/// Asserts the primary finding's rule, cause and severity for each text.
fn assert_primary_findings_with_severity(cases: &[(&str, &str, Cause, Severity)]) {
    for &(text, code, cause, severity) in cases {
        let got = codes(text);
        assert_eq!(
            got.first(),
            Some(&(code.to_owned(), cause, severity)),
            "{text}"
        );
    }
}

#[test]
fn nothing_in_nothing_out() {
    assert!(explain_text(b"epoch 1 loss 0.3\nepoch 2 loss 0.2\n").is_empty());
}

#[test]
fn device_assert_is_root_and_cublas_is_knock_on() {
    let text = "/pytorch/aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n\
RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n";
    let got = codes(text);
    assert_eq!(got[0].0, "GD511");
    assert_eq!(got[0].1, Cause::DeviceAssert);
    assert!(got.iter().any(|g| g.0 == "GD520"), "{got:?}");
    assert!(
        got[1..].iter().all(|g| g.2 == Severity::Info),
        "everything after the assert is demoted: {got:?}"
    );
}

#[test]
fn fragmentation_from_numbers_not_hint() {
    // The hint about expandable segments is printed in both; only the numbers differ.
    let frag = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 10.29 GiB is free. Including non-PyTorch memory, this process has 129.51 GiB memory in use. Of the allocated memory 75.59 GiB is allocated by PyTorch, and 53.41 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n";
    let cap = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 72.16 GiB is free. Including non-PyTorch memory, this process has 67.64 GiB memory in use. Of the allocated memory 64.67 GiB is allocated by PyTorch, and 2.46 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n";
    assert_eq!(codes(frag)[0].1, Cause::OomFragmentation);
    assert_eq!(codes(cap)[0].1, Cause::OomCapacity);
}

#[test]
fn other_process_from_arithmetic() {
    let text = "RuntimeError: CUDA out of memory. Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated; 24.56 MiB free; 86.00 MiB reserved in total by PyTorch)\n";
    assert_eq!(codes(text)[0].1, Cause::OomOtherProcess);
}

#[test]
fn leak_from_growth_before_oom() {
    let mut text = String::new();
    for step in 0..8u64 {
        let _ = writeln!(text, "step {step} mem: {:.2} GB", 2.0 + step as f64 * 1.5);
    }
    text.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.90 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 14.80 GiB memory in use. Of the allocated memory 14.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n");
    let got = codes(&text);
    assert_eq!(got[0].0, "GD503");
    assert_eq!(got[0].1, Cause::OomLeak);
}

#[test]
fn oom_in_an_evaluation_step_points_to_autograd_left_on() {
    let traceback = |function: &str| {
        format!(
            "Traceback (most recent call last):\n  File \"train.py\", line 127, in main\n    recent_bleu4 = {function}(val_loader=val_loader)\n  File \"train.py\", line 282, in {function}\n    scores_copy = scores.clone()\nRuntimeError: CUDA error: out of memory\n"
        )
    };
    let got = explain_text(traceback("validate").as_bytes());
    assert_eq!(got[0].code.0, "GD503");
    assert_eq!(got[0].cause, Cause::OomLeak);
    assert!(
        got[0].message.contains("in `validate`"),
        "{}",
        got[0].message
    );
    assert_eq!(codes(&traceback("validation_step"))[0].1, Cause::OomLeak);
    // A training step, or a word that only contains `val`, is not evaluation.
    assert_eq!(codes(&traceback("train_epoch"))[0].1, Cause::OomCapacity);
    assert_eq!(
        codes(&traceback("interval_update"))[0].1,
        Cause::OomCapacity
    );
    // Keras's `evaluate` builds no autograd graph.
    let keras = "Traceback (most recent call last):\n  File \"run.py\", line 9, in evaluate\n    model.evaluate(x)\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[256,512,28,28] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";
    assert_eq!(codes(keras)[0].1, Cause::OomCapacity);
    // Numbers that name another cause win: 10 GiB held by another process.
    let numbered = "Traceback (most recent call last):\n  File \"train.py\", line 282, in validate\n    out = model(x)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.90 GiB of which 10.00 MiB is free. Process 4242 has 10.00 GiB memory in use. Including non-PyTorch memory, this process has 5.80 GiB memory in use. Of the allocated memory 5.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n";
    assert_eq!(codes(numbered)[0].1, Cause::OomOtherProcess);
}

#[test]
fn warm_up_is_not_a_leak() {
    let mut text = String::new();
    for (step, gb) in [
        (0, 1.0),
        (1, 6.0),
        (2, 6.1),
        (3, 6.1),
        (4, 6.1),
        (5, 6.1),
        (6, 6.1),
    ] {
        let _ = writeln!(text, "step {step} mem: {gb:.2} GB");
    }
    assert!(codes(&text).is_empty(), "{:?}", codes(&text));
}

#[test]
fn request_larger_than_gpu() {
    let text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 19.29 GiB is free. Including non-PyTorch memory, this process has 120.51 GiB memory in use. Of the allocated memory 120.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.\n";
    assert_eq!(codes(text)[0].0, "GD504");
}

#[test]
fn environment_beats_the_errors_it_causes() {
    let text = "RuntimeError: CUDA error: no kernel image is available for execution on the device\nRuntimeError: CUDA error: unknown error\n";
    let got = codes(text);
    assert_eq!(got[0].1, Cause::EnvArchUnsupported);
    assert!(got[1..].iter().all(|g| g.2 == Severity::Info));
}

#[test]
fn tf_warning_alone_is_info() {
    let text = "W tensorflow/core/common_runtime/bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.25GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\n";
    let got = codes(text);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "GD505");
    assert_eq!(got[0].2, Severity::Info);
}

#[test]
fn xid_catalog_classifies() {
    let got = codes(
        "[  12.3] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n",
    );
    assert_eq!(got[0].0, "GD202");
    let got = codes("kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=python, Ch 00000008\n");
    assert_eq!(got[0].1, Cause::IllegalAccess);
    let got = codes(
        "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP!\n",
    );
    assert_eq!(got[0].0, "GD200");
}

#[test]
fn sticky_causes() {
    assert!(is_sticky(Cause::DeviceAssert));
    assert!(is_sticky(Cause::IllegalAccess));
    assert!(!is_sticky(Cause::OomCapacity));
    assert!(!is_sticky(Cause::EnvDriverTooOld));
}

#[test]
fn bare_step_and_byte_pairs_show_a_leak() {
    // `print(step, torch.cuda.memory_allocated())` every 10 steps, then a clean exit.
    let mut text = String::new();
    for i in 0..6u64 {
        let _ = writeln!(text, "{} {}", i * 10, 134_218_240 + i * 335_549_440);
    }
    text.push_str("rc=0\n");
    let got = explain_text(text.as_bytes());
    assert_eq!(got[0].code.0, "GD570");
    assert_eq!(got[0].cause, Cause::OomLeak);
    // A flat series is not a leak.
    let mut flat = String::new();
    for i in 0..6 {
        let _ = writeln!(flat, "{} 134218240", i * 10);
    }
    assert!(codes(&flat).is_empty());
}

#[test]
fn driver_mismatch_errors_get_driver_advice_not_wheel_advice() {
    for (text, words) in [
        (
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination\n",
            "error 803",
        ),
        (
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW\n",
            "error 804",
        ),
    ] {
        let got = explain_text(text.as_bytes());
        assert_eq!(got[0].code.0, "GD540");
        assert_eq!(got[0].cause, Cause::EnvDriverTooOld);
        assert!(got[0].message.contains(words), "{}", got[0].message);
        assert!(
            got[0].remedies.iter().all(|r| !r
                .command
                .as_deref()
                .unwrap_or("")
                .contains("download.pytorch.org")),
            "{:?}",
            got[0].remedies
        );
    }
}

#[test]
fn software_that_needs_a_newer_gpu() {
    let got = explain_text(b"RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n");
    assert_eq!(got[0].code.0, "GD542");
    assert!(
        got[0].message.contains("sm_80 or newer"),
        "{}",
        got[0].message
    );
    assert!(
        got[0]
            .remedies
            .iter()
            .any(|r| r.command.as_deref().unwrap_or("").contains("sdpa"))
    );
}

#[test]
fn a_wrong_library_version_is_an_install_problem() {
    let got = explain_text(
        b"E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching major version and equal or higher minor version.\n\
jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.\n",
    );
    assert_eq!(got[0].code.0, "GD543");
    assert_eq!(got[0].cause, Cause::EnvLibMissing);
    assert!(
        got[0]
            .message
            .starts_with("cuDNN 8.5.0 (built with 8.6.0) is loaded")
    );
    // The cuDNN start-up failure it causes comes after it, demoted.
    assert!(
        got[1..].iter().all(|f| f.severity == Severity::Info),
        "{got:?}"
    );
}

#[test]
fn a_host_oom_kill_is_the_root_of_the_timeouts_after_it() {
    let text = "[Mon Mar  4 10:00:00 2024] Out of memory: Killed process 4242 (python) total-vm:123456789kB, anon-rss:98765432kB, file-rss:0kB\n\
[rank1]:[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800236 milliseconds before timing out.\n";
    let got = codes(text);
    assert_eq!(got[0].0, "GD506", "{got:?}");
    assert_eq!(got[0].1, Cause::Other);
    assert!(
        got[1..].iter().all(|g| g.2 == Severity::Info),
        "the timeout is demoted: {got:?}"
    );
    // Host memory is not GPU memory: no out-of-memory cause at all.
    assert!(got.iter().all(|g| !g.1.is_oom()), "{got:?}");
}

#[test]
fn an_oom_before_the_job_allocated_anything_is_someone_elses_memory() {
    let text = "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:0 failed. Status: out of memory\n";
    let got = explain_text(text.as_bytes());
    assert_eq!(got[0].cause, Cause::OomOtherProcess, "{got:?}");
    assert!(got[0].message.contains("before the job allocated anything"));
}

#[test]
fn a_driver_mismatch_explains_the_missing_device() {
    // TensorFlow reports the cuInit failure first and the reason after it.
    let text = "E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: CUDA_ERROR_NO_DEVICE\n\
E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version 384.130.0 does not match DSO version 375.66.0 -- cannot find working devices in this configuration\n";
    let got = codes(text);
    assert_eq!(got[0].1, Cause::EnvNvmlMismatch, "{got:?}");
}

#[test]
fn a_printed_nvidia_smi_table_is_read_per_gpu_and_not_against_preallocators() {
    let table = "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n\
|   0  GeForce GTX 107...  Off  | 00000000:01:00.0  On |                  N/A |\n\
|  0%   61C    P0    58W / 180W |   7940MiB /  8112MiB |      3%      Default |\n\
|   1  GeForce GTX 107...  Off  | 00000000:02:00.0 Off |                  N/A |\n\
|  0%   44C    P2    41W / 180W |    181MiB /  8114MiB |      0%      Default |\n";
    // A numberless OOM on the default GPU while the table shows GPU 0 full: someone else's.
    let torch = format!("{table}RuntimeError: CUDA error: out of memory\n");
    assert_eq!(codes(&torch)[0].1, Cause::OomOtherProcess, "{torch}");
    // TensorFlow takes the whole GPU itself: a full GPU 0 is the job, not another process.
    let tf = format!(
        "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[64,372,32,32] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n{table}"
    );
    assert_eq!(codes(&tf)[0].1, Cause::OomCapacity, "{tf}");
}

#[test]
fn a_missing_driver_explains_the_insufficient_driver_error_printed_before_it() {
    // Without libcuda the runtime reports error 35 ("insufficient"), which reads like an old
    // driver; the missing library is the root even when it is printed second.
    let text = "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n\
ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n";
    let got = explain_text(text.as_bytes());
    assert_eq!(got[0].cause, Cause::EnvLibMissing, "{got:?}");
    assert!(
        got[0]
            .message
            .starts_with("The NVIDIA driver's own library libcuda.so.1 cannot be loaded"),
        "{}",
        got[0].message
    );
}

#[test]
fn driver_installer_errors_by_what_they_mean() {
    let banner = "========== NVIDIA Software Installer ==========\n";
    // A plain failure: no driver until it installs.
    let failed = format!(
        "{banner}ERROR: Unable to open 'kernel/dkms.conf' for copying (No such file or directory)\n"
    );
    let got = explain_text(failed.as_bytes());
    assert_eq!(
        (got[0].code.0.as_str(), got[0].cause),
        ("GD548", Cause::EnvNoDriver)
    );
    assert!(
        got[0].message.contains("kernel/dkms.conf"),
        "{}",
        got[0].message
    );
    // Without the installer's banner a bare `ERROR:` line is someone else's (pip's): a
    // failure, but not the driver's.
    assert_eq!(
        codes("ERROR: Could not find a version that satisfies the requirement torch==9.9\n"),
        [("GD579".to_owned(), Cause::Other, Severity::Error)]
    );
    // A loaded module: a driver is there and in use.
    let loaded = "ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.  This may be because it is in use\n";
    assert_eq!(
        codes(loaded)[0],
        ("GD548".to_owned(), Cause::Other, Severity::Error)
    );
    // DKMS's same-version "error" explains the ERROR line before it, and is only a warning.
    let dkms = "ERROR: Failed to run `/usr/bin/dkms install --no-depmod -m nvidia -v 520.61.05 -k 5.15.84`:\nnvidia.ko:\nModule version 520.61.05 for nvidia.ko\nexactly matches what is already found in kernel 5.15.84.\nDKMS will not replace this module.\n";
    assert_eq!(
        codes(dkms),
        vec![("GD548".to_owned(), Cause::Other, Severity::Warn)]
    );
}

#[test]
fn a_driver_that_lists_no_gpu() {
    for text in [
        "$ nvidia-smi\nNo devices were found\n",
        "   Reason=gres/gpu count reported lower than configured (0 < 8) [slurm@2023-11-02T10:00:00]\n",
    ] {
        let got = explain_text(text.as_bytes());
        assert_eq!(got[0].cause, Cause::EnvVisibleDevices, "{text}");
        assert!(
            got[0]
                .message
                .starts_with("The driver answers but lists no GPU"),
            "{}",
            got[0].message
        );
    }
    // One GPU of eight missing is not "none visible": the node lost a GPU (or its layout
    // changed), a finding of its own.
    let got = explain_text(b"Reason=gres/gpu count reported lower than configured (7 < 8)\n");
    assert_eq!(got[0].cause, Cause::Other);
    assert!(
        got[0].message.starts_with("Slurm drained the node"),
        "{}",
        got[0].message
    );
}

#[test]
fn rust_cuda_crates_errors_and_ptxas_and_hip_faults() {
    // Rust < 1.73 prints the message on the panic line, later versions on the next one.
    for text in [
        "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)', examples/add.rs:10:76\n",
        "thread 'main' panicked at src/main.rs:10:76:\ncalled `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)\n",
    ] {
        assert_eq!(codes(text)[0].1, Cause::EnvArchUnsupported, "{text}");
    }
    assert_eq!(
        codes("thread 'main' panicked at src/main.rs:3:5:\ncalled `Result::unwrap()` on an `Err` value: Cuda(InvalidDevice)\n")[0].1,
        Cause::EnvVisibleDevices
    );
    let ptxas = "ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'\n";
    let got = explain_text(ptxas.as_bytes());
    assert_eq!(got[0].cause, Cause::EnvArchUnsupported);
    assert!(
        got[0].message.contains("ptxas does not know sm_90a"),
        "{}",
        got[0].message
    );
    let hip = "Memory access fault by GPU node-1 (Agent handle: 0x14e4100) on address 0x7f8a068cb000. Reason: Page not present or supervisor privilege.\nAborted (core dumped)\n";
    assert_eq!(codes(hip)[0].1, Cause::IllegalAccess);
}

#[test]
fn families_learnt_from_the_fourth_blind_sample() {
    let cases: [(&str, Cause); 9] = [
        (
            "time=2024-09-03T16:36:00 level=DEBUG msg=\"Unable to load cudart\" library=cudart64_12.dll error=\"your nvidia driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama\"\n",
            Cause::EnvDriverTooOld,
        ),
        (
            "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:0 failed. Status: device kernel image is invalid\n",
            Cause::EnvArchUnsupported,
        ),
        (
            "2019-05-20 20:01:10.441081: E tensorflow/core/common_runtime/direct_session.cc:154] Invalid argument: 'visible_device_list' listed an invalid GPU id '-1' but visible device count is 3\n",
            Cause::EnvVisibleDevices,
        ),
        (
            "RuntimeError: Failed to dlopen libcuda.so\n",
            Cause::EnvLibMissing,
        ),
        (
            "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\n",
            Cause::EnvLibMissing,
        ),
        (
            "$ python -c \"import tensorflow as tf; print(tf.test.is_built_with_cuda())\"\nFalse\n",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "pytorch                   1.11.0              py3.8_cpu_0    pytorch\n",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "torch                    2.1.0+cpu\n",
            Cause::EnvTorchCpuBuild,
        ),
        // The allocator's "not a failure" warning alone names no failure.
        (
            " Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.05GiB. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\n",
            Cause::Other,
        ),
    ];
    assert_primary_causes(&cases);
    // The answer must follow the question: a lone `False` is nothing.
    assert!(codes("False\n").is_empty());
    assert!(codes("torch                    2.1.0+cu121\n").is_empty());
}

#[test]
fn a_pre_2_1_message_leaves_room_for_the_jobs_own_cuda_context() {
    // 4 GiB GPU, 2.58 GiB reserved, 183 MiB free: the 1.24 GiB left over is mostly this
    // process's own context and kernels, which old messages do not count.
    let own = "RuntimeError: CUDA out of memory. Tried to allocate 1024.00 MiB (GPU 0; 4.00 GiB total capacity; 2.56 GiB already allocated; 183.30 MiB free; 2.58 GiB reserved in total by PyTorch)\n";
    assert_eq!(codes(own)[0].1, Cause::OomCapacity);
    // 10 GiB left over beside a 4.4 GiB job is someone else's (374: a neighbour on a
    // time-sliced GPU).
    let others = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.76 GiB total capacity; 4.37 GiB already allocated; 14.75 MiB free; 4.43 GiB reserved in total by PyTorch)\n";
    assert_eq!(codes(others)[0].1, Cause::OomOtherProcess);
    // Less left over than the job itself holds is not blamed on a neighbour: the job's own
    // context, workspaces and a desktop's display take that much (1378, 1430, 606, 1804 and
    // 191, whose threads all found the job too big).
    for own in [
        "RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 7.78 GiB total capacity; 4.40 GiB already allocated; 68.75 MiB free; 4.43 GiB reserved in total by PyTorch)\n",
        "RuntimeError: CUDA out of memory. Tried to allocate 258.00 MiB (GPU 0; 23.54 GiB total capacity; 11.75 GiB already allocated; 572.50 MiB free; 12.40 GiB reserved in total by PyTorch)\n",
    ] {
        assert_ne!(codes(own)[0].1, Cause::OomOtherProcess, "{own}");
    }
}

#[test]
fn iommu_faults_and_gpus_the_driver_could_not_bring_up() {
    // dmesg lines without a trigger word, read after their timestamp.
    let dmar = "[1478401.486621] DMAR: DRHD: handling fault status reg 502\n[1478401.486981] DMAR: [DMA Write] Request device [02:00.0] fault addr cd139000 [fault reason 05] PTE Write access is not set\n[1478401.488053] DMAR: [DMA Write] Request device [82:00.0] fault addr f8139000 [fault reason 05] PTE Write access is not set\n";
    let got = explain_text(dmar.as_bytes());
    assert_eq!(
        (got[0].code.0.as_str(), got[0].cause),
        ("GD207", Cause::NcclError)
    );
    assert!(
        got[0].message.contains("from 02:00.0, 82:00.0"),
        "{}",
        got[0].message
    );
    // A rank prefix is not a timestamp.
    assert!(codes("[rank0]: DMAR: [DMA Write] Request device [02:00.0] fault addr 0\n").is_empty());
    let gsp = "[    3.596579] NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM\n[    3.596583] NVRM RmInitAdapter: Cannot initialize GSP firmware RM\n[    3.596745] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x56:1689)\n";
    assert_eq!(
        codes(gsp)[0],
        ("GD208".to_owned(), Cause::Other, Severity::Error)
    );
    let plain = "[   12.000001] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1281)\n";
    assert_eq!(
        codes(plain)[0],
        ("GD208".to_owned(), Cause::HwXid, Severity::Error)
    );
}

#[test]
fn a_status_in_markdown_underscores_is_still_read() {
    let text = "E c:\\tf_jenkins\\stream_executor\\cuda\\cuda_blas.cc:372] failed to create cublas handle: **_CUBLAS_STATUS_ALLOC_FAILED_**\n";
    let facts = gpu_doctor_scan::scan_bytes("input", text.as_bytes());
    assert!(facts.observations.iter().any(|o| matches!(
        &o.kind,
        gpu_doctor_scan::ObsKind::Cublas(s) if s.status == "CUBLAS_STATUS_ALLOC_FAILED"
    )));
}

#[test]
fn families_learnt_from_the_fifth_blind_sample() {
    let cases: [(&str, Cause); 9] = [
        (
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 3, 2) but linked against (8, 0, 3)\n",
            Cause::EnvLibMissing,
        ),
        (
            "/src/external/hip-on-vdi/rocclr/hip_code_object.cpp:92: guarantee(false && \"hipErrorNoBinaryForGpu: Coudn't find binary for current devices!\")\n",
            Cause::EnvArchUnsupported,
        ),
        (
            "*** Warning: Unknown CUDA device compute capability: 6.1\n",
            Cause::EnvArchUnsupported,
        ),
        (
            "InternalError (see above for traceback): cuDNN launch failure : input shape([1,3,933,613]) filter shape([7,7,3,64])\n",
            Cause::CudnnError,
        ),
        (
            "Is TensorFlow built with CUDA?: False\n",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "[10:25:56] src/operator/./cudnn_convolution-inl.h:517: Check failed: cudnnFindConvolutionForwardAlgorithm(s->dnn_handle_, in_desc_, filter_desc_, conv_desc_, out_desc_, kMaxAlgos, &nalgo, fwd_algo) == CUDNN_STATUS_SUCCESS (2 vs. 0)\n",
            Cause::OomCapacity,
        ),
        (
            "RuntimeError: Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)\n",
            Cause::EnvVisibleDevices,
        ),
        (
            "docker: Error response from daemon: failed to create shim: OCI runtime create failed: ... stderr: nvidia-container-cli: mount error: stat failed: /proc/driver/nvidia/gpus/0000:47:00.0: no such file or directory: unknown.\n",
            Cause::EnvVisibleDevices,
        ),
        (
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\nDuplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000\n",
            Cause::EnvVisibleDevices,
        ),
    ];
    assert_primary_causes(&cases);
    // JAX's "no supported devices" follows the failure that caused it and ranks after it.
    let jax = "E1130 01:36:02.795996     623 platform_util.cc:279] Failed to create stream executor for device CUDA:0: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\njax.errors.JaxRuntimeError: INTERNAL: no supported devices found for platform CUDA\n";
    let got = codes(jax);
    assert_eq!(got[0].1, Cause::OomOtherProcess, "{got:?}");
    assert!(
        got[1..]
            .iter()
            .any(|g| g.1 == Cause::EnvVisibleDevices && g.2 <= Severity::Warn),
        "{got:?}"
    );
    // NVML's `0 bytes` for this process (WSL, some containers) is no evidence of others.
    let wsl = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of 23.43 GiB of which 4.06 MiB is free. Including non-PyTorch memory, this process has 0 bytes memory in use. Of the allocated memory 23.03 GiB is allocated by PyTorch, and 15.67 MiB is reserved by PyTorch but unallocated.\n";
    assert_eq!(codes(wsl)[0].1, Cause::OomCapacity);
}

#[test]
fn families_learnt_from_the_sixth_blind_sample() {
    let cases: [(&str, Cause); 3] = [
        // A hard wrap cut "library" in two.
        (
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:319] Loaded runtime CuDNN l\nibrary: 7.4.1 but source was compiled with: 7.6.4.  CuDNN library major and minor version needs to match\n",
            Cause::EnvLibMissing,
        ),
        (
            "I tensorflow/stream_executor/dso_loader.cc:130] Couldn't open CUDA library libMIOpen.so. LD_LIBRARY_PATH: /opt/rocm/lib\n",
            Cause::EnvLibMissing,
        ),
        (
            "CUDA Exception: Warp Out-of-range Address\nThe exception was triggered at PC 0x7f36c09b68b0\n",
            Cause::IllegalAccess,
        ),
    ];
    assert_primary_causes(&cases);
    // The profiler's library is optional.
    assert!(codes("I tensorflow/stream_executor/dso_loader.cc:130] Couldn't open CUDA library libcupti.so.9.0. LD_LIBRARY_PATH: /usr/local/cuda/lib64\n").is_empty());
}

#[test]
fn a_rank_prefixed_traceback_is_read_like_a_plain_one() {
    let text = "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"train.py\", line 282, in validate\n[rank0]:     out = model(x)\n[rank0]: RuntimeError: CUDA error: out of memory\n";
    let got = explain_text(text.as_bytes());
    assert_eq!(got[0].cause, Cause::OomLeak, "{got:?}");
    assert!(
        got[0].message.contains("in `validate`"),
        "{}",
        got[0].message
    );
}

#[test]
fn families_learnt_from_the_seventh_blind_sample() {
    let cases: [(&str, Cause); 4] = [
        (
            "RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. PyTorch has CUDA version 11.8 whereas TorchAudio has CUDA version 11.7.\n",
            Cause::EnvLibMissing,
        ),
        (
            "2025-06-01 10:00:00.000000: W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc] CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed\n",
            Cause::EnvArchUnsupported,
        ),
        (
            "Failed to start nvml with error:  could not load NVML library\n",
            Cause::EnvLibMissing,
        ),
        (
            "nvidia-container-cli.real: device error: MIG-GPU-932bfb2c-849a-2a22-1e84-9eff6bc02b39/1/0: unknown device\n",
            Cause::EnvVisibleDevices,
        ),
    ];
    assert_primary_causes(&cases);
    let got = explain_text(cases[0].0.as_bytes());
    assert!(
        got[0]
            .message
            .starts_with("torchvision or torchaudio was built for another CUDA"),
        "{}",
        got[0].message
    );
}

#[test]
fn families_learnt_from_the_eighth_blind_sample() {
    let cases: [(&str, Cause); 6] = [
        (
            "I tensorflow/stream_executor/cuda/cuda_dnn.cc:1062] Unable to load cuDNN DSO.\n",
            Cause::EnvLibMissing,
        ),
        (
            " On entry to GEMM_EX  parameter number 9 had an illegal value\nCUBLAS error: 7\n",
            Cause::CublasError,
        ),
        ("CUBLAS error: 13\n", Cause::CublasError),
        (
            "ExternalError:  Cuda error(719), unspecified launch failure.\n",
            Cause::IllegalAccess,
        ),
        (
            "       configuration: driver=nouveau latency=0\n",
            Cause::EnvNoDriver,
        ),
        ("\tKernel driver in use: nouveau\n", Cause::EnvNoDriver),
    ];
    assert_primary_causes(&cases);
    // Free memory equal to the request after rounding is no evidence of fragmentation.
    let even = "RuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 47.54 GiB total capacity; 43.42 GiB already allocated; 1.50 GiB free; 44.20 GiB reserved in total by PyTorch)\n";
    assert_eq!(codes(even)[0].1, Cause::OomCapacity);
}

#[test]
fn a_librarys_own_minimum_compute_capability() {
    let text = "Found GPU(s) with compute capability: [3.7, 3.7]\nRuntimeError: Device 0 does not have CUDA compute capability 5.0 or greater\n";
    let got = explain_text(text.as_bytes());
    assert_eq!(got[0].cause, Cause::EnvArchUnsupported);
    assert!(
        got[0].message.contains("architecture sm_50 or newer"),
        "{}",
        got[0].message
    );
}

#[test]
fn families_learnt_from_the_tenth_blind_sample() {
    let cases: [(&str, Cause); 4] = [
        (
            "    kernel version 515.48.7 does not match DSO version 510.73.5 -- cannot find working devices in this configuration\n",
            Cause::EnvNvmlMismatch,
        ),
        (
            "modprobe: ERROR: could not insert 'nvidia_331_uvm': Function not implemented\ncudaGetDeviceCount returned 30\n",
            Cause::EnvNoDriver,
        ),
        (
            "# Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all\n",
            Cause::EnvVisibleDevices,
        ),
        (
            "nvidia-container-cli: error while loading shared libraries: libnvidia-container.so.1: cannot open shared object file: No such file or directory\n",
            Cause::EnvLibMissing,
        ),
    ];
    assert_primary_causes(&cases);
}

#[test]
fn families_learnt_from_the_eleventh_blind_sample() {
    let cases: [(&str, &str, Cause, Severity); 7] = [
        (
            "OSError: libtorch_cuda_cpp.so: cannot open shared object file: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        (
            // TensorFlow's loader names the search path; the CUDA directory on it is what the
            // scanner's prefilter sees (the line names no CUDA library).
            "2024-06-04 15:42:11.291621: I external/local_tsl/tsl/platform/default/dso_loader.cc:70] Could not load dynamic library 'libnvinfer.so.8.6.1'; dlerror: libnvinfer.so.8.6.1: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda/lib64\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Warn,
        ),
        (
            "W external/local_xla/xla/service/gpu/nvptx_compiler.cc:930] The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version 12.5.82. Because the driver is older than the PTX compiler version, XLA is disabling parallel compilation, which may slow down compilation.\n",
            "GD540",
            Cause::EnvDriverTooOld,
            Severity::Warn,
        ),
        (
            "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
            Severity::Error,
        ),
        (
            "Failed invoking compiler for CUDA C++ program at 0x07fae240a1c80: NVRTC_ERROR_INVALID_OPTION\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        (
            "numba.cuda.cudadrv.driver.LinkerError: [222] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\nptxas application ptx input, line 9; fatal   : Unsupported .version 8.1; current version is '8.0'\n",
            "GD540",
            Cause::EnvDriverTooOld,
            Severity::Error,
        ),
        (
            "Uncorrectable ECC / other uncorrectable memory error @P2-DIMMF1 - Assertion\n",
            "GD209",
            Cause::Other,
            Severity::Error,
        ),
    ];
    assert_primary_findings_with_severity(&cases);
    let explained = explain_text(
        b"Uncorrectable ECC / other uncorrectable memory error @P2-DIMMF1 - Assertion\n",
    );
    assert!(explained[0].message.contains("P2-DIMMF1"), "{explained:?}");
    // The GPU's own ECC errors stay the GPU's; a host's corrected ones are a warning.
    assert_eq!(
        codes("NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer\n")[0].0,
        "GD203"
    );
    assert_eq!(
        codes(
            "[ 1234.5] EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (corrected ECC error)\n"
        )[0],
        ("GD209".to_owned(), Cause::Other, Severity::Warn)
    );
    // An environment warning never outranks a failure, even one ranked low: the cuDNN error
    // after TensorRT's warning and after XLA's is the root cause.
    let failure = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n";
    for warning in [
        "Could not load dynamic library 'libnvinfer.so.8.6.1'; dlerror: libnvinfer.so.8.6.1: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda/lib64\n",
        "The NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, which may slow down compilation.\n",
    ] {
        let got = codes(&format!("{warning}{failure}"));
        assert_eq!(got[0].1, Cause::CudnnError, "{got:?}");
        assert_eq!(got.len(), 2, "{got:?}");
    }
    // TensorFlow's placer: an op without a GPU kernel is the model's placement; no GPU at
    // all is a warning that a missing library printed before it outranks.
    assert_eq!(
        codes(
            "tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for operation MatMul: Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available.\n"
        )[0],
        ("GD549".to_owned(), Cause::Other, Severity::Error)
    );
    let no_gpu = "InvalidArgumentError: Cannot assign a device for operation a: Could not satisfy explicit device specification '/device:GPU:0' because no devices matching that specification are registered in this process; available devices: /job:localhost/replica:0/task:0/device:CPU:0\n";
    assert_eq!(
        codes(no_gpu)[0],
        ("GD549".to_owned(), Cause::EnvVisibleDevices, Severity::Warn)
    );
    let got = codes(&format!(
        "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file\n{no_gpu}"
    ));
    assert_eq!(got[0].0, "GD543", "{got:?}");
    // TensorRT next to another missing library is noise, as before.
    let got = codes(
        "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file\nCould not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file\n",
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].2, Severity::Error);
}

#[test]
fn families_learnt_from_the_twelfth_blind_sample() {
    let cases: [(&str, Cause); 7] = [
        (
            "_pytorch_select           0.1                       cpu_0  \n",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "  jaxlib             conda-forge/linux-64::jaxlib-0.4.4-cpu_py311h7146453_1\n",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "ERROR: This container was built for NVIDIA Driver Release 450.51 or later, but\n       version 440.33.01 was detected and compatibility mode is UNAVAILABLE.\n\n       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n",
            Cause::EnvDriverTooOld,
        ),
        (
            "mxnet.base.MXNetError: [13:48:30] src/engine/threaded_engine.cc:320: Check failed: exec_ctx.dev_id < device_count_ (1 vs. 1) Invalid GPU Id: 1, Valid device id should be less than device_count: 1\n",
            Cause::EnvVisibleDevices,
        ),
        (
            "ERROR: ggml-cuda was compiled without support for the current GPU architecture.\n",
            Cause::EnvArchUnsupported,
        ),
        (
            "$ dkms status\nError! Could not locate dkms.conf file.\nFile: /var/lib/dkms/nvidia/390.48/source/dkms.conf does not exist.\n",
            Cause::EnvNoDriver,
        ),
        // A host-side C assert after a CUDA error is the program giving up, not a kernel's.
        (
            "102 CUDA Error: out of memory\npython3: ./src/cuda.c:36: check_error: Assertion `0' failed.\n",
            Cause::OomCapacity,
        ),
    ];
    assert_primary_causes(&cases);
    // The NGC container's own check names the driver it needs; the 804 after it is its echo.
    let ngc = explain_text(
        b"ERROR: This container was built for NVIDIA Driver Release 450.51 or later, but\n       version 440.33.01 was detected and compatibility mode is UNAVAILABLE.\n\n       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n",
    );
    assert!(!ngc[0].message.contains("804"), "{:?}", ngc[0].message);
    // PyTorch's bare OOM form is an OOM.
    assert!(
        codes("torch.OutOfMemoryError: Allocation on device\n")[0]
            .1
            .is_oom()
    );
    // PyTorch 2.1 in a container lists the job itself as `Process N`: its memory is this
    // job's reservation plus its CUDA context, so the 12 GiB reserved but unallocated is
    // fragmentation, not another process.
    let own = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total capacty of 47.54 GiB of which 11.00 GiB is free. Process 445260 has 36.53 GiB memory in use. Of the allocated memory 23.57 GiB is allocated by PyTorch, and 12.12 GiB is reserved by PyTorch but unallocated.\n";
    assert_eq!(codes(own)[0].1, Cause::OomFragmentation);
    // A process holding far more than the job's reservation is someone else.
    let other = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total capacty of 47.54 GiB of which 1.00 GiB is free. Process 445260 has 30.00 GiB memory in use. Of the allocated memory 15.00 GiB is allocated by PyTorch, and 0.50 GiB is reserved by PyTorch but unallocated.\n";
    assert_eq!(codes(other)[0].1, Cause::OomOtherProcess);
}

#[test]
fn families_learnt_from_the_thirteenth_blind_sample() {
    let cases: [(&str, &str, Cause); 4] = [
        (
            "Aug 29 12:00:56 linux ollama[12550]: time=2025-08-29T12:00:56.249+02:00 level=INFO source=gpu.go:604 msg=\"no nvidia devices detected by library /usr/lib64/libcuda.so.575.64.05\"\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        (
            "2022-11-30 12:50:08,211 - jax._src.lib.xla_bridge - WARNING - No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "/sbin/ldconfig.real: File /usr/lib/x86_64-linux-gnu/libcuda.so.1 is empty, not checked.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // The GPU refusing work until it is reset explains the "busy or unavailable" error.
        (
            "torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n[373871.354096] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2827\n",
            "GD202",
            Cause::HwXid,
        ),
    ];
    assert_primary_findings(&cases);
    // With a driver/DSO mismatch printed before it, JAX's fallback is that mismatch's echo.
    let got = codes(
        "kernel version 515.48.7 does not match DSO version 510.73.5 -- cannot find working devices in this configuration\nNo GPU/TPU found, falling back to CPU.\n",
    );
    assert_eq!(got[0].1, Cause::EnvNvmlMismatch, "{got:?}");
}

#[test]
fn families_learnt_from_the_fourteenth_blind_sample() {
    let cases: [(&str, &str, Cause, Severity); 5] = [
        (
            "TensorFlow was not built with CUDA kernel binaries compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or longer.\n",
            "GD542",
            Cause::EnvArchUnsupported,
            Severity::Warn,
        ),
        (
            "Specified provider 'CUDAExecutionProvider' is not in available provider names. Available providers: 'AzureExecutionProvider, CPUExecutionProvider'\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
            Severity::Error,
        ),
        (
            "error: insufficient privileges to read device list from NVIDIA_VISIBLE_DEVICES envvar\n",
            "GD546",
            Cause::EnvVisibleDevices,
            Severity::Error,
        ),
        (
            "nvidia-docker | 2016/06/07 18:49:33 Error: unsupported CUDA version: driver 7.0 < image 7.5\n",
            "GD540",
            Cause::EnvDriverTooOld,
            Severity::Error,
        ),
        (
            "OSError: (External)  Nccl error, unhandled cuda error  (at /paddle/paddle/fluid/platform/collective_helper.cc:100)\n",
            "GD530",
            Cause::NcclError,
            Severity::Error,
        ),
    ];
    assert_primary_findings_with_severity(&cases);
    let jit = explain_text(
        b"TensorFlow was not built with CUDA kernel binaries compatible with compute capability 9.0. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or longer.\n",
    );
    assert!(jit[0].message.contains("sm_90"), "{}", jit[0].message);
}

#[test]
fn families_learnt_from_the_fifteenth_blind_sample() {
    let cases: [(&str, &str, Cause); 7] = [
        (
            "Ultralytics YOLOv8.1.3 🚀 Python-3.10.11 torch-2.1.0+cpu\nAn Error occurred: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "Cannot use GPU because you have installed CPU version PaddlePaddle.\nIf you want to use GPU, please try to install GPU version PaddlePaddle by: pip install paddlepaddle-gpu\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "ptxas /tmp/compile-ptx-src-ac38de, line 521; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher\nptxas fatal   : Ptx assembly aborted due to errors\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        (
            "  [TRT] [E] 1: [raiiMyelinGraph.h::RAIIMyelinGraph::24] Error Code 1: Myelin (Compiled against cuBLASLt 11.9.2.0 but running against cuBLASLt 11.2.1.0.)\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        (
            "custom call 'xla.gpu.reduce_scatter' failed: external/xla/xla/service/gpu/nccl_utils.cc:134: NCCL operation ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        (
            "[    6.554900] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n               NVRM: BAR0 is 0M @ 0x0 (PCI:0000:01:00.0)\n[    6.554916] NVRM: The NVIDIA probe routine failed for 1 device(s).\n[    6.554922] NVRM: None of the NVIDIA devices were initialized.\n",
            "GD208",
            Cause::Other,
        ),
        // The image's packaging, not a library the job lacks: cause other since the second
        // miss review (two threads of three said so).
        (
            "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/4f79/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown.\n",
            "GD543",
            Cause::Other,
        ),
    ];
    assert_primary_findings(&cases);
    // The Ultralytics banner of a CUDA build is no finding.
    assert!(codes("Ultralytics YOLOv8.1.3 🚀 Python-3.10.11 torch-2.1.0+cu121 CUDA:0 (NVIDIA H200, 143771MiB)\n").is_empty());
    let tensorrt = explain_text(
        b"Myelin (Compiled against cuBLASLt 11.9.2.0 but running against cuBLASLt 11.2.1.0.)\n",
    );
    assert!(
        tensorrt[0].message.contains("11.2.1.0"),
        "{}",
        tensorrt[0].message
    );
}

#[test]
fn families_learnt_from_the_sixteenth_blind_sample() {
    let cases: [(&str, &str, Cause); 3] = [
        (
            "ValueError: This CTranslate2 package was not compiled with CUDA support\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "XGBoostError: [12:54:26] /home/u/xgboost/src/learner.cc:180: XGBoost version not compiled with GPU support.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "Error: stat nvidia.com/gpu=0: no such file or directory\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
    ];
    assert_primary_findings(&cases);
    let ct2 =
        explain_text(b"ValueError: This CTranslate2 package was not compiled with CUDA support\n");
    assert!(ct2[0].message.contains("CTranslate2"), "{}", ct2[0].message);
    // JAX's fallback is a warning: the CUDA error printed before it, which says why the GPU
    // backend did not start, ranks first.
    let got = codes(
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\nNo GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n",
    );
    assert_ne!(got[0].0, "GD541", "{got:?}");
    assert!(
        got.iter().any(|g| g.0 == "GD541" && g.2 == Severity::Warn),
        "{got:?}"
    );
}

#[test]
fn a_failure_no_rule_knows_is_reported_as_other_not_as_no_problem() {
    let traceback = "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    labels = targets[:, 0].long()\nAssertionError: Label class 24 exceeds nc=24 in yolo.yaml\n";
    assert_primary_findings_with_severity(&[
        (traceback, "GD579", Cause::Other, Severity::Error),
        // The exception that ended the job: the last of a chain, over the crash after it.
        (
            "cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_COMPILATION (6)\nDuring handling of the above exception, another exception occurred:\ncupy.cuda.compiler.CompileException: nvrtc: error: failed\nSegmentation fault (core dumped)\n",
            "GD579",
            Cause::Other,
            Severity::Error,
        ),
        (
            "F0823 10:05:15.257066  3197 hl_cuda_cublas.cc:137] Check failed: CUBLAS_STATUS_SUCCESS == g_cublasStat (0 vs. 1)\nAborted (core dumped)\n",
            "GD579",
            Cause::Other,
            Severity::Error,
        ),
    ]);
    let findings = super::explain_text(
        b"cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_COMPILATION (6)\nDuring handling of the above exception, another exception occurred:\ncupy.cuda.compiler.CompileException: nvrtc: error: failed\nSegmentation fault (core dumped)\n",
    );
    assert!(
        findings[0]
            .message
            .contains("failed with `cupy.cuda.compiler.CompileException: nvrtc: error: failed`"),
        "{}",
        findings[0].message
    );
    assert_eq!(findings[0].evidence[0].line, Some(3));
}

#[test]
fn nccl_looking_for_its_optional_plugins_is_not_a_missing_library() {
    for line in [
        &b"host:1:2 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation\n"[..],
        b"host:1:2 [0] NCCL INFO TUNER/Plugin: Plugin load returned 11 : libnccl-tuner.so: cannot open shared object file: No such file or directory : when loading libnccl-tuner.so\n",
    ] {
        assert!(explain_text(line).is_empty(), "{}", String::from_utf8_lossy(line));
    }
}

#[test]
fn a_failure_that_the_job_went_on_after_is_a_warning_and_the_end_wins() {
    // A handled exception early, then 300 more lines of training.
    let mut log = String::from(
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='hub'): Max retries exceeded\n",
    );
    for step in 0..300 {
        log += &["step ", &step.to_string(), " loss 0.1\n"].concat();
    }
    assert_primary_findings_with_severity(&[(log.as_str(), "GD579", Cause::Other, Severity::Warn)]);
    // A crash at the end is what ended the job, not an exception long before it.
    log.push_str("Segmentation fault (core dumped)\n");
    let findings = explain_text(log.as_bytes());
    assert_eq!(findings[0].severity, Severity::Error);
    assert!(
        findings[0].message.contains("crashed"),
        "{}",
        findings[0].message
    );
    // Launcher prefixes do not hide an exception line without a trigger word.
    assert_primary_findings(&[(
        "[default0]:[rank1]: ValueError: too many values to unpack (expected 2)\n",
        "GD579",
        Cause::Other,
    )]);
}

#[test]
fn a_failure_line_goes_after_the_last_warning_whatever_info_there_is() {
    // TensorFlow's harmless allocator note (info), JAX's CPU fallback (a warning), then a
    // failure of no known cause: the warning, the failure, then the note.
    let text = "W tensorflow/core/common_runtime/bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.25GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\nWARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\nValueError: shapes (3,) and (4,) not aligned\n";
    let got: Vec<String> = codes(text).into_iter().map(|c| c.0).collect();
    assert_eq!(got, ["GD541", "GD579", "GD505"]);
}

#[test]
fn a_failure_line_stays_silent_when_a_rule_found_the_error_and_below_warnings() {
    // A known error explains the exception line that carries it and the crash after it.
    let codes_of = |text: &str| codes(text).into_iter().map(|c| c.0).collect::<Vec<_>>();
    assert_eq!(
        codes_of(
            "RuntimeError: CUDA error: an illegal memory access was encountered\nSegmentation fault (core dumped)\n"
        ),
        ["GD510"]
    );
    // An environment warning often explains what failed after it: it stays first.
    let warned = codes_of(
        "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\nValueError: shapes (3,) and (4,) not aligned\n",
    );
    assert_eq!(warned, ["GD541", "GD579"]);
}

#[test]
fn round_17_families() {
    assert_primary_findings(&[
        // Any shared library the loader cannot find is a missing library, CUDA's or not
        // (ROCm/legacy-rocm-build#1852, CannyLab/tsne-cuda#6, pytorch's caffe2_nvrtc on Windows).
        (
            "ImportError: libhsa-runtime64.so.1: cannot open shared object file: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        (
            "OSError: libfaiss.so: cannot open shared object file: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        (
            "OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\venv\\lib\\site-packages\\torch\\lib\\caffe2_nvrtc.dll\" or one of its dependencies.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // FAISS's CPU-only package (facebookresearch/deepcluster#56).
        (
            "AttributeError: 'module' object has no attribute 'StandardGpuResources'\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // FAISS's temporary memory could not be allocated (facebookresearch/faiss#19).
        (
            "Faiss assertion err == cudaSuccess failed in char* faiss::gpu::StackDeviceMemory::Stack::getAlloc\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // NCCL's error return trace after a warning that names no failure (NVIDIA/nccl#1176).
        (
            "host-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4\nhost-2:4827:6900 [4] NCCL INFO bootstrap.cc:554 -> 3\n",
            "GD530",
            Cause::NcclError,
        ),
        // cuBLAS on a GPU older than it supports (NVIDIA/DeepLearningExamples#147).
        (
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  [FT][ERROR] CUBLAS_STATUS_ARCH_MISMATCH\n",
            "GD520",
            Cause::EnvArchUnsupported,
        ),
        // TensorFlow's devices chosen too late; DeepSpeed's slots against CUDA_VISIBLE_DEVICES.
        (
            "RuntimeError: Visible devices cannot be modified after being initialized\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        (
            "ValueError: No slot '2' specified on host 'localhost'\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // The GPU Operator's driver container on a host with its own driver (gpu-operator#126).
        (
            "Unloading NVIDIA driver kernel modules...\nCould not unload NVIDIA driver kernel modules, driver is in use\n",
            "GD548",
            Cause::Other,
        ),
    ]);
    // A library of CUDA's own keeps its CUDA advice; another's gets the loader's.
    let cuda = explain_text(b"ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n");
    assert!(
        cuda[0]
            .message
            .starts_with("libcudart.so.12 cannot be loaded: the CUDA library"),
        "{}",
        cuda[0].message
    );
    let other = explain_text(
        b"OSError: libfaiss.so: cannot open shared object file: No such file or directory\n",
    );
    assert!(
        other[0]
            .message
            .contains("it is not one of CUDA's libraries"),
        "{}",
        other[0].message
    );
    // A success code, or NCCL's "in progress" (7), is not an error.
    assert!(
        explain_text(
            b"host:1:2 [0] NCCL INFO init.cc:100 -> 7\nhost:1:2 [0] NCCL INFO init.cc:100 -> 0\n"
        )
        .is_empty()
    );
}

#[test]
fn round_18_families() {
    assert_primary_findings(&[
        // TensorRT's error lines are failure lines: an engine serialized by another version
        // (NVIDIA/TensorRT#2195).
        (
            "[08/01/2022-15:41:44] [TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::35] Error Code 1: Serialization (Serialization assertion safeVersionRead == safeSerializationVersion failed.Version tag does not match.)\n[08/01/2022-15:41:44] [TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)\n",
            "GD579",
            Cause::Other,
        ),
        // Blender Cycles' own words for an illegal address.
        (
            "Illegal address in CUDA queue copy_from_device (integrator_shade_surface integrator_sorted_paths_array prefix_sum)\n",
            "GD510",
            Cause::IllegalAccess,
        ),
        // A module left loaded after the driver's files were updated: its GSP firmware is gone,
        // and the API mismatch explains the failed init (ublue-os/bazzite#2668).
        (
            "[   12.107719] NVRM: API mismatch: the client has the version 570.153.02, but\n               NVRM: this kernel module has the version 570.144.  Please\n[   23.991660] nvidia 0000:07:00.0: Direct firmware load for nvidia/570.144/gsp_ga10x.bin failed with error -2\n[   23.991667] NVRM: RmFetchGspRmImages: No firmware image found\n[   23.991672] NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)\n",
            "GD544",
            Cause::EnvNvmlMismatch,
        ),
        // Without the mismatch, the missing firmware is the finding, not a failing GPU.
        (
            "[   23.991660] nvidia 0000:07:00.0: Direct firmware load for nvidia/570.144/gsp_ga10x.bin failed with error -2\n[   23.991672] NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)\n",
            "GD208",
            Cause::Other,
        ),
    ]);
    // TensorRT's out-of-memory errors while it picks tactics are not failures: it skips the
    // tactic and goes on, and the build often succeeds (NVIDIA/TensorRT#2682 is one that did
    // not, and says so only in the thread).
    // They say so as information (GD505), never as the failure.
    let tactics = explain_text(b"[02/15/2023-06:20:02] [E] Error[2]: [virtualMemoryBuffer.cpp::resizePhysical::145] Error Code 2: OutOfMemory (no further information)\n[02/15/2023-06:20:02] [W] [TRT] Skipping tactic 2 due to insufficient memory on requested size of 2147483648 detected for tactic 0x0000000000000000.\n");
    assert!(
        tactics
            .iter()
            .all(|f| f.severity == Severity::Info && f.code.0 == "GD505"),
        "{tactics:?}"
    );
    // nouveau's firmware lives under nvidia/ too: not the NVIDIA driver's GSP.
    for line in [
        &b"[    3.1] nouveau 0000:01:00.0: Direct firmware load for nvidia/gp107/acr/ucode_load.bin failed with error -2\n"[..],
        b"[    3.1] nouveau 0000:01:00.0: Direct firmware load for nvidia/ad102/gsp/gsp-535.113.01.bin failed with error -2\n",
    ] {
        assert!(explain_text(line).is_empty(), "{}", String::from_utf8_lossy(line));
    }
    let missing = explain_text(b"[   23.991667] NVRM: RmFetchGspRmImages: No firmware image found\n[   23.991672] NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)\n");
    assert!(
        missing[0]
            .message
            .contains("GSP firmware file for the loaded kernel module's version is not installed"),
        "{}",
        missing[0].message
    );
}

#[test]
fn a_missing_nvidia_smi_and_the_runtimes_timeout_say_less_than_no_driver() {
    assert_primary_findings_with_severity(&[
        (
            "bash: nvidia-smi: command not found\n",
            "GD545",
            Cause::Other,
            Severity::Warn,
        ),
        (
            "'nvidia-smi' is not recognized as an internal or external command,\n",
            "GD545",
            Cause::Other,
            Severity::Warn,
        ),
        (
            "docker: Error response from daemon: OCI runtime create failed: nvidia-container-cli: initialization error: driver rpc error: timed out: unknown.\n",
            "GD545",
            Cause::Other,
            Severity::Error,
        ),
        // Its words before 1.0 (1155).
        (
            "docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container process caused \"process_linux.go:402: container init caused \\\"process_linux.go:385: running prestart hook 1 caused \\\\\\\"error running hook: exit status 1, stdout: , stderr: exec command: [/usr/bin/nvidia-container-cli --load-kmods configure]\\\\\\\\nnvidia-container-cli: initialization error: driver error: timed out\\\\\\\\n\\\\\\\"\\\"\": unknown.\n",
            "GD545",
            Cause::Other,
            Severity::Error,
        ),
        // A real "no driver" beside it is the finding.
        (
            "bash: nvidia-smi: command not found\nRuntimeError: Found no NVIDIA driver on your system.\n",
            "GD545",
            Cause::EnvNoDriver,
            Severity::Error,
        ),
    ]);
}

#[test]
fn assertion_macros_and_fatal_tools_are_failure_lines() {
    assert_primary_findings(&[
        (
            "ik_llama.cpp\\ggml\\src\\ggml-cuda\\mmvq.cu:595: GGML_ASSERT(src0->ne[2] == src1->ne[2]) failed\n",
            "GD579",
            Cause::Other,
        ),
        (
            "modprobe: FATAL: Module fake_nvidia_driver not found in directory /lib/modules/5.15.0-142-generic\n",
            "GD579",
            Cause::Other,
        ),
    ]);
}

#[test]
fn round_19_families() {
    assert_primary_findings(&[
        // vLLM's KV cache too small for the model's context (basalam/product-catalog-generator#10).
        (
            "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664). Try increasing gpu_memory_utilization or decreasing max_model_len when initializing the engine.\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // Ultralytics' device check (fcakyon/yolov5-pip#149).
        (
            "AssertionError: Invalid CUDA '--device cuda' requested, use '--device cpu' or pass valid CUDA device(s)\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // Fabric Manager of another driver release (NVIDIA/gpu-operator#544).
        (
            "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver version 530.41.03. Please update with matching NVIDIA driver package.\n",
            "GD544",
            Cause::EnvNvmlMismatch,
        ),
        // nvidia-docker 1 without the UVM module; FFmpeg without libcuda.
        (
            "nvidia-docker | 2016/07/13 23:40:32 Error: Could not load UVM kernel module\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        ("Cannot load libcuda.so.1\n", "GD543", Cause::EnvLibMissing),
    ]);
    let kv = explain_text(b"ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664).\n");
    assert!(
        kv[0].message.contains("context of 4096 tokens"),
        "{}",
        kv[0].message
    );
    assert_eq!(
        kv[0].remedies[1].command.as_deref(),
        Some("vllm serve MODEL --max-model-len 3664")
    );
}

#[test]
fn round_20_families() {
    assert_primary_findings(&[
        // PyTorch 1.x's cuDNN check (xingyizhou/CenterNet#119).
        (
            "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7605\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // A device assert hard-wrapped inside `failed` (torch/cunn#448).
        (
            "/build/torch7-cunn-git/lib/THCUNN/ClassNLLCriterion.cu:52: void cunn_ClassNLLCriterion_updateOutput_kernel(Dtype *, Dtype *, Dtype *, long *, Dtype *, int, int, int, int) [with Dtype = float, Acctype = float]: block: [0,0,0], thread: [2,0,0] Assertion `t >= 0 && t < n_classes` fail\ned.\n",
            "GD511",
            Cause::DeviceAssert,
        ),
        // LightGBM without its GPU learner (microsoft/LightGBM).
        (
            "[LightGBM] [Fatal] GPU Tree Learner was not enabled in this build.\nPlease recompile with CMake option -DUSE_GPU=1\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // ONNX Runtime's TensorRT provider without TensorRT: a warning, it falls back.
        (
            "EP Error /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1193 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_tensorrt.so with error: libnvinfer.so.8: cannot open shared object file: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // The open kernel module on a Pascal GPU; the failed init after it is its knock-on.
        (
            "[   87.358035] NVRM: The NVIDIA GPU 0000:03:00.0 (PCI ID: 10de:1bb3)\n               NVRM: installed in this system is not supported by open\n               NVRM: nvidia.ko because it does not include the required GPU\n[  988.289884] NVRM: GPU 0000:03:00.0: RmInitAdapter failed! (0x24:0x72:1603)\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
    ]);
}

#[test]
fn round_21_families() {
    assert_primary_findings(&[
        // TensorFlow 1.x on Windows (EdjeElectronics object-detection tutorial).
        (
            "ImportError: Could not find 'cudart64_100.dll'. TensorFlow requires that this DLL be installed in a directory that is named in your %PATH% environment variable.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // hashcat's thermal throttle.
        (
            "Driver temperature threshold met on GPU #3. Expect reduced performance.\n",
            "GD205",
            Cause::HwThermalPower,
        ),
        // FFmpeg's NVENC needs a newer driver; its lines name no trigger word.
        (
            "[hevc_nvenc @ 0x555556525380] Driver does not support the required nvenc API version. Required: 12.0 Found: 11.1\n[hevc_nvenc @ 0x555556525380] The minimum required Nvidia driver for nvenc is 520.56.06 or newer\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
    ]);
}

#[test]
fn round_22_families() {
    assert_primary_findings_with_severity(&[
        // TensorRT 7 on an Ampere GPU (NVIDIA/TensorRT#2332).
        (
            "INTERNAL_ERROR: Assertion failed: Unsupported SM.\n../rtSafe/cuda/caskUtils.cpp:80\nAborting...\n",
            "GD542",
            Cause::EnvArchUnsupported,
            Severity::Error,
        ),
        // TVM's target check (tile-ai/tilelang, sm_100 before its release supported it).
        (
            "tvm.error.InternalError: Check failed: (0) is false: Not supported cuda -keys=cuda,gpu -arch=sm_100 -max_num_threads=1024 -thread_warp_size=32\n",
            "GD542",
            Cause::EnvArchUnsupported,
            Severity::Error,
        ),
        // DyNet's cuBLAS check, the status number on its own line (clab/dynet#681).
        (
            "CUBLAS failure in cublasSgemm(dev.cublas_handle, CUBLAS_OP_N, CUBLAS_OP_N, y.d.rows(), l.d.cols())\n13\nRuntimeError: cublasSgemm(dev.cublas_handle, CUBLAS_OP_N)\n",
            "GD520",
            Cause::CublasError,
            Severity::Error,
        ),
        // FAISS's check of a cuBLAS call (facebookresearch/faiss, status 13).
        (
            "Faiss assertion 'err == CUBLAS_STATUS_SUCCESS' failed in void faiss::gpu::runMatrixMult() at MatrixMult-inl.cuh:265; details: cublas failed (13): (512, 128) x (3516, 128)' = (512, 3516)\n",
            "GD520",
            Cause::CublasError,
            Severity::Error,
        ),
        // hashcat's heat watchdog stopping the job (hashcat#1569).
        (
            "HWMon.Dev.#3.....: Temp: 88c Fan:  0% Util: 91% Core:1030MHz Mem:1000MHz Bus:4\n\nTemperature limit on GPU #3 reached, aborting...\n",
            "GD205",
            Cause::HwThermalPower,
            Severity::Error,
        ),
        // LLVM's host allocator (hashcat#2338: 8 GB of RAM for four 11 GB GPUs).
        (
            "LLVM ERROR: out of memory\n",
            "GD506",
            Cause::Other,
            Severity::Error,
        ),
        // FFmpeg's NVDEC in a container without the video capability (NVIDIA/nvidia-docker).
        (
            "[h264_cuvid @ 0x1ec8780] Cannot load libnvcuvid.so.1\n[h264_cuvid @ 0x1ec8780] Failed loading nvcuvid.\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        // CUDA's compiler front end without its libnvvm (warp-ctc build).
        (
            "cicc: error while loading shared libraries: libnvvm.so.3: cannot open shared object file: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        // numba-cuda on Windows with CUDA 13's layout (NVIDIA/numba-cuda#397).
        (
            "        Trying to open library...       ERROR: failed to open nvvm:\nCould not find module 'nvvm.dll' (or one of its dependencies). Try using the full path with constructor syntax.\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        // CUDA 46 is not a visibility problem: MPS inside a container, an unlicensed vGPU.
        (
            "F0612 09:44:13.811357 3016 common.cpp:152] Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable\n",
            "GD546",
            Cause::Other,
            Severity::Error,
        ),
        (
            "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n",
            "GD546",
            Cause::Other,
            Severity::Error,
        ),
    ]);
}

#[test]
fn no_device_at_all_is_told_apart_from_an_index_out_of_range() {
    let message = |text: &str| explain_text(text.as_bytes())[0].message.clone();
    let none = message(
        "RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at /pytorch/aten/src/THC/THCGeneral.cpp:50\n",
    );
    assert!(none.contains("showed the job no GPU"), "{none}");
    let index = message("RuntimeError: CUDA error: invalid device ordinal\n");
    assert!(index.contains("device index is out of range"), "{index}");
}

#[test]
fn miss_review_families() {
    assert_primary_findings(&[
        // `lspci -k` pasted into a thread as a Markdown quote: nouveau drives the NVIDIA GPU
        // (tpruvot/ccminer).
        (
            "> 08:00.0 3D controller: NVIDIA Corporation GK208M [GeForce 920M] (rev a1)\n>         Subsystem: Dell Device 06ae\n>         Kernel driver in use: nouveau\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        // Docker asked for GPUs by count and by ID at once (docker/cli).
        (
            "docker: Error response from daemon: cannot set both Count and DeviceIDs on device request.\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // NCCL's warning without its host prefix (NVIDIA/nccl#2428).
        (
            "NCCL WARN NET/IB : Unable to open device erdma_1\n",
            "GD530",
            Cause::NcclError,
        ),
        // NCCL 2.25 on an RTX 5090 (NVIDIA/nccl, fixed in 2.26).
        (
            "localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n",
            "GD530",
            Cause::NcclError,
        ),
        // An oops inside nvidia_uvm during suspend.
        (
            "BUG: kernel NULL pointer dereference, address: 0000000000000000\nOops: 0000 [#1] SMP PTI\nRIP: 0010:_raw_q_schedule+0x2f/0xb0 [nvidia_uvm]\nCall Trace:\n nv_kthread_q_flush+0x7f/0x130 [nvidia_uvm]\n",
            "GD210",
            Cause::Other,
        ),
    ]);
    assert_primary_findings_with_severity(&[
        // `sinfo -R`: Slurm drained a node that lost one of its GPUs (or changed its MIG
        // layout; ComputeCanada/puppet-magic_castle#361).
        (
            "gres/gpu count reported lower than configured (3 < 4)  slurm  2024-05-23T12:49:52 nodegpu1\n",
            "GD546",
            Cause::Other,
            Severity::Error,
        ),
        // `nvidia-smi -q` on an unlicensed virtual GPU.
        (
            "    vGPU Software Licensed Product\n        Product Name                      : NVIDIA Virtual Compute Server\n        License Status                    : Unlicensed\n",
            "GD546",
            Cause::Other,
            Severity::Error,
        ),
        // A diagnostics script's own wording, with the module loaded (canonical/data-science-stack).
        (
            "nvidia-smi not found, NVIDIA GPU Driver not installed correctly.\n",
            "GD545",
            Cause::Other,
            Severity::Warn,
        ),
        // deepmd-kit's CUDA check (deepmodeling/deepmd-kit#533).
        (
            "cuda assert: invalid argument /source/lib/include/gpu_cuda.h 48.\n",
            "GD547",
            Cause::Other,
            Severity::Error,
        ),
        // cuInit through a compatibility shim (shkhln/libc6-shim#13).
        (
            "  cu->cuInit(0) failed -> CUDA_ERROR_OPERATING_SYSTEM: OS call failed or operation not supported on this OS\n",
            "GD547",
            Cause::Other,
            Severity::Error,
        ),
        // vLLM's worker and logger prefixes before an assertion (vllm-project/vllm, XPU).
        (
            "(EngineCore_DP0 pid=418) ERROR 01-29 15:38:21 [core.py:946]     assert self.init_snapshot.free_memory > free_gpu_memory, (\n(EngineCore_DP0 pid=418) ERROR 01-29 15:38:21 [core.py:946] AssertionError: Error in memory profiling. Initial free memory 30.3 GiB, current free memory 30.3 GiB.\n",
            "GD579",
            Cause::Other,
            Severity::Error,
        ),
        // hashcat beside Mesa's OpenCL runtime, which has no device (hashcat#2463).
        (
            "$ hashcat -I\nhashcat (v6.0.0) starting...\nclGetDeviceIDs(): CL_DEVICE_NOT_FOUND\nclGetDeviceIDs(): CL_DEVICE_NOT_FOUND\n",
            "GD545",
            Cause::Other,
            Severity::Error,
        ),
        // A notebook's traceback header, the message line cut off (stardist).
        (
            "---------------------------------------------------------------------------\nResourceExhaustedError                    Traceback (most recent call last)\n<ipython-input-6-16ede791f3d3> in <module>()\n",
            "GD500",
            Cause::OomCapacity,
            Severity::Error,
        ),
    ]);
    // Frames of NVIDIA's module on a call trace are not a crash in it, nor is an oops in
    // another module.
    assert!(explain_text(b"Call Trace:\n nv_kthread_q_flush+0x7f/0x130 [nvidia_uvm]\n").is_empty());
    assert!(explain_text(b"RIP: 0010:mempool_free+0x2f/0x80 [dm_mod]\n").is_empty());
}

#[test]
fn situations_of_cause_other_that_break_later_calls_rank_first() {
    assert_primary_findings(&[
        (
            "RIP: 0010:_raw_q_schedule+0x2f/0xb0 [nvidia_uvm]\nRuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle)`\n",
            "GD210",
            Cause::Other,
        ),
        (
            "        License Status                    : Unlicensed\nRuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n",
            "GD546",
            Cause::Other,
        ),
    ]);
}

#[test]
fn linker_sanitizer_compiler_installer_and_passthrough_families() {
    assert_primary_findings_with_severity(&[
        // Triton linking its launcher without the unversioned libcuda.so (triton#1981).
        (
            "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status\nTraceback (most recent call last):\n  File \"<string>\", line 21, in add_kernel\nKeyError: ('2-.-0-.-0--d6252949da17ceb5f3a278a70250af13',)\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        // scikit-cuda's own search for cuBLAS (scikit-cuda#179).
        (
            "  File \"C:\\Anaconda2\\Lib\\site-packages\\skcuda\\cublas.py\", line 55, in <module>\n    raise OSError('cublas library not found')\nOSError: cublas library not found\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        // compute-sanitizer's racecheck since CUDA 12: a race is a logic bug, not a bad address
        // (HeCBench#253).
        (
            "========= Error: Race reported between Write access at surfel_render_tile<float, 256>+0x310\n=========     and Read access at surfel_render_tile<float, 256>+0x4a0 [12808 hazards]\n========= RACECHECK SUMMARY: 21 hazards displayed (21 errors, 0 warnings)\n",
            "GD571",
            Cause::Other,
            Severity::Error,
        ),
        // An invalid access beside a race is still an illegal access.
        (
            "========= Error: Race reported between Write access at k+0x10\n========= Invalid __global__ write of size 4 bytes\n",
            "GD571",
            Cause::IllegalAccess,
            Severity::Error,
        ),
        // nvcc older than the GPU (Blender Cycles with CUDA 9 on sm_75).
        (
            "\"/usr/local/cuda/bin/nvcc\" -arch=sm_75 --cubin kernel.cu\nnvcc fatal   : Value 'sm_75' is not defined for option 'gpu-architecture'\nCUDA kernel compilation failed, see console for details.\n",
            "GD542",
            Cause::EnvArchUnsupported,
            Severity::Error,
        ),
        // nvidia-installer's compiler check (void-packages#5287).
        (
            "gcc-version-check failed:\n\nThe compiler used to compile the kernel (gcc\n4.9) does not exactly match the current compiler\n(gcc 6.2).\n",
            "GD548",
            Cause::EnvNoDriver,
            Severity::Error,
        ),
        // The firmware framebuffer holds a passed-through GPU's window (harvester/pcidevices#81),
        // behind `dmesg -T`'s timestamp and with a typographic apostrophe.
        (
            "[Wed Jun 12 02:42:37 2024] vfio-pci 0000:b3:00.0: vfio_ecap_init: hiding ecap 0x19@0x900\n[Wed Jun 12 02:42:37 2024] vfio-pci 0000:b3:00.0: BAR 1: can\u{2019}t reserve [mem 0xe0000000-0xefffffff 64bit pref]\n",
            "GD208",
            Cause::Other,
            Severity::Error,
        ),
        (
            "[ 12.345678] vfio-pci 0000:0b:00.0: BAR 3: can't reserve [mem 0xf0000000-0xf1ffffff 64bit pref]\n",
            "GD208",
            Cause::Other,
            Severity::Error,
        ),
        // XLA refusing a ptxas it knows to be buggy, behind TensorFlow's timestamp (case 801).
        (
            "2024-06-06 09:03:48.670640: F external/local_xla/xla/service/gpu/nvptx_compiler.cc:619] ptxas returned an error during compilation of ptx to sass: 'INTERNAL: ptxas 12.3.103 has a bug that we think can affect XLA. Please use a different version.'\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        // CuPy's NcclError failing in its own constructor for a status it does not know
        // (case 952).
        (
            "    comm = nccl.NcclCommunicator(comm_size, self.nccl_comm_id, comm_rank)\n  File \"cupy_backends/cuda/libs/nccl.pyx\", line 282, in cupy_backends.cuda.libs.nccl.NcclCommunicator.__init__\n  File \"cupy_backends/cuda/libs/nccl.pyx\", line 117, in cupy_backends.cuda.libs.nccl.NcclError.__init__\nKeyError: 6\n",
            "GD530",
            Cause::NcclError,
            Severity::Error,
        ),
        // ethminer's driver check with the driver's CUDA (ethminer#1640), and Redshift naming
        // the driver it needs (a Deadline render farm's log).
        (
            "CUDA error: Insufficient CUDA driver: 9020\n",
            "GD540",
            Cause::EnvDriverTooOld,
            Severity::Error,
        ),
        (
            "2025/06/27 11:04:57-05:00 ADAPTOR_OUTPUT: STDOUT: Redshift Error: Please make sure you have NVIDIA driver 551.78 or later installed.\n2025/06/27 11:04:57-05:00 ADAPTOR_OUTPUT: STDOUT: Redshift Error: Failed to load module binary! Either kernel is bad or the driver has crashed!\n",
            "GD540",
            Cause::EnvDriverTooOld,
            Severity::Error,
        ),
        // cuFFT's catch-all on an RTX 40-series with CUDA 11.7's cuFFT (AudioLDM#49).
        (
            "    return _VF.stft(input, n_fft, hop_length, win_length, window,  # type: ignore[attr-defined]\nRuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
    ]);
    // The messages name what the lines say.
    let linker =
        &explain_text(b"/usr/bin/ld: cannot find -lcudart: No such file or directory\n")[0];
    assert!(
        linker
            .message
            .starts_with("The linker cannot find libcudart.so,"),
        "{}",
        linker.message
    );
    // racecheck's hazard form alone is a race too.
    let hazard = &explain_text(
        b"========= Error: Potential RAW hazard detected at __shared__ 0x57c in block (2,0,0) :\n",
    )[0];
    assert_eq!(
        (hazard.code.0.as_str(), hazard.cause),
        ("GD571", Cause::Other)
    );
    let nvcc = &explain_text(b"nvcc fatal   : Unsupported gpu architecture 'compute_89'\n")[0];
    assert!(
        nvcc.message.contains("compute_89 needs CUDA 11.8"),
        "{}",
        nvcc.message
    );
    let ethminer = &explain_text(b"CUDA error: Insufficient CUDA driver: 9020\n")[0];
    assert!(
        ethminer.message.contains("up to 9.2"),
        "{}",
        ethminer.message
    );
    let redshift = &explain_text(
        b"Redshift Error: Please make sure you have NVIDIA driver 551.78 or later installed.\n",
    )[0];
    assert!(
        redshift.message.contains("driver 551.78 or later"),
        "{}",
        redshift.message
    );
    let gcc = &explain_text(b"gcc-version-check failed:\n")[0];
    assert!(
        has_remedy_command(gcc, "IGNORE_CC_MISMATCH"),
        "{:?}",
        gcc.remedies
    );
    // A linker that misses some other library is not a CUDA problem.
    assert!(explain_text(b"/usr/bin/ld: cannot find -lcudafoo\n").is_empty());
}

/// Families from the second reading of the 2026-11-30 miss review (each names its case).
#[test]
fn second_miss_review_families() {
    assert_primary_findings(&[
        // A device assert whose words were machine-translated, full-width punctuation and all
        // (589).
        (
            "../aten/src/ATen/native/cuda/IndexKernel.cu：92： operator（）： block： [3358,0,0]， thread： [50,0,0] 断言失败。\n",
            "GD511",
            Cause::DeviceAssert,
        ),
        // A check macro's report under a `CUDA Error:` header (621).
        (
            "CUDA Error:\n    File:       inference.cpp\n    Line:       558\n    Error code: 98\n    Error text: invalid device function\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // CUDA-graph capture errors, here only in PyTorch's advice line (393).
        (
            "Search for `cudaErrorStreamCaptureUnsupported' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n",
            "GD547",
            Cause::Other,
        ),
        (
            "RuntimeError: CUDA error: operation not permitted when stream is capturing\n",
            "GD547",
            Cause::Other,
        ),
        // Lightning asked for GPUs the process cannot see, its exception printed as a repr
        // (709).
        (
            "MisconfigurationException('You requested gpu: [0, 1, 2, 3, 4, 5, 6, 7]\\n But your machine only has: [0]')\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // ldd resolving the driver's library to the toolkit's stub (945).
        (
            "        libcuda.so.1 => /usr/local/cuda/lib64/stubs/libcuda.so.1 (0x00007f9de7215000)\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // A GPU reset refused while persistenced holds the GPU (959).
        (
            "GPU 00000000:C1:00.0 is currently in use by another process.\n",
            "GD546",
            Cause::Other,
        ),
        // cuInit's 999 from FFmpeg in an LXC guest (1000).
        (
            "[AVHWDeviceContext @ 0x5b728ecb6040] cu->cuInit(0) failed -> CUDA_ERROR_UNKNOWN: unknown error\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        // PyTorch's OOM wrapped before its numbers: reserved-but-unused 6.50 GiB covers what
        // was missing (486).
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 7.31 GiB \n(GPU 0; 11.92 GiB total capacity; 307.86 MiB already allocated; 4.36 GiB free; 6.80 GiB cached)\n",
            "GD501",
            Cause::OomFragmentation,
        ),
        // TensorFlow's stream executor could not get 2 KiB from the driver (580).
        (
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:932] failed to allocate 2.2K (2304 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY\n",
            "GD502",
            Cause::OomOtherProcess,
        ),
        // The BFC allocator's bin dump without its headline (609).
        (
            "2019-02-28 09:53:16.315962: I tensorflow/core/common_runtime/bfc_allocator.cc:597] Bin (1048576):       Total Chunks: 1, Chunks in use: 0. 1.00MiB allocated for chunks. 0B in use in bin. 0B client-requested in use in bin.\n",
            "GD500",
            Cause::OomCapacity,
        ),
    ]);
    assert_primary_findings_with_severity(&[
        // cuda-gdb reporting calls the program handles itself (368): a warning.
        (
            "warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)\n",
            "GD547",
            Cause::Other,
            Severity::Warn,
        ),
        // A shim libnvidia-ml on LD_LIBRARY_PATH (630): its missing function explains NVML's
        // unknown error.
        (
            "LD_LIBRARY_PATH=`pwd` nvidia-smi\nFailed to initialize NVML: Unknown Error\nFailed to properly shut down NVML: Function Not Found\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        // TensorFlow without cuDNN (726) and without XLA's CUDA pieces (839).
        (
            "UnknownError: Graph execution error:\n\nFail to find the dnn implementation.\n\t [[{{node CudnnRNN}}]]\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
        (
            "tensorflow.python.framework.errors_impl.UnknownError: JIT compilation failed. [Op:FloorMod]\n",
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
        ),
    ]);
    assert_primary_findings(&[
        // `torch.cuda.is_available()` answered False at a prompt, in the three ways answers
        // show up (383, 1008).
        (
            ">>> torch.cuda.is_available()\nFalse\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "In [2]: torch.cuda.is_available()\n\nOut[2]: False\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "print(torch.cuda.is_available())\n>>false\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // The image's own driver files keep the container from starting, here from the second
        // half of a wrapped line (490).
        (
            "ount error: file creation failed: /var/lib/docker/overlay2/bd4f/merged/usr/bin/nvidia-smi: file exists\\n\\\"\"\": unknown\n",
            "GD543",
            Cause::Other,
        ),
    ]);
    // A True answer, or a False one to another question, is nothing.
    assert!(explain_text(b">>> torch.cuda.is_available()\nTrue\n").is_empty());
    assert!(explain_text(b">>> torch.cuda.is_available()\n>>> x.is_cuda\nFalse\n").is_empty());
    // cuDNN named without a file is still CUDA's library, and XLA's missing pieces get XLA's
    // remedies.
    let cudnn = &explain_text(b"DNN library is not found.\n")[0];
    assert!(
        cudnn
            .message
            .starts_with("libcudnn cannot be loaded: the CUDA library"),
        "{}",
        cudnn.message
    );
    let xla = &explain_text(b"Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice\n")[0];
    assert!(
        has_remedy_command(xla, "xla_gpu_cuda_data_dir"),
        "{:?}",
        xla.remedies
    );
    // The wrapped OOM's numbers reach the finding.
    let wrapped = &explain_text(
        b"RuntimeError: CUDA out of memory. Tried to allocate 7.31 GiB \n(GPU 0; 11.92 GiB total capacity; 307.86 MiB already allocated; 4.36 GiB free; 6.80 GiB cached)\n",
    )[0];
    assert!(
        wrapped.message.contains("4.36 GiB free"),
        "{}",
        wrapped.message
    );
    // Only the line right after can continue it.
    let apart = &explain_text(
        b"RuntimeError: CUDA out of memory. Tried to allocate 7.31 GiB \nCUDA_VISIBLE_DEVICES=0\n(GPU 0; 11.92 GiB total capacity; 307.86 MiB already allocated; 4.36 GiB free; 6.80 GiB cached)\n",
    )[0];
    assert!(
        !apart.message.contains("4.36 GiB free"),
        "{}",
        apart.message
    );
    // Graph capture gets its own remedy, not a hunt for Xids.
    let capture = &explain_text(
        b"RuntimeError: CUDA error: operation not permitted when stream is capturing\n",
    )[0];
    assert!(
        capture.remedies[0].action.contains("CUDA graph"),
        "{:?}",
        capture.remedies
    );
    // The advice line repeats the error above it: one finding, whose evidence is the error.
    let torch = explain_text(
        b"torch.AcceleratorError: CUDA error: out of memory\nSearch for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n",
    );
    assert!(
        torch[0].evidence[0].text.contains("AcceleratorError"),
        "{:?}",
        torch[0].evidence
    );
    // A BFC dump after its headline adds no second failure.
    let headline = explain_text(
        b"W tensorflow/core/common_runtime/bfc_allocator.cc:267] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB.  Current allocation summary follows.\nI tensorflow/core/common_runtime/bfc_allocator.cc:597] Bin (1048576): Total Chunks: 1, Chunks in use: 0. 1.00MiB allocated for chunks.\n",
    );
    assert!(
        headline[0].message.contains("1.00 GiB"),
        "{}",
        headline[0].message
    );
    // Nor do bins crowd the last failure's headline out of the scanner's bounded keep: ten
    // dumps of a 1 GiB request, then the last one's 3 GiB request and its bins.
    let mut dumps = String::new();
    for gib in [1; 10].into_iter().chain([3]) {
        let _ = writeln!(
            dumps,
            "W tensorflow/core/common_runtime/bfc_allocator.cc:267] Allocator (GPU_0_bfc) ran out of memory trying to allocate {gib}.00GiB.  Current allocation summary follows."
        );
        for bin in 0..70 {
            let _ = writeln!(
                dumps,
                "I tensorflow/core/common_runtime/bfc_allocator.cc:597] Bin ({bin}): Total Chunks: 1, Chunks in use: 0. 1.00MiB allocated for chunks."
            );
        }
    }
    let last = &explain_text(dumps.as_bytes())[0];
    assert!(last.message.contains("3.00 GiB"), "{}", last.message);
}

#[test]
fn an_unknown_cuda_error_message_is_cut() {
    let mut line = b"RuntimeError: CUDA error: ".to_vec();
    line.extend("：".repeat(20_000).as_bytes());
    line.push(b'\n');
    let f = &explain_text(&line)[0];
    assert!(f.message.len() < 400, "{} bytes", f.message.len());
}

#[test]
fn round_25_families() {
    assert_primary_findings(&[
        // "No driver" inside a container: the container was not given the GPU. A compose
        // service's prefix (936), a prompt whose host name is a container ID (475), compose
        // v1 creating the container (1110).
        (
            "qna-transformers_1  | RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        (
            "root@f14d48a29224:/app# ./example\nE tensorflow/stream_executor/cuda/cuda_diagnostics.cc:148] kernel driver does not appear to be running on this host (f14d48a29224): /proc/driver/nvidia/version does not exist\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        (
            "Creating vqgan-clip-docker_generate_run ... done\nRuntimeError: Found no NVIDIA driver on your system.\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // Slurm's `srun --label` prefix before an exception (1048).
        (
            "12: tensorflow.python.framework.errors_impl.NotFoundError: /x/_ops.so: undefined symbol: _ZN6tflite4shim\n",
            "GD579",
            Cause::Other,
        ),
        // The container toolkit in CDI mode refusing `--gpus` (1116); Slurm refusing a gres
        // request (1119).
        (
            "invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not supported. Please use the NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead.\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        (
            "sbatch: error: Invalid generic resource (gres) specification\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // JAX without cuDNN (1125).
        (
            "CUDA backend failed to initialize: Unable to load cuDNN. Is it installed? (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // RAPIDS: RMM's old out-of-memory result (1128), a build without code for the GPU
        // (1129).
        (
            "ERROR: RMM call in line 68of file /w/managed_allocator.cuh failed with result RMM_ERROR_OUT_OF_MEMORY (4) Attempted to allocate: 40000000\n",
            "GD500",
            Cause::OomCapacity,
        ),
        (
            "RuntimeError: This cuDF installation is missing the necessary PTX files that are <=50.\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // DeepSpeed's op builder: the toolkit's CUDA is not torch's (1135).
        (
            "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions without a matching cuda version.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // The module's package against the user-space driver's (1115).
        (
            "  Error: kmod-nvidia version (575.64.03-1.fc42) does not match nvidia-driver version (575.64.05-1.fc42)\n",
            "GD544",
            Cause::EnvNvmlMismatch,
        ),
        // make failing in DKMS's tree of the NVIDIA module, in Czech (1113).
        (
            "make[2]: *** [/usr/src/kernel-headers-6.12.7_1/Makefile:1937: /var/lib/dkms/nvidia/470.239.06/build] Chyba 2\n",
            "GD548",
            Cause::EnvNoDriver,
        ),
        // An installer that cannot get the running kernel's headers (1120).
        (
            "[ # ] NVIDIA AUTOINSTALLER FOR FEDORA LINUX\n[ ★ ] INSTALLING PROPRIETARY DRIVERS...\nError: Unable to find a match: kernel-headers kernel-devel\n",
            "GD548",
            Cause::EnvNoDriver,
        ),
        // ptxas run on a file is the toolkit's (1134); the driver's JIT names no file.
        (
            "ptxas add_kernel.ptx, line 5; fatal   : Unsupported .version 8.4; current version is '7.8'\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        (
            "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.1; current version is '8.0'\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
    ]);
    // Not containers: a plain "no driver", a prompt whose host name is not a container ID,
    // a table's first column before a bar.
    for text in [
        "RuntimeError: Found no NVIDIA driver on your system.\n",
        "root@gpu-node-12:/app# ./example\nRuntimeError: Found no NVIDIA driver on your system.\n",
        "GPU  | Found no NVIDIA driver on your system.\n",
    ] {
        assert_eq!(codes(text)[0].1, Cause::EnvNoDriver, "{text}");
    }
    // The GPU Operator's driver container says no NVIDIA word before it (1156, round 26).
    assert_eq!(
        codes("Error: Unable to find a match: kernel-headers-4.18.0-240.23.2.el8_3.x86_64\n")[0].0,
        "GD548"
    );
    // A named situation keeps its reading inside a container too.
    let uvm = "root@f14d48a29224:/# python x.py\ncuInit failed: CUDA_ERROR_UNKNOWN\n";
    assert_ne!(codes(uvm)[0].1, Cause::EnvVisibleDevices);
    // The ptxas finding names both versions and the ptxas to check.
    let f = &explain_text(b"ptxas add_kernel.ptx, line 5; fatal   : Unsupported .version 8.4; current version is '7.8'\n")[0];
    assert!(
        f.message.contains("(PTX 8.4; this ptxas reads up to 7.8)"),
        "{}",
        f.message
    );
    assert!(has_remedy_command(f, "which ptxas"));
    // The RMM request is read.
    let f = &explain_text(b"ERROR: RMM call in line 68of file /w/managed_allocator.cuh failed with result RMM_ERROR_OUT_OF_MEMORY (4) Attempted to allocate: 40000000\n")[0];
    assert!(f.message.contains("38.15 MiB"), "{}", f.message);
}

#[test]
fn live_others_stand_in_the_way_of_a_request_without_free_memory() {
    use gpu_doctor_model::{DeviceSample, GpuIndex, Pid, ProcessSample, Reading, Sample};
    const GIB: u64 = 1 << 30;
    // CuPy's message gives the request only. Live: a 140 GiB GPU where another process holds
    // 60 GiB. 100 GiB fits the GPU but not the 80 GiB the other leaves.
    let live = |other_gib: u64| Sample {
        devices: vec![DeviceSample {
            index: GpuIndex(0),
            memory_total_bytes: Reading::Value(140 * GIB),
            memory_free_bytes: Reading::Value((140 - other_gib) * GIB),
            ..DeviceSample::default()
        }],
        processes: vec![ProcessSample {
            gpu: GpuIndex(0),
            pid: Pid(4242),
            used_memory_bytes: Reading::Value(other_gib * GIB),
            ..ProcessSample::default()
        }],
        ..Sample::default()
    };
    let text = b"cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 107,374,182,400 bytes (allocated so far: 0 bytes).\n";
    let facts = gpu_doctor_scan::scan_bytes("job.log", text);
    let cause = |sample: &Sample| super::diagnose(&facts, Some(sample))[0].cause;
    assert_eq!(cause(&live(60)), Cause::OomOtherProcess);
    // 30 GiB held leaves 110 GiB: the request would not have fitted for another reason.
    assert_eq!(cause(&live(30)), Cause::OomCapacity);
    // Without live facts, nothing says who else is there.
    assert_eq!(super::diagnose(&facts, None)[0].cause, Cause::OomCapacity);
}

#[test]
fn a_refused_preallocation_needs_its_retry_to_say_others_were_there() {
    let refused = "E1130 21:19:59.178739     553 cuda_executor.cc:1365] [0] Failed to allocate device memory of 104.85GiB (112583507968 bytes): RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\n";
    let retry = "E1130 21:19:59.180355     553 cuda_executor.cc:1365] [0] Failed to allocate device memory of 94.37GiB (101325152256 bytes): RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\n";
    let failure = "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 100.00GiB with allocator GPU_0_bfc on device 0.\n";
    let both = format!("{refused}{retry}{failure}");
    assert_eq!(codes(&both)[0].1, Cause::OomOtherProcess);
    // One refusal alone, or a larger second request, is not the pool shrinking.
    assert_eq!(
        codes(&format!("{refused}{failure}"))[0].1,
        Cause::OomCapacity
    );
    assert_eq!(
        codes(&format!("{retry}{refused}{failure}"))[0].1,
        Cause::OomCapacity
    );
    // TensorFlow in the log: its allocator sizes its pool from the free memory, not the total.
    let tf = format!(
        "2024-01-01 I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 79000 MB memory\n{both}"
    );
    assert_eq!(codes(&tf)[0].1, Cause::OomCapacity);
}

#[test]
fn an_undefined_symbol_names_the_library_the_extension_was_built_against() {
    let torch = b"ImportError: /usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops15sum_IntList_out4callERKNS_6TensorE\n";
    let f = &explain_text(torch)[0];
    assert_eq!(
        (f.code.0.as_str(), f.cause),
        ("GD543", Cause::EnvLibMissing)
    );
    assert!(f.message.contains("another PyTorch"), "{}", f.message);
    let tf = b"tensorflow.python.framework.errors_impl.NotFoundError: /x/matpackops.so: undefined symbol: _ZNK10tensorflow6Tensor20ComputeFlatInnerDimsEx\n";
    assert!(
        explain_text(tf)[0].remedies[0]
            .action
            .contains("another TensorFlow")
    );
    // Another failure gets no such advice.
    let other = b"ValueError: shapes (3,) and (4,) not aligned\n";
    assert!(
        explain_text(other)[0]
            .remedies
            .iter()
            .all(|r| !r.action.contains("built against"))
    );
}

#[test]
fn round_26_families() {
    assert_primary_findings(&[
        // The watchdog's stack without its first line (1147).
        (
            "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x70e0167f00b2 in /opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)\n",
            "GD531",
            Cause::NcclError,
        ),
        // A GPU the installed branch dropped (1157).
        (
            "[Sun May 17 15:55:50 2026] NVRM: The NVIDIA NVIDIA GeForce GTX 1050 GPU installed in this system is\n                           NVRM:  supported through the NVIDIA 580.xx Legacy drivers. Please\n[Sun May 17 15:55:50 2026] NVRM: No NVIDIA GPU found.\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        // cudarc looking for libcuda (1164).
        (
            "Unable to find cuda lib under the names [\"cuda\", \"nvcuda\"]. Please open GitHub issue.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // xFormers built for another torch (1176).
        (
            "[xformers|WARNING]WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // A GPU without bfloat16 (1177).
        (
            "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // jaxlib's cuSolver handle behind JAX's wrapper (411).
        (
            "jax._src.source_info_util.JaxStackTraceBeforeTransformation: RuntimeError: jaxlib/gpu/solver_kernels.cc:45: operation gpusolverDnCreate(&handle) failed: cuSolver internal error\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // vLLM's custom all-reduce between GPUs without peer access (1146).
        (
            "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'\n",
            "GD547",
            Cause::Other,
        ),
    ]);
    let f = &explain_text(b"NVRM: The NVIDIA NVIDIA GeForce GTX 1050 GPU installed in this system is\nNVRM:  supported through the NVIDIA 580.xx Legacy drivers. Please\n")[0];
    assert!(f.message.contains("580.xx legacy"), "{}", f.message);
    let f = &explain_text(b"xFormers can't load C++/CUDA extensions. xFormers was built for:\n")[0];
    assert!(has_remedy_command(f, "xformers --index-url"));
}

#[test]
fn round_27_families() {
    assert_primary_findings(&[
        // nvidia-container-cli could not start CUDA on a node without a GPU (1182).
        (
            "nvidia-container-cli: initialization error: cuda error: unknown error\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        // NCCL's bootstrap without a usable interface (1187).
        (
            "invalid usage ... Last NCCL warning(error): 'Bootstrap : no socket interface found'\n",
            "GD530",
            Cause::NcclError,
        ),
        // Lightning's plural wording (1188).
        (
            "pytorch_lightning.utilities.exceptions.MisconfigurationException: Error instantiating 'pytorch_lightning.trainer.trainer.Trainer' : You requested GPUs: [0]\n But your machine only has: []\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // OpenCV's dnn module without CUDA (1197); TensorRT older than the GPU (1199); a DLL
        // a framework could not locate (1214).
        (
            "dnn.cpp (1314) cv::dnn::dnn4_v20191024::Net::Impl::setUpNet DNN module was not built with CUDA backend; switching to CPU\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "[07/19/2025-23:34:55] [E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Target GPU SM 120 is not supported by this TensorRT release.)\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        (
            "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
    ]);
    let f =
        &explain_text(b"Last NCCL warning(error): 'Bootstrap : no socket interface found'\n")[0];
    assert!(has_remedy_command(f, "NCCL_SOCKET_IFNAME"));
    let f = &explain_text(
        b"Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!\n",
    )[0];
    assert!(
        f.message.contains("cudnn_ops_infer64_8.dll"),
        "{}",
        f.message
    );
}

#[test]
fn round_28_families() {
    assert_primary_findings(&[
        // FAISS's device check (1234).
        (
            "RuntimeError: Error in faiss::gpu::GpuIndex::GpuIndex(faiss::gpu::GpuResources*, int, faiss::MetricType, float, faiss::gpu::GpuIndexConfig) at gpu/GpuIndex.cu:49: Error: 'device_ < getNumDevices()' failed: Invalid GPU device 1\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        // Paddle built for other GPUs (1240); Paddle's loader (1245).
        (
            "W0618 16:30:28.080267 18392 gpu_resources.cc:96] The GPU architecture in your current machine is Pascal, which is not compatible with Paddle installation\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        (
            "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_7.dll) that Paddle depends on is not configured correctly. (error code is 126)\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // ONNX Runtime's arena out of memory (1244); its CUDA provider without libraries (1247).
        (
            " [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Exception during initialization: D:\\a\\_work\\1\\s\\onnxruntime\\core\\framework\\bfc_arena.cc:342 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 1509\n",
            "GD500",
            Cause::OomCapacity,
        ),
        (
            "EP Error D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:739 onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasn't able to be loaded. Please install the correct version of CUDA and cuDNN\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // apex's CUDA check (1252); a build without a toolkit (1257).
        (
            "    RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.0.130.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        (
            "    OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // detectron2's ops compiled out (1260).
        (
            "RuntimeError: Not compiled with GPU support (ROIAlign_forward at /mnt/lustre/project/detectron2/detectron2/layers/csrc/ROIAlign/ROIAlign.h:71)\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
    ]);
    let f = &explain_text(b"OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n")[0];
    assert!(has_remedy_command(f, "export CUDA_HOME="));
    let f = &explain_text(b"RuntimeError: Not compiled with GPU support (ROIAlign_forward at /x/detectron2/layers/csrc/ROIAlign/ROIAlign.h:71)\n")[0];
    assert!(f.message.contains("detectron2"), "{}", f.message);
}

#[test]
fn round_29_families() {
    assert_primary_findings(&[
        // The linker missing cuRAND while DeepSpeed builds an op (1275).
        (
            "/usr/bin/ld: cannot find -lcurand\ncollect2: error: ld returned 1 exit status\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // bitsandbytes' CUDA setup that found no libcudart (1282).
        (
            "UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers and GPU quantization are unavailable.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // 804 by number alone (1292).
        (
            "Cuda driver error 804 in call at file 'geryon/nvd_device.h' in line 321.\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
        // MATLAB's words for the display watchdog (1295): CUDA 702, cause other.
        (
            "The kernel execution failed because the CUDA driver timeout was encountered.\n",
            "GD547",
            Cause::Other,
        ),
    ]);
}

#[test]
fn a_programs_own_error_report_is_the_failure_when_no_rule_knows_it() {
    assert_primary_findings(&[
        // dcgm-exporter's logrus fatal line (1037).
        (
            "time=\"2022-07-19T14:22:41Z\" level=info msg=\"Starting dcgm-exporter\"\ntime=\"2022-07-19T14:22:41Z\" level=fatal msg=\"Error getting device busid: API version mismatch\"\n",
            "GD579",
            Cause::Other,
        ),
        // ollama's slog error (1217).
        (
            "time=2026-03-11T17:42:09.504-04:00 level=ERROR source=server.go:304 msg=\"llama runner terminated\" error=\"exit status 1\"\n",
            "GD579",
            Cause::Other,
        ),
        // A setuptools build whose compiler failed (1258).
        (
            "error: command 'C:\\\\VS\\\\bin\\\\HostX86\\\\x64\\\\cl.exe' failed with exit status 2\n",
            "GD579",
            Cause::Other,
        ),
        // A Julia package's error box (1297).
        (
            "\u{250c} Error: This version of CUDA.jl only supports NVIDIA drivers for CUDA 11.x or 12.x (yours is for CUDA 13.0.0)\n",
            "GD579",
            Cause::Other,
        ),
        // A systemd service that did not start (929).
        (
            "Aug 27 21:35:25 ubuntu systemd[1]: nvidia-persistenced.service: Control process exited, code=exited, status=1/FAILURE\n",
            "GD579",
            Cause::Other,
        ),
    ]);
    // Not failures: the resolver's note, and an info line.
    assert!(codes("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.\n").is_empty());
    assert!(
        codes("time=\"2022-07-19T14:22:41Z\" level=info msg=\"DCGM successfully initialized!\"\n")
            .is_empty()
    );

    // nvcc refusing a host compiler too new for it (1253) names the compiler to use.
    let got = explain_text(
        b"/usr/local/cuda-9.0/bin/..//include/crt/host_config.h:119:2: error: #error -- unsupported GNU version! gcc versions later than 6 are not supported!\n",
    );
    assert_eq!(
        (got[0].code.0.as_str(), got[0].cause),
        ("GD579", Cause::Other)
    );
    assert!(
        has_remedy_command(&got[0], "NVCC_CCBIN=/usr/bin/g++-6"),
        "{:?}",
        got[0].remedies
    );
}

#[test]
fn tensorflow_that_lists_no_gpu_without_a_reason() {
    assert_primary_findings(&[
        // At a prompt (548).
        (
            ">>> import tensorflow as tf\n>>> tf.config.list_physical_devices(\"GPU\")\n[]\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // The tutorials' prints (436) and TensorFlow 1.x's session (277).
        (
            "Tensor Flow Version: 2.12.0\n\nGPU is NOT AVAILABLE\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        ("Num GPUs Available:  0\n", "GD541", Cause::EnvTorchCpuBuild),
        (
            "I tensorflow/core/common_runtime/direct_session.cc:45] Direct session inter op parallelism threads: 8\nDevice mapping: no known devices.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // With the reason printed, the reason is the finding.
        (
            "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1934] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.\nNum GPUs Available:  0\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
    ]);
    // A GPU in the list is no finding.
    assert!(codes("Num GPUs Available:  1\n").is_empty());
    assert!(codes(">>> tf.config.list_physical_devices('GPU')\n[PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]\n").is_empty());
}

#[test]
fn round_30_families() {
    assert_primary_findings(&[
        // cuDNN 8's own words for its missing DLL on Windows (1316).
        (
            "Could not load library cudnn_ops_infer64_8.dll. Error code 126\nPlease make sure cudnn_ops_infer64_8.dll is in your library path!\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // The watchdog's timeout wrapped over three lines (1320).
        (
            "[Rank 1] Watchdog caught collective operation timeout:\nWorkNCCL(SeqNum=12590, OpType=_ALLGATHER_BASE, NumelIn=1404928, NumelOut=2809856,\n         Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n",
            "GD531",
            Cause::NcclError,
        ),
        // DGL's CPU-only package (1322).
        (
            "dgl._ffi.base.DGLError: [14:00:04] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check failed: allow_missing: Device API cuda is not enabled. Please install the cuda version of dgl.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // An extension built against another PyTorch, on a line of its own before the
        // traceback it causes (1319).
        (
            "/usr/local/lib/python3.10/dist-packages/fbgemm_gpu/fbgemm_gpu_py.so: undefined symbol: _ZNK5torch8autograd4Node4nameEv\nTraceback (most recent call last):\n  File \"train.py\", line 29, in <module>\n    import fbgemm_gpu\nAttributeError: '_OpNamespace' 'fbgemm' object has no attribute 'jagged_2d_to_dense'\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // A TensorFlow op library stays a failure of its own (GD579, `other`).
        (
            "tensorflow.python.framework.errors_impl.NotFoundError: /usr/lib/python3/site-packages/tensorflow_text/python/ops/_regex_split_ops.so: undefined symbol: _ZN10tensorflow6StatusC1ENS_5error4CodeESt17basic_string_viewIcSt11char_traitsIcEENS_14SourceLocationE\n",
            "GD579",
            Cause::Other,
        ),
    ]);
    // The PyG extensions get PyG's wheel index.
    let got = explain_text(
        b"OSError: /envs/x/lib/python3.8/site-packages/torch_sparse/_version_cpu.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSs\n",
    );
    assert!(
        got[0].message.contains("`torch_sparse/_version_cpu`"),
        "{}",
        got[0].message
    );
    assert!(
        has_remedy_command(&got[0], "https://data.pyg.org/whl/"),
        "{:?}",
        got[0].remedies
    );
}

#[test]
fn round_31_families() {
    assert_primary_findings(&[
        // A CUDA error by number in nvdiffrast's words (1339).
        (
            "RuntimeError: Cuda error: 700[cudaMemcpyAsync(&atomics[0], m_crAtomics.getPtr(), sizeof(CRAtomics) * m_numImages, cudaMemcpyDeviceToHost, stream);]\n",
            "GD510",
            Cause::IllegalAccess,
        ),
        // Triton's kernel larger than the GPU's shared memory (1350).
        (
            "triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 110592Hardware limit: 101376\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // torch.compile's Triton backend on a GPU before Volta (1352).
        (
            "RuntimeError: Found NVIDIA GeForce GTX 1070 which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // A build without CUDA's headers (1355).
        (
            "/x/tensorflow/include/tensorflow/core/util/cuda_kernel_helper.h:24:31: fatal error: cuda/include/cuda.h: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // docker asked for a device node the host does not have (1365).
        (
            "Error response from daemon: error gathering device information while adding custom device \"/dev/nvidia-uvm\": no such file or directory\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
    ]);
    let triton = explain_text(
        b"triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n",
    );
    assert!(
        triton[0]
            .message
            .contains("needs 131072 bytes of shared memory per block and this GPU has 101376"),
        "{}",
        triton[0].message
    );
    assert!(has_remedy_command(&triton[0], "num_stages"));
    let old = explain_text(
        b"RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.0\n",
    );
    assert!(
        has_remedy_command(&old[0], "aot_eager"),
        "{:?}",
        old[0].remedies
    );
    // Free memory equal to the request (the message's rounding) is not "more than" it: the
    // fragmentation, when there is one, is the allocator's unallocated reserve (1342).
    let equal = explain_text(
        b"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.63 GiB. GPU 0 has a total capacty of 44.31 GiB of which 4.63 GiB is free. Including non-PyTorch memory, this process has 39.67 GiB memory in use. Of the allocated memory 35.84 GiB is allocated by PyTorch, and 3.27 GiB is reserved by PyTorch but unallocated.\n",
    );
    assert!(
        !equal[0]
            .message
            .contains("more than the 4.63 GiB requested"),
        "{}",
        equal[0].message
    );
}

#[test]
fn round_32_families() {
    assert_primary_findings(&[
        // torch's own warnings when asked for CUDA it cannot see (1380).
        (
            "/usr/local/lib/python3.10/dist-packages/torch/cuda/amp/grad_scaler.py:118: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // jaxlib's cuSolver failure relayed through absl's prefix (1387).
        (
            "I0716 21:59:58.942886 139668278384448 run_docker.py:180] RuntimeError: cuSolver internal error\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // The driver's OptiX older than the software's (1401).
        (
            "optixInit()\nOPTIX_ERROR_UNSUPPORTED_ABI_VERSION (7801)\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
        // nvidia-installer refusing while nouveau drives the GPU (1402).
        (
            " ERROR: The Nouveau kernel driver is currently in use by your system.  This\n         driver is incompatible with the NVIDIA driver, and must be disabled\n",
            "GD548",
            Cause::EnvNoDriver,
        ),
        // A miner that cannot load NVML on Windows (1403).
        (
            "20220419 09:06:45 WARN: Can't load NVML library, dlopen(126): failed to load nvml.dll,dlopen(126): failed to load %PROGRAMFILES%\\NVIDIA Corporation\\NVSMI\\nvml.dll\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // xFormers built for another torch lists operators without CUDA (1407, 1414).
        (
            "`cutlassF-pt` is not supported because:\n    xFormers wasn't build with CUDA support\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // Windows' loader message wrapped before the DLL (1411).
        (
            "OSError: [WinError 126] The specified module cannot be found. Error loading\n...stable\\automatic\\venv\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or\none of its dependencies.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // A process killed with nothing else said (1409).
        (
            "DiffusionWrapper has 872.30 M params.\nKilled\n",
            "GD579",
            Cause::Other,
        ),
    ]);
    // The miners' CUDA check macro names the error in words (1404's line; its thread blamed
    // the pool parameters, so the case stays a miss).
    assert_eq!(
        codes("Cuda error in func 'quark_blake512_cpu_setBlock_80' at line 701 : unspecified launch failure.\n")[0].0,
        "GD510"
    );
    // A service's error relayed by the journal (1035).
    assert_eq!(
        codes("May 23 12:49:52 mgmt1.int.p2-ecole.calculquebec.cloud slurmctld[80708]: slurmctld: error: Setting node nodegpu1 state to INVAL with reason:gres/gpu count reported lower than config\n")[0].0,
        "GD579"
    );
    let killed = explain_text(b"making attention of type 'vanilla' with 512 in_channels\nKilled\n");
    assert!(
        has_remedy_command(&killed[0], "explain --kernel"),
        "{:?}",
        killed[0].remedies
    );
}

#[test]
fn round_33_families() {
    assert_primary_findings(&[
        // NVIDIA's Video Processing Framework, with a full-width colon (1436).
        (
            "RuntimeError\u{ff1a}LoadNvEncAPI\u{ff1a}Current Driver Version does not support this NvEncodeAPI version, please upgrade driver at /root/VPF/PvNvCodec/TC/src/NvEncoder.cpp:125\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
        // FFmpeg's minimum driver after it could not load the driver's library (1441).
        (
            "[h264_nvenc @ 0x55855d101140] Cannot load libnvidia-encode.so.1\n[h264_nvenc @ 0x55855d101140] The minimum required Nvidia driver for nvenc is 418.30 or newer\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // FFmpeg's NVENC check without its prefix (1444).
        (
            "Driver does not support the required nvenc API version. Required: 13.0 Found: 12.2\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
        // NVENC's session cap and a GPU without an encoder (1437, 1442).
        (
            "[h264_nvenc @ 0x5601aa5b40c0] OpenEncodeSessionEx failed: out of memory (10)\n[h264_nvenc @ 0x5601aa5b40c0] No NVENC capable devices found\n",
            "GD546",
            Cause::Other,
        ),
        (
            "[h264_nvenc @ 00000198ad95a9c0] OpenEncodeSessionEx failed: unsupported device (2)\n",
            "GD546",
            Cause::Other,
        ),
        // ROCm's words for a device-side assert (1447).
        (
            "/var/lib/jenkins/pytorch/aten/src/ATen/native/hip/Indexing.hip:1294: indexSelectLargeIndex: Device-side assertion `srcIndex < srcSelectDimSize' failed.\n",
            "GD511",
            Cause::DeviceAssert,
        ),
        // transformers' bfloat16 check, pasted in lower case (1452).
        (
            "valueerror: bfloat16 is only supported on gpus with compute capability of at least 8.0. your tesla v100-sxm2-32gb gpu has compute capability 7.0.\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
    ]);
    let cap = explain_text(
        b"[h264_nvenc @ 0x5601aa5b40c0] OpenEncodeSessionEx failed: out of memory (10)\n",
    );
    assert!(
        cap[0].message.contains("caps concurrent encode sessions"),
        "{}",
        cap[0].message
    );
}

#[test]
fn round_34_families() {
    assert_primary_findings(&[
        // A package's compiled extension not installed (1470).
        (
            "    import exllamav2_ext\nModuleNotFoundError: No module named 'exllamav2_ext'\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // Omniverse's driver check (1477).
        (
            "Installed driver: 535.18\nThe unsupported driver range: [0.0, 535.129)\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
    ]);
    // An ordinary missing module is not an extension.
    assert!(
        codes("ModuleNotFoundError: No module named 'einops'\n")
            .iter()
            .all(|c| c.0 != "GD543")
    );
}

#[test]
fn round_35_families() {
    assert_primary_findings(&[
        // Blender Cycles' words for a driver error (1399).
        (
            "Failed to configure CUDA context (Invalid context)\n",
            "GD547",
            Cause::Other,
        ),
        // The loader refusing to start a program for any missing library (1483).
        (
            "/ws/devel/lib/darknet_ros/darknet_ros_node: error while loading shared libraries: libopencv_highgui.so.3.2: cannot open shared object file: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // OpenGL with no driver it could load (1486).
        (
            "libGL error: No matching fbConfigs or visuals found\nlibGL error: failed to load driver: swrast\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // Kokkos built for another architecture (1498).
        (
            "Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 7.0 (>= 5.0) on device with compute capability 5.0 (>=5.0), this would give incorrect results!\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // The NVIDIA HPC compilers' runtime (1504).
        (
            "Failing in Thread:1\nAccelerator Fatal Error: call to cuLaunchKernel returned error 701: Launch out of resources\n",
            "GD547",
            Cause::Other,
        ),
        // nvcc building for an architecture without the atomic overload (1511).
        (
            "libnd4j/include/templatemath.h(789): error: no instance of overloaded function \"atomicMin\" matches the argument list\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // PyTorch's OOM pasted without the space in "total capacity" (1496): the GPU's size
        // puts the 170 MiB cached under the fragmentation floor.
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 88.00 MiB (GPU 0; 4.00 GiB totalcapacity; 2.68 GiB already allocated; 0 bytes free; 2.85 GiB reserved in total by PyTorch)\n",
            "GD500",
            Cause::OomCapacity,
        ),
    ]);
    let kokkos = &explain_text(b"Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 7.0 (>= 5.0) on device with compute capability 5.0 (>=5.0)\n")[0];
    assert!(
        has_remedy_command(kokkos, "Kokkos_ARCH_MAXWELL50"),
        "{:?}",
        kokkos.remedies
    );
    let atomic = &explain_text(
        b"k.cu(12): error: no instance of overloaded function \"atomicAdd\" matches the argument list\n",
    )[0];
    assert!(
        atomic.message.contains("on double it needs sm_60"),
        "{}",
        atomic.message
    );
    let conda_gl = &explain_text(b"libGL error: MESA-LOADER: failed to open swrast: /home/u/miniconda3/envs/x/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so)\nlibGL error: failed to load driver: swrast\n")[0];
    assert!(
        has_remedy_command(conda_gl, "libstdcxx-ng"),
        "{:?}",
        conda_gl.remedies
    );
    // The CUEW words only count where Cycles puts them.
    assert!(codes("Invalid context handling improved in this release\n").is_empty());
}

#[test]
fn round_36_families() {
    assert_primary_findings(&[
        // PyTorch's driver warning wrapped after its first words (1519).
        (
            ".../torch/cuda/__init__.py:187: UserWarning: CUDA initialization: The NVIDIA driver on your\nsystem is too old (found version 12040). ...\nAssertionError: CUDA not available\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
        // pip without a release of a package built for a CUDA version (1529, and 1433).
        (
            "ERROR: No matching distribution found for cupy-cuda90<10,>=9 (from bminf)\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // PTX made for a newer GPU than this one (1545).
        (
            "ptxas fatal   : SM version specified by .target is higher than default SM version assumed\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
    ]);
    // Dorado's numbered cuBLAS status (1525): 8 is ARCH_MISMATCH, whose fixes include an
    // older cuBLAS loaded in place of the program's own.
    let cublas = &explain_text(b"[2023-03-16 07:48:40.892] [error] CuBLAS error 8\n")[0];
    assert_eq!(cublas.code.0, "GD520");
    assert!(
        cublas.message.contains("CUBLAS_STATUS_ARCH_MISMATCH")
            && has_remedy_command(cublas, "grep -i cublas"),
        "{cublas:?}"
    );
    let pip = &explain_text(b"ERROR: No matching distribution found for cumm-cu100\n")[0];
    assert!(
        has_remedy_command(pip, "pip index versions cumm-cu100"),
        "{:?}",
        pip.remedies
    );
    // A package whose name carries no CUDA version is pip's own failure, not this.
    assert!(
        codes("ERROR: No matching distribution found for einops==9.9\n")
            .iter()
            .all(|c| c.0 != "GD543")
    );
}

#[test]
fn round_37_families() {
    assert_primary_findings(&[
        // Faiss' CUDA check naming error 209 cut short, or misspelt (1546, 1547).
        (
            "Faiss assertion 'err__ == cudaSuccess' failed in void faiss::gpu::runL2Norm(...) at gpu/impl/L2Norm.cu:294; details: CUDA error 209 no kernel image is available\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // PostgreSQL's loader error without its ERROR prefix (1548).
        (
            "could not load library \"/usr/pgsql-10/lib/pg_strom.so\": libnvrtc.so.9.2: cannot open shared object file: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // PaddleClas' CPU-only check (1556).
        (
            "2020-09-08 09:14:59 ERROR: You are using paddlepaddle cpu version! Please try to install paddlepaddle-gpu to run model on GPU.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // CMake finding no cuDNN (1558).
        (
            "CMake Error at mindspore/ccsrc/CMakeLists.txt:40 (message):\n  Failed to find cudnn library file, please set environment variable\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // An older cuDNN than the build needs, loaded first (1561).
        (
            "Dilations conv is not supported in this cuDNN version(5.1.10). at [/root/Paddle/paddle/fluid/platform/cudnn_helper.h:329]\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // WSL 2 or a Hyper-V guest without its path to the Windows driver (1580, 375).
        (
            "Failed to initialize NVML: GPU access blocked by the operating system\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        // A driver release that does not drive the GPU, its sentence wrapped (1583).
        (
            "[99083.966246] NVRM: The NVIDIA GPU 0000:05:00.0 (PCI ID: 10de:26b9)\n               NVRM: installed in this system is not supported by the\n               NVRM: NVIDIA 570.86.15 driver release.\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
    ]);
    let blocked =
        &explain_text(b"Failed to initialize NVML: GPU access blocked by the operating system\n")
            [0];
    assert!(
        has_remedy_command(blocked, "/dev/dxg"),
        "{:?}",
        blocked.remedies
    );
}

#[test]
fn round_38_families() {
    assert_primary_findings(&[
        // NVIDIA DALI's decoder out of memory (1585).
        (
            "Error when executing Mixed operator ImageDecoder encountered:\nCan't allocate 129499136 bytes on device 0.\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // torchcodec's PyPI wheel without its CUDA decoder (1588).
        (
            "    return self._op(*args, **kwargs)\nRuntimeError: Unsupported device: cuda\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // CUDAnative's toolchain without the GPU's capability, in Markdown bold (1603).
        (
            "**ERROR: Device capability v1.1.0 not supported by available toolchain**\nStacktrace:\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // cuQuantum's state vector out of memory (1610).
        (
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  [custatevec] %out of memory in addQubitsToState (line 210)\n",
            "GD500",
            Cause::OomCapacity,
        ),
    ]);
    let codec = &explain_text(b"RuntimeError: Unsupported device: cuda\n")[0];
    assert!(
        has_remedy_command(codec, "torchcodec --index-url"),
        "{:?}",
        codec.remedies
    );
}

#[test]
fn round_39_families() {
    assert_primary_findings(&[
        // ONNX Runtime's CUDA provider library that would not load (1611).
        (
            "Error: OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library\n      at new OnnxruntimeSessionHandler (node_modules/onnxruntime-node/lib/backend)\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // cudarc looking for NVRTC (1617).
        (
            "Unable to find nvrtc lib under the names [\"nvrtc\", \"nvrtc64\", \"nvrtc64_12\"]. Please open GitHub issue.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // The linker's undefined references are the program's failure (1622).
        (
            "../../bin/libinfer_lib.a(p.cpp.o):p.cpp:(.text+0x30e): more undefined references to `c10::Error::Error(c10::SourceLocation, std::string const&)' follow\n",
            "GD579",
            Cause::Other,
        ),
        // TensorRT's header missing from a build (1625).
        (
            "/home/u/tensorrtx/yolov3/yololayer.h:8:21: fatal error: NvInfer.h: No such file or directory\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // A CUDA check macro spelling it `Cuda`, out of memory (1626).
        (
            "Cuda error in file src/implicit_gemm.cu at line 648: out of memory\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // NVML without a kernel driver (1631).
        (
            "    raise NVMLError(ret)\n**pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded**\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
    ]);
    let link = &explain_text(b"../../bin/libinfer_lib.a(p.cpp.o):p.cpp:(.text+0x30e): more undefined references to `c10::Error::Error(c10::SourceLocation, std::string const&)' follow\n")[0];
    assert!(
        has_remedy_command(link, "_GLIBCXX_USE_CXX11_ABI"),
        "{:?}",
        link.remedies
    );
}

#[test]
fn round_40_families() {
    assert_primary_findings(&[
        // text-embeddings-inference's image built for another architecture (1646).
        (
            "Error: Could not create backend\nCaused by:\n    Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // PyCUDA's allocation (1656).
        (
            "    self.gpudata = self.allocator(self.size * self.dtype.itemsize)\nMemoryError: cuMemAlloc failed: out of memory\n",
            "GD500",
            Cause::OomCapacity,
        ),
    ]);
    let tei = &explain_text(b"    Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80\n")[0];
    assert!(tei.message.contains("sm_75"), "{}", tei.message);
    // Not PyTorch: the steps that apply to any build, not PyTorch's wheels.
    assert!(
        has_remedy_command(tei, "compute_cap") && !has_remedy_command(tei, "torch"),
        "{:?}",
        tei.remedies
    );
}

#[test]
fn rounds_41_and_42_families() {
    assert_primary_findings(&[
        // Programs that fell back to the CPU, in their own words (1667, and the older 970).
        (
            "UserWarning: The unoptimized RealESRGAN is slow on CPU. We do not use it. If you really want to use it, please modify the corresponding codes.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        (
            "UserWarning: FP16 is not supported on CPU; using FP32 instead\n  warnings.warn(\"FP16 is not supported on CPU; using FP32 instead\")\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // TensorRT's builder out of memory without the trtexec prefix (1670, and the older 879).
        (
            "[virtualMemoryBuffer.cpp::resizePhysical::144] Error Code 2: OutOfMemory (no further information)\n",
            "GD500",
            Cause::OomCapacity,
        ),
    ]);
    // The question and its answer on one line (1243).
    assert_primary_findings(&[(
        "torch.cuda.is_available(): False\ntorch.cuda.device_count(): 0\n",
        "GD541",
        Cause::EnvTorchCpuBuild,
    )]);
    // The CPU fallback is the low-confidence "sees no GPU" finding, below any that says why.
    let fp16 = &explain_text(b"UserWarning: FP16 is not supported on CPU; using FP32 instead\n")[0];
    assert!(fp16.confidence < 0.5, "{}", fp16.confidence);
}

#[test]
fn rounds_43_and_44_families() {
    assert_primary_findings(&[
        // onnxruntime-gpu without the CUDA or cuDNN its release needs (1679).
        (
            "2024-03-10 21:00:56.403012156 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:640 CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // Windows' loader and an extension module (1681).
        (
            "ImportError: DLL load failed while importing onnxruntime_pybind11_state: The specified module could not be found.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // A check macro's report, its message on the last line (1688).
        (
            "CUDA Error:\nFile:       utilities/gpu_vector.cuh\nLine:       83\nError code: 2\nError text: out of memory\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // An allocation call that failed, no reason given (1712).
        (
            "Exception in slam: CUDAException: Unable to cudaMallocPitch\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // MATLAB's GPU support (1706, 1707).
        (
            "Caused by:\n    The CUDA driver was found, but it is too old. The CUDA driver on your system supports CUDA version 5.5. The required CUDA version\n    is 7.5 or greater.\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
        (
            "Caused by:\n    The CUDA driver could not be loaded. The library name used was 'nvcuda.dll'. The error was:\n    The specified module could not be found.\n",
            "GD545",
            Cause::EnvNoDriver,
        ),
        // AliceVision's minimum compute capability (1715).
        (
            "[02:06:25.958896][error] CUDA-Enabled GPU detected, but the compute capabilities is not enough.\n - Device 0: 2.1, global memory: 961MB\n - Requirements: 3.0, global memory: 0MB\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
    ]);
    // MATLAB's version is read as the driver's CUDA version.
    let matlab = &explain_text(
        b"The CUDA driver was found, but it is too old. The CUDA driver on your system supports CUDA version 5.5. The required CUDA version is 7.5 or greater.\n",
    )[0];
    assert!(
        matlab.message.contains("CUDA up to 5.5"),
        "{}",
        matlab.message
    );
    // onnxruntime's provider gets its own steps; a library it named first is the finding.
    let ort = &explain_text(
        b"[W:onnxruntime:Default, onnxruntime_pybind_state.cc:640 CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.\n",
    )[0];
    assert!(has_remedy_command(ort, "preload_dlls"), "{ort:?}");
    let named = &explain_text(
        b"[E:onnxruntime:Default, provider_bridge_ort.cc:1548 TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: No such file or directory\n[W:onnxruntime:Default, onnxruntime_pybind_state.cc:861 CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.\n",
    )[0];
    assert!(
        named.message.contains("libcublasLt.so.11"),
        "{}",
        named.message
    );
}

#[test]
fn rounds_45_and_46_families() {
    assert_primary_findings(&[
        // NVIDIA's containers on a GPU newer than their release (1735).
        (
            "WARNING: Detected NVIDIA NVIDIA Graphics Device GPU, which is not yet supported in this version of the container\nERROR: No supported GPU(s) detected to run this container\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // A passed-through GPU that did not wake up (1736).
        (
            "vfio-pci 0000:0a:00.0: no suspend buffer for LTR; ASPM issues possible after resume\nvfio-pci 0000:0a:00.0: Unable to change power state from D3cold to D0, device inaccessible\n",
            "GD202",
            Cause::HwXid,
        ),
        // llama.cpp's context that did not fit, in LM Studio's words and its own (1771).
        (
            "Failed to load model\nFailed to initialize the context: failed to allocate compute pp buffers\n",
            "GD500",
            Cause::OomCapacity,
        ),
        (
            "llama_new_context_with_model: failed to allocate compute buffers\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // xFormers names the CPU-only torch it found (1776).
        (
            "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)\n    Python  3.10.11 (you have 3.10.6)\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
        // torch.load of a GPU checkpoint where PyTorch sees no GPU (1696).
        (
            "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.\n",
            "GD541",
            Cause::EnvTorchCpuBuild,
        ),
    ]);
    // The container's finding names the fix for a container, not a rebuild.
    let ngc = &explain_text(
        b"WARNING: Detected NVIDIA NVIDIA Graphics Device GPU, which is not yet supported in this version of the container\n",
    )[0];
    assert!(
        ngc.message.contains("release of the container"),
        "{}",
        ngc.message
    );
    // torch.load's message gets the CPU mapping as a way out.
    let load = &explain_text(
        b"RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.\n",
    )[0];
    assert!(has_remedy_command(load, "map_location"), "{load:?}");
}

#[test]
fn rounds_47_and_48_families() {
    assert_primary_findings(&[
        // CUDA 209 by its number in nvdiffrast's check (1788).
        (
            "RuntimeError: Cuda error: 209[cudaLaunchKernel(func, gridSize, blockSize, args, 0, stream);]\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // A compiled extension that needs a `std` symbol the loaded libstdc++ lacks (1787).
        (
            "ImportError: /envs/p3d/lib/python3.8/site-packages/pytorch3d/_C.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZNSt15__exception_ptr13exception_ptr9_M_addrefEv\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
        // transformers/accelerate with a quantized model that does not fit (1809).
        (
            "Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules in 32-bit, you need to set `load_in_8bit_fp32_cpu_offload=True`\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // A build missing a library's header that is not CUDA's (1820).
        (
            "./mediapipe/gpu/gl_base.h:57:10: fatal error: EGL/egl.h: No such file or directory\n #include <EGL/egl.h>\ncompilation terminated.\n",
            "GD543",
            Cause::EnvLibMissing,
        ),
    ]);
    // The header's finding names the header and the way to find its package.
    let header = &explain_text(
        b"./mediapipe/gpu/gl_base.h:57:10: fatal error: EGL/egl.h: No such file or directory\n",
    )[0];
    assert!(header.message.contains("`EGL/egl.h`"), "{}", header.message);
    assert!(
        has_remedy_command(header, "apt-file search EGL/egl.h"),
        "{header:?}"
    );
    // CUDA's own headers keep their finding, with the toolkit to install.
    let cuda =
        &explain_text(b"foo.cu:1:10: fatal error: cuda_runtime.h: No such file or directory\n")[0];
    assert!(cuda.message.contains("CUDA header"), "{}", cuda.message);
}

#[test]
fn this_sessions_forms_garbled() {
    // Truncated, oversized and odd forms of the new messages: a finding or none, never a panic.
    let garbled: &[&[u8]] = &[
        b"The CUDA driver was found, but it is too old. The CUDA driver on your system supports CUDA version 99999999999.99999999999.\n",
        b"The CUDA driver was found, but it is too old. The CUDA driver on your system supports CUDA version 4294968.5\n",
        b"DLL load failed while importing \n",
        b"DLL load failed while importing \xff\xfe: \x00\n",
        b"fatal error: : No such file or directory\n",
        b"fatal error: .h: No such file or directory\n",
        b"fatal error: /: No such file or directory\n",
        b"x.so: undefined symbol: _ZNSt\n",
        b"Cuda error: 209[\n",
        b"Cuda error: 99999999999999999999999[\n",
        b"Failed to create CUDAExecutionProvider\n",
        b"(you have +cpu)\n",
        b"failed to allocate compute buffers\n",
        b"vfio-pci : Unable to change power state from D3cold to D0, device inaccessible\n",
        b"Some modules are dispatched on the CPU or the disk\n",
        // The forms of 2026-12-01's miss review.
        b"nvcc fatal   : Unsupported gpu architecture 'compute_'\n",
        b"nvcc fatal   : Unsupported gpu architecture 'compute_99999999999999999999'\n",
        b"nvcc fatal\n",
        b"Cuda error: 2[\n",
        b"CUDA error 2\n",
        b"Consult /var/lib/dkms/nvidia make.log\n",
        b"GPU Firmware:\nnvidia-smi: command not found\n",
        b"THCudaCheck\n",
        b"Minimum required Nvidia driver is\n",
        b"[metal::malloc] Unable to allocate\n",
        b"Can't reduce memory use below by rematerialization\n",
    ];
    for text in garbled {
        let _ = explain_text(text);
    }
    // The overflowing version is read as no version, not a wrapped number.
    let f = &explain_text(
        b"The CUDA driver was found, but it is too old. The CUDA driver on your system supports CUDA version 4294968.5\n",
    )[0];
    assert!(!f.message.contains("CUDA up to"), "{}", f.message);
}

#[test]
fn rounds_49_and_50_families() {
    // An application's own check before it allocates, with its numbers (1836).
    assert_primary_findings(&[(
        "Error performing paint event\nNot enough GPU RAM free (3686MB free, need at least 4122MB)\n",
        "GD500",
        Cause::OomCapacity,
    )]);
    let f = &explain_text(b"Not enough GPU RAM free (3686MB free, need at least 4122MB)\n")[0];
    assert!(f.message.contains("more"), "{}", f.message);
}

#[test]
fn the_allocators_normal_slack_is_not_fragmentation() {
    // 1.07 GiB cached on an 8 GiB GPU covers the 0.4 GiB missing, but it is the allocator's
    // usual slack at the job's peak: the job is at its limit (1733: a smaller batch fixed it).
    let slack = "RuntimeError: CUDA out of memory. Tried to allocate 1024.00 MiB (GPU 0; 8.00 GiB total capacity; 4.41 GiB already allocated; 615.77 MiB free; 5.48 GiB reserved in total by PyTorch)\n";
    assert_eq!(codes(slack)[0].1, Cause::OomCapacity);
    // 6.2 GiB cached on a 16 GiB GPU is memory the allocator could not reuse (1041:
    // max_split_size_mb fixed it).
    let split = "RuntimeError: CUDA out of memory. Tried to allocate 5.27 GiB (GPU 0; 15.73 GiB total capacity; 6.50 GiB already allocated; 1.47 GiB free; 12.69 GiB reserved in total by PyTorch)\n";
    assert_eq!(codes(split)[0].1, Cause::OomFragmentation);
}

#[test]
fn pytorchs_capability_range_is_read_with_the_gpus() {
    // A Pascal GPU under a build that starts at 7.5: no kernels, and the CUDA 12.6 builds
    // that keep it are the way back.
    let old = "UserWarning:\n    Found GPU0 NVIDIA GeForce GTX 1080 which is of cuda capability 6.1.\n    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (7.5) - (12.0)\n";
    let f = &explain_text(old.as_bytes())[0];
    assert_eq!(f.cause, Cause::EnvArchUnsupported, "{}", f.message);
    assert!(f.message.contains("sm_61"), "{}", f.message);
    assert!(has_remedy_command(f, "whl/cu126"), "{f:?}");
    // A newer major than the build's highest, on one line.
    let new = "Found GPU0 NVIDIA GeForce RTX 5090 which is of cuda capability 12.0. Minimum and Maximum cuda capability supported by this version of PyTorch is (5.0) - (9.0)\n";
    assert_eq!(
        explain_text(new.as_bytes())[0].cause,
        Cause::EnvArchUnsupported
    );
    // A newer minor of the highest major runs that major's kernels: the warning is harmless
    // (1845, a GB10's 12.1 beside a build up to 12.0).
    let harmless = "Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\nMinimum and Maximum cuda capability supported by this version of PyTorch is\n(8.0) - (12.0)\n";
    assert!(explain_text(harmless.as_bytes()).is_empty());
    // A range with no GPU before it is nothing.
    assert!(explain_text(b"(7.5) - (12.0)\n").is_empty());
}

#[test]
fn the_classic_check_macros_line() {
    // `HANDLE_ERROR`'s `<message> in <file>.cu at line <n>`, whose message has no trigger word
    // (1713).
    assert_primary_findings(&[(
        "running md slam ... \nunspecified launch failure in /catkin_ws/src/md_slam/pyramid_level.cu at line 196.\n",
        "GD510",
        Cause::IllegalAccess,
    )]);
    // The other untriggered starts: a launch that asked for too many registers or threads.
    let resources =
        &explain_text(b"too many resources requested for launch in kernels/scan.cu at line 88\n");
    assert!(
        resources.first().is_some_and(|f| f.message.contains("701")),
        "{resources:?}"
    );
}

#[test]
fn a_program_that_calls_cuda_itself_gets_remedies_of_its_own() {
    // A check macro's report (the H200's 1 TiB cudaMalloc): no PyTorch levers.
    let raw = &explain_text(
        b"CUDA Error:\n    File:       check_macros.cu\n    Line:       47\n    Error code: 2\n    Error text: out of memory\n",
    )[0];
    assert_eq!(raw.cause, Cause::OomCapacity);
    assert!(!has_remedy_command(raw, "torch"), "{raw:?}");
    assert!(
        raw.remedies[0].action.contains("Process less at once"),
        "{raw:?}"
    );
    // PyTorch's own message keeps its levers.
    let torch = &explain_text(
        b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 78.07 GiB memory in use. Of the allocated memory 76.01 GiB is allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated.\n",
    )[0];
    assert!(has_remedy_command(torch, "torch.autocast"), "{torch:?}");
}

#[test]
fn cuda_error_2_by_number_is_an_out_of_memory() {
    // nvdiffrast's check and a check macro print the number only; 2 is
    // cudaErrorMemoryAllocation (and CUDA_ERROR_OUT_OF_MEMORY) in every CUDA release.
    assert_primary_findings(&[
        (
            "Traceback (most recent call last):\n  File \"render.py\", line 3, in <module>\nRuntimeError: Cuda error: 2[cudaMalloc(&buffer, bytes);]\n",
            "GD500",
            Cause::OomCapacity,
        ),
        (
            "CUDA error 2 at /build/kernels/conv.cu:5500\n",
            "GD500",
            Cause::OomCapacity,
        ),
    ]);
    // `error code N` with no CUDA word beside it is some program's status, not CUDA's.
    let exit = &explain_text(b"ERROR: failed with error code 1\n")[0];
    assert_eq!(exit.code.0, "GD579", "{exit:?}");
    // Beside CUDA words the generic forms still count.
    let named = &explain_text(b"CUDA error: code=1 (cudaErrorInvalidValue)\n")[0];
    assert!(named.message.contains("invalid argument"), "{named:?}");
}

#[test]
fn the_miss_review_of_2026_12_01_families() {
    assert_primary_findings(&[
        // nvcc asked for an architecture no GPU has: a typo in the build script (1822).
        (
            "make[5]: *** [renderHand.cu.o] Error 1\nnvcc fatal   : Unsupported gpu architecture 'compute_71'\n",
            "GD579",
            Cause::Other,
        ),
        // A real one the toolkit does not know is still the toolkit's age.
        (
            "nvcc fatal   : Unsupported gpu architecture 'compute_120'\n",
            "GD542",
            Cause::EnvArchUnsupported,
        ),
        // MLX out of memory on Apple's GPU (1175).
        (
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] Unable to allocate 12 bytes.\n",
            "GD500",
            Cause::OomCapacity,
        ),
        (
            "RuntimeError: [metal::malloc] Unable to allocate 4294967296 bytes.\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // XLA that cannot fit the program even by recomputing (915).
        (
            "2024-02-19 15:14:56.882326: W external/xla/xla/service/hlo_rematerialization.cc:2941] Can't reduce memory use below -30.29GiB (-32529110990 bytes) by rematerialization; only reduced to 49.62GiB (53280000080 bytes), down from 49.62GiB (53280000080 bytes) originally\n",
            "GD500",
            Cause::OomCapacity,
        ),
        // An application's NVENC driver check (1737).
        (
            "Required: NVENC API 13.0\nMinimum required Nvidia driver is 570.0 or newer\n",
            "GD540",
            Cause::EnvDriverTooOld,
        ),
        // Torch7's check, which has no trigger word of its own.
        (
            "THCudaCheck FAIL file=/tmp/cutorch/lib/THC/generic/THCStorage.c line=147 error=4 : unspecified launch failure\n",
            "GD510",
            Cause::IllegalAccess,
        ),
        // DKMS failing to build the NVIDIA module (1861).
        (
            "Error! Bad return status for module build on kernel: 6.5.2-arch1-1 (x86_64)\nConsult /var/lib/dkms/nvidia/390.157/build/make.log for more information.\n",
            "GD548",
            Cause::EnvNoDriver,
        ),
        // nvidia-smi missing where the log shows the GPU (1694, 1849, 532) ...
        (
            "/__w/_temp/e5.sh: line 1: nvidia-smi: command not found\n##[group]NVIDIA Managed Runner\nGPUs UIDs: GPU-00766149-eda1-acb8-f0d3-5209bc616237\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        (
            "bash: nvidia-smi: command not found\n$ cat /proc/driver/nvidia/gpus/0000:07:00.0/information\nModel:           NVIDIA A10\nGPU Firmware:    535.129.03\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
        (
            "NVIDIA GPU detected\n/aio/entrypoint.sh: line 52: nvidia-smi: command not found\n",
            "GD546",
            Cause::EnvVisibleDevices,
        ),
    ]);
    // An exception group's gutter under pytest (1127): the line behind it is read.
    assert_primary_findings(&[(
        "  | E           numba.cuda.cudadrv.driver.LinkerError: [218] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\n  | E           ptxas application ptx input, line 9; fatal   : Unsupported .version 6.2; current version is '6.1'\n",
        "GD540",
        Cause::EnvDriverTooOld,
    )]);
    // ... and alone it still says nothing about the driver (1857).
    let alone = &explain_text(
        b"coder@15a2d07c1ad2:~/project$ nvidia-smi\nbash: nvidia-smi: command not found\n",
    )[0];
    assert_eq!(
        (alone.code.0.as_str(), alone.cause),
        ("GD545", Cause::Other),
        "{alone:?}"
    );
    // DKMS's finding reads the build log it names.
    let dkms = &explain_text(
        b"Consult /var/lib/dkms/nvidia/390.157/build/make.log for more information.\n",
    )[0];
    assert!(
        has_remedy_command(dkms, "/var/lib/dkms/nvidia/390.157/build/make.log"),
        "{dkms:?}"
    );
}
