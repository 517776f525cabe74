//! GD548: an NVIDIA driver installation failed, or was refused.

use super::{Hit, Input, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{DriverInstallOutcome, ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD548",
    name: "driver-install",
    cause: Some(Cause::EnvNoDriver),
    summary: "The NVIDIA driver installer (nvidia-installer, DKMS) failed or refused to install",
    body: r"## What it does
Reads the output of nvidia-installer (the `.run` file, the GPU operator's driver container) and
of DKMS: its `ERROR:` lines, its failed build of the module (`Error! Bad return status for
module build`, with the make.log it names, whose first compiler error the first remedy
shows), the refusal to install while an NVIDIA kernel module is loaded, and DKMS's refusal to
replace a module of the same version.

## Why is this bad?
A failed installation leaves the machine without a working driver, which every GPU job then
reports as `couldn't communicate with the NVIDIA driver` or `no CUDA-capable device`. Two of
the installer's errors are not that: a module that `appears to already be loaded` means a
driver is installed and in use (cause `other`), and DKMS's `Module version ... exactly
matches what is already found in kernel` means the module is already built and installed for
this kernel (cause `other`, a warning).

## Example
```
ERROR: Unable to load the kernel module 'nvidia.ko'.
ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for details.
```

## How to fix
1. Read the installer's log: `sudo grep -i -B2 -A8 error /var/log/nvidia-installer.log`.
2. The usual causes: kernel headers missing for the running kernel
   (`sudo apt install linux-headers-$(uname -r)`), the nouveau driver loaded
   (`lsmod | grep nouveau`: blacklist it, rebuild the initramfs, reboot), Secure Boot
   rejecting an unsigned module (`mokutil --sb-state`).
3. A module that is already loaded: stop what uses it (the display manager,
   nvidia-persistenced) and unload it, or remove the old driver first.
",
};

/// Builds the finding for one outcome from the lines that reported it.
type BuildFinding = fn(&[&Observation]) -> Finding;

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let of = |want: DriverInstallOutcome| -> Vec<&Observation> {
        input
            .facts
            .observations
            .iter()
            .filter(
                |o| matches!(&o.kind, ObsKind::DriverInstall { outcome, .. } if *outcome == want),
            )
            .collect()
    };
    // The refusals explain the installer's `ERROR:` lines around them.
    let kinds: [(DriverInstallOutcome, BuildFinding); 3] = [
        (DriverInstallOutcome::ModuleLoaded, module_loaded),
        (DriverInstallOutcome::SameVersionInstalled, same_version),
        (DriverInstallOutcome::Failed, failed),
    ];
    kinds
        .into_iter()
        .find_map(|(outcome, finding)| {
            let seen = of(outcome);
            let first = seen.first()?.seq;
            Some(vec![Hit {
                finding: finding(&seen),
                seq: first,
            }])
        })
        .unwrap_or_default()
}

fn failed(seen: &[&Observation]) -> Finding {
    let detail = seen.iter().find_map(|o| match &o.kind {
        ObsKind::DriverInstall {
            detail: Some(d), ..
        } if !d.is_empty() => Some(d.clone()),
        _ => None,
    });
    let message = match detail {
        Some(d) => format!(
            "The NVIDIA driver did not install (\"{d}\"): until it does, the machine has no working NVIDIA driver."
        ),
        None => "The NVIDIA driver did not install: until it does, the machine has no working NVIDIA driver.".to_owned(),
    };
    let f = finding_from(
        "GD548",
        Cause::EnvNoDriver,
        Severity::Error,
        message,
        0.7,
        seen,
    );
    let gcc_mismatch = seen.iter().any(|o| {
        matches!(&o.kind, ObsKind::DriverInstall { detail: Some(d), .. } if d == gpu_doctor_scan::detail::GCC_MISMATCH)
    });
    let f = if gcc_mismatch {
        f.with_remedy(
            "Build the module with the compiler that built the target kernel (its version is in /proc/version for the running one)",
            Some("cat /proc/version; gcc --version   # install that gcc, or: export IGNORE_CC_MISMATCH=1".to_owned()),
            Some("DKMS building for a newly installed kernel checks against the running kernel's compiler: reboot into the new kernel and build there".to_owned()),
        )
    } else {
        f
    };
    // DKMS names its build log (`Consult /var/lib/dkms/nvidia/390.157/build/make.log ...`):
    // the compiler's first error is there, not in nvidia-installer's log.
    let dkms_log = seen.iter().find_map(|o| {
        let start = o.text.find("/var/lib/dkms/nvidia")?;
        let path = o.text[start..].split_whitespace().next()?;
        path.ends_with("make.log").then(|| path.to_owned())
    });
    let f = match dkms_log {
        Some(log) => f.with_remedy(
            "Read DKMS's build log for the compiler's first error",
            Some(format!("grep -n -m5 -B2 -A4 'error' {log}")),
            Some("errors about kernel functions or headers mean this driver branch does not build on this kernel: boot a kernel the branch supports, or use a driver release (or the distribution's patched package) made for it".to_owned()),
        ),
        None => f.with_remedy(
            "Read the installer's log for the first error",
            Some("sudo grep -i -B2 -A8 error /var/log/nvidia-installer.log".to_owned()),
            None,
        ),
    };
    f.with_remedy(
            "Install the headers of the running kernel, then install again",
            Some("sudo apt install linux-headers-$(uname -r)   # dnf: kernel-devel-$(uname -r)".to_owned()),
            None,
        )
        .with_remedy(
            "If nouveau is loaded, blacklist it and reboot before installing",
            Some("lsmod | grep nouveau && echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u".to_owned()),
            Some("with Secure Boot on (`mokutil --sb-state`), the module must be signed".to_owned()),
        )
}

fn module_loaded(seen: &[&Observation]) -> Finding {
    finding_from(
        "GD548",
        Cause::Other,
        Severity::Error,
        "The NVIDIA driver installer refused to run because an NVIDIA kernel module is loaded: a driver is already installed and in use.",
        0.75,
        seen,
    )
    .with_remedy(
        "See which driver is loaded and what uses it",
        Some("cat /proc/driver/nvidia/version; lsmod | grep nvidia; sudo lsof /dev/nvidia*".to_owned()),
        None,
    )
    .with_remedy(
        "Stop what uses it and unload the modules, then install again",
        Some("sudo systemctl isolate multi-user.target; sudo systemctl stop nvidia-persistenced; sudo rmmod nvidia_drm nvidia_modeset nvidia_uvm nvidia".to_owned()),
        Some("or remove the old driver first: its packages, or `sudo nvidia-uninstall`".to_owned()),
    )
    .with_remedy(
        "On Kubernetes, when the NVIDIA GPU Operator's driver container says this, the host has its own driver: let the operator use it",
        Some("helm upgrade gpu-operator nvidia/gpu-operator -n gpu-operator --set driver.enabled=false".to_owned()),
        None,
    )
}

fn same_version(seen: &[&Observation]) -> Finding {
    finding_from(
        "GD548",
        Cause::Other,
        Severity::Warn,
        "DKMS would not replace the NVIDIA module because the same version is already installed for this kernel: the module is in place, and this \"error\" does not mean the driver is missing.",
        0.6,
        seen,
    )
    .with_remedy(
        "Check that the installed module is the one in use",
        Some("modinfo -F version nvidia; cat /proc/driver/nvidia/version; nvidia-smi".to_owned()),
        None,
    )
    .with_remedy(
        "If a rebuild is really wanted, force it",
        Some("sudo dkms install --force -m nvidia -v <version> -k $(uname -r)".to_owned()),
        None,
    )
}
