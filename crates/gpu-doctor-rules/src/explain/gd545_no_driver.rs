//! GD545: no NVIDIA driver, or it is not loaded.

use super::{Hit, Input, env_detail, env_observations, finding_from, has_detail};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{EnvKind, Observation, detail};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD545",
    name: "no-driver",
    cause: Some(Cause::EnvNoDriver),
    summary: "No usable NVIDIA driver: not installed, not loaded, or not visible in the container",
    body: r"## What it does
Finds `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`, `Found
no NVIDIA driver on your system`, `no CUDA-capable device is detected` (CUDA 100),
`CUDA driver is a stub library`, the container toolkit's `nvml error: driver not loaded`, and
the open kernel module on a GPU without GSP (`not supported by open nvidia.ko`: Maxwell, Pascal,
Volta need the proprietary module), NVML's `Driver Not Loaded`, a GPU that the loaded driver
release does not support (`NVRM: ... installed in this system is not supported by the NVIDIA
570.86.15 driver release`: a GPU newer than the driver, a legacy one, or a vGPU given the
passthrough driver) and NVML's `GPU access blocked by the operating system` (WSL 2 or a
Hyper-V GPU-partitioned guest without its path to the Windows driver: dxgkrnl, `/dev/dxg`),
and MATLAB's `The CUDA driver could not be loaded` (its gpuArray and CUDA MEX files).
The same messages printed inside a container (a compose service's prefix, a prompt whose host
name is a container ID) are GD546's: the container was not given the GPU.
(A `libcuda.so.1` or `libnvidia-ml.so` that cannot be loaded is GD543's: the driver is often
installed and only its libraries are not where the loader looks.) Three messages that say
less are reported only when nothing says more, with cause `other`: a missing nvidia-smi
(`bash: nvidia-smi: command not found`, a warning: it does not tell whether a driver is
loaded), nvidia-container-cli's `driver rpc error: timed out` (the driver took too long to
bring the GPUs up for the container: persistence mode off, or a GPU that hangs in
initialization) and OpenCL's `clGetDeviceIDs(): CL_DEVICE_NOT_FOUND` (a platform without a
device, such as Mesa's OpenCL runtime beside NVIDIA's).

## Why is this bad?
Without the kernel driver (or, in a container, without the driver mounted in), no GPU work
can run. Common causes: a kernel update without a rebuilt DKMS module, Secure Boot rejecting
the unsigned module, nouveau holding the GPU, a container started without `--gpus`.

## Example
```
NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that
the latest NVIDIA driver is installed and running.
```

## How to fix
1. Check the module: `lsmod | grep nvidia`, `dkms status`, `sudo dmesg | grep -i nvidia`.
2. Rebuild or reinstall the driver for the running kernel; with Secure Boot, sign the module
   (MOK) or disable Secure Boot; blacklist nouveau.
3. In a container: run it with the NVIDIA container toolkit (`docker run --gpus all ...`).
",
};

/// A finding for a message that names its own situation.
type SpecialFinding = fn(&[&Observation]) -> Finding;

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    // Inside a container the plain messages mean the container did not get the GPU: GD546.
    if super::gd546_visible_devices::no_driver_in_container(input).is_some()
        || super::gd546_visible_devices::nvidia_smi_missing_beside_a_gpu(input).is_some()
    {
        return Vec::new();
    }
    let all = env_observations(input, EnvKind::NoDriver);
    let saying = |d: &str| -> Vec<&Observation> {
        all.iter().copied().filter(|o| has_detail(o, d)).collect()
    };
    // Messages of this kind that say less than "no driver" (a missing nvidia-smi, the
    // container runtime's timeout, OpenCL's empty platform) are the finding only when nothing
    // says more; the first of them in this order then.
    let weaker: [(&str, SpecialFinding); 3] = [
        (detail::DRIVER_RPC_TIMEOUT, driver_rpc_timeout),
        (detail::NVIDIA_SMI_MISSING, nvidia_smi_missing),
        (detail::OPENCL_NO_DEVICE, opencl_no_device),
    ];
    let hits: Vec<&Observation> = all
        .iter()
        .copied()
        .filter(|o| !weaker.iter().any(|(d, _)| has_detail(o, d)))
        .collect();
    let Some(first) = hits.first() else {
        return weaker
            .iter()
            .find_map(|(d, finding)| {
                let seen = saying(d);
                seen.first().map(|o| Hit {
                    finding: finding(&seen),
                    seq: o.seq,
                })
            })
            .into_iter()
            .collect();
    };
    if let Some(legacy) = env_detail(&hits).filter(|d| d.starts_with(detail::LEGACY_GPU)) {
        return vec![Hit {
            finding: legacy_gpu(&hits, &legacy),
            seq: first.seq,
        }];
    }
    if env_detail(&hits).as_deref() == Some(detail::GPU_NOT_IN_RELEASE) {
        return vec![Hit {
            finding: gpu_not_in_release(&hits),
            seq: first.seq,
        }];
    }
    if env_detail(&hits).as_deref() == Some(detail::GPU_PARAVIRTUAL_BLOCKED) {
        return vec![Hit {
            finding: paravirtual_blocked(&hits),
            seq: first.seq,
        }];
    }
    if env_detail(&hits).as_deref() == Some(detail::OPEN_MODULE_UNSUPPORTED) {
        return vec![Hit {
            finding: open_module_unsupported(&hits),
            seq: first.seq,
        }];
    }
    let uvm = env_detail(&hits).as_deref() == Some(detail::NVIDIA_UVM);
    let nouveau = hits.iter().any(|o| has_detail(o, detail::NOUVEAU));
    let message = if nouveau {
        "nouveau, the open-source driver, holds the GPU instead of NVIDIA's driver: CUDA cannot use the GPU until NVIDIA's kernel module drives it."
    } else if uvm {
        "CUDA could not start although the driver is present (error 999, or a container runtime that could not load the UVM module): most often the driver's unified-memory module (nvidia_uvm) is in a bad state after a suspend, or not loaded (in a container or LXC guest: /dev/nvidia-uvm not passed in)."
    } else {
        "No usable NVIDIA driver: it is not installed, not loaded for the running kernel, or not visible inside the container."
    };
    let mut f = finding_from(
        "GD545",
        Cause::EnvNoDriver,
        Severity::Error,
        message,
        if uvm { 0.6 } else { 0.85 },
        &hits,
    );
    if uvm {
        f = f.with_remedy(
            "Reload the unified-memory module (or reboot)",
            Some("sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm".to_owned()),
            Some("also check that CUDA_VISIBLE_DEVICES is set before the program starts, not changed inside it".to_owned()),
        );
    }
    if nouveau {
        f = f.with_remedy(
            "Blacklist nouveau, rebuild the initramfs and reboot (then install or load NVIDIA's driver)",
            Some("printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot".to_owned()),
            Some("Fedora/RHEL: sudo dracut --force instead of update-initramfs".to_owned()),
        );
    }
    f = f
        .with_remedy(
            "Check whether the kernel module is loaded and built for this kernel",
            Some("lsmod | grep nvidia; dkms status; sudo dmesg | grep -i -E 'nvidia|nouveau' | tail".to_owned()),
            None,
        )
        .with_remedy(
            "Reinstall or rebuild the driver for the running kernel, then reboot (sign it if Secure Boot is on)",
            Some("sudo apt install --reinstall nvidia-dkms-580 && sudo reboot".to_owned()),
            Some("`mokutil --sb-state` shows whether Secure Boot is on".to_owned()),
        )
        .with_remedy(
            "In a container, give it the GPUs",
            Some("docker run --gpus all ...".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// The driver branch installed dropped this GPU (NVRM names the legacy branch that still
/// drives it): the module loads and ignores the GPU.
fn legacy_gpu(hits: &[&Observation], what: &str) -> Finding {
    let branch = what
        .split_once(" (")
        .and_then(|(_, b)| b.strip_suffix(" legacy driver)"))
        .unwrap_or("the legacy");
    finding_from(
        "GD545",
        Cause::EnvNoDriver,
        Severity::Error,
        format!("The installed NVIDIA driver does not support this GPU and ignores it: it is driven only by the {branch} legacy driver branch, so no GPU is usable until that branch is installed."),
        0.9,
        hits,
    )
    .with_remedy(
        format!("Install the {branch} legacy driver branch instead of the current one"),
        Some("sudo apt install nvidia-driver-580   # the branch NVRM names; Fedora/RPM Fusion: akmod-nvidia-580xx".to_owned()),
        Some("the GPU's entry in NVIDIA's legacy GPU list (nvidia.com/object/unix.html) names the last branch that supports it".to_owned()),
    )
}

/// `bash: nvidia-smi: command not found`: the tool is not here, which alone says nothing about
/// the driver.
fn nvidia_smi_missing(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD545",
        Cause::Other,
        Severity::Warn,
        "nvidia-smi is not installed or not on this shell's PATH: that alone does not say whether a driver is loaded (a login or build node without GPUs, a driver installed without its utilities, a container started without the NVIDIA runtime's `utility` capability).",
        0.5,
        hits,
    )
    .with_remedy(
        "See whether a driver is loaded at all, and where nvidia-smi is",
        Some("cat /proc/driver/nvidia/version; ls -l /usr/bin/nvidia-smi; echo $PATH".to_owned()),
        Some("a version there means the driver is fine and only the utilities are missing".to_owned()),
    )
    .with_remedy(
        "Install the driver's utilities, or run it where the GPUs are",
        Some("sudo apt install nvidia-utils-580   # or, from a Slurm login node: srun --gres=gpu:1 nvidia-smi".to_owned()),
        Some("in a container: --gpus all with NVIDIA_DRIVER_CAPABILITIES including utility".to_owned()),
    )
}

/// hashcat's (and other OpenCL programs') `clGetDeviceIDs(): CL_DEVICE_NOT_FOUND`: an OpenCL
/// platform with no device of the kind asked for.
fn opencl_no_device(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD545",
        Cause::Other,
        Severity::Error,
        "An OpenCL platform has no device (CL_DEVICE_NOT_FOUND): an OpenCL runtime without a usable device (Mesa's Clover or rusticl, POCL) is installed beside NVIDIA's, or NVIDIA's own OpenCL platform lists no GPU.",
        0.5,
        hits,
    )
    .with_remedy(
        "List the OpenCL platforms and their devices, and the installed ICDs",
        Some("clinfo -l; ls /etc/OpenCL/vendors/".to_owned()),
        Some("NVIDIA's platform needs /etc/OpenCL/vendors/nvidia.icd".to_owned()),
    )
    .with_remedy(
        "Remove the runtime that has no device, or tell the program which platform to use",
        Some("sudo apt remove mesa-opencl-icd   # Fedora: sudo dnf remove mesa-libOpenCL".to_owned()),
        Some("hashcat: -D 2 (GPUs only) or --backend-devices to pick the NVIDIA device".to_owned()),
    )
}

/// `nvidia-container-cli: initialization error: driver rpc error: timed out`.
fn driver_rpc_timeout(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD545",
        Cause::Other,
        Severity::Error,
        "The NVIDIA container runtime timed out waiting for the driver: without persistence mode the driver brings the GPUs up again for every container, and that took too long (many GPUs, or a GPU that hangs while it initializes).",
        0.6,
        hits,
    )
    .with_remedy(
        "Keep the driver initialized between jobs with the persistence daemon",
        Some("sudo systemctl enable --now nvidia-persistenced; nvidia-smi -q | grep -i 'persistence mode'".to_owned()),
        None,
    )
    .with_remedy(
        "If it still times out, look for a GPU that hangs in initialization",
        Some("sudo dmesg -T | grep -i -E 'NVRM|Xid' | tail -30".to_owned()),
        None,
    )
}

/// The kernel module loaded but declined the GPU: this driver release does not support it.
fn gpu_not_in_release(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD545",
        Cause::EnvNoDriver,
        Severity::Error,
        "The loaded driver release does not support this GPU, so no driver drives it: the GPU is newer than the driver, older than the branch supports (a legacy branch drives it), or, in a virtual machine given a vGPU, it needs NVIDIA's vGPU guest driver rather than the datacenter driver.",
        0.85,
        hits,
    )
    .with_remedy(
        "Find the GPU's PCI ID and look it up in the driver's list of supported GPUs (Appendix A of the release's README)",
        Some("lspci -nn | grep -i nvidia; cat /proc/driver/nvidia/version".to_owned()),
        None,
    )
    .with_remedy(
        "Install a driver branch that lists the GPU; in a VM with a vGPU, the vGPU (GRID) guest driver that matches the host's vGPU manager",
        None,
        None,
    )
}

/// NVML in WSL 2 or a Hyper-V GPU-partitioned guest could not reach the Windows driver.
fn paravirtual_blocked(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD545",
        Cause::EnvNoDriver,
        Severity::Error,
        "NVML could not reach the GPU: the operating system blocked the access. This happens in WSL 2 and Hyper-V GPU-partitioned guests, whose only path to the GPU is the Windows driver through the dxgkrnl kernel module (/dev/dxg) and the libraries in /usr/lib/wsl/lib; that path is missing or broken.",
        0.7,
        hits,
    )
    .with_remedy(
        "Check the path to the Windows driver: the device node, the kernel module and the WSL libraries",
        Some("ls -l /dev/dxg; lsmod | grep dxgkrnl; uname -r; ls /usr/lib/wsl/lib".to_owned()),
        Some("a Hyper-V guest must boot a kernel built with dxgkrnl; WSL: wsl --update in Windows".to_owned()),
    )
    .with_remedy(
        "Keep the Linux driver out of the guest (the Windows driver serves it), and update the Windows driver",
        None,
        None,
    )
}

/// The open kernel module on a GPU it does not drive (no GSP).
fn open_module_unsupported(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD545",
        Cause::EnvNoDriver,
        Severity::Error,
        "The open NVIDIA kernel module is loaded, and it does not drive this GPU: it needs the GPU System Processor (GSP) that Turing and later have, and Maxwell, Pascal and Volta GPUs lack. No usable driver is attached to it.",
        0.9,
        hits,
    )
    .with_remedy(
        "Install the proprietary kernel module of the same driver release instead of the open one",
        Some("sudo apt install nvidia-dkms-580   # not nvidia-dkms-580-open; or: sh NVIDIA-Linux-*.run -m=kernel".to_owned()),
        Some("releases after 580 drop Maxwell, Pascal and Volta: stay on the 580 branch for these GPUs".to_owned()),
    )
    .with_remedy(
        "Check which module is loaded",
        Some("modinfo nvidia | grep -i license   # Dual MIT/GPL is the open module".to_owned()),
        None,
    )
}
