//! GD540: the NVIDIA driver is older than the CUDA the software was built for.

use super::{Hit, Input, env_detail, env_observations, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::{EnvKind, Observation, detail};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD540",
    name: "driver-too-old",
    cause: Some(Cause::EnvDriverTooOld),
    summary: "The NVIDIA driver is older than the CUDA runtime the software needs",
    body: r"## What it does
Finds `The NVIDIA driver on your system is too old (found version 11000)`, `CUDA driver
version is insufficient for CUDA runtime version` (error 35), `the provided PTX was compiled
with an unsupported toolchain` (222), `system has unsupported display driver / cuda driver
combination` (803), `forward compatibility was attempted on non supported HW` (804) and the
container toolkit's `unsatisfied condition: cuda>=12.8` and MATLAB's `The CUDA driver was
found, but it is too old`, and turns the driver's CUDA version into the wheel to install. XLA's `The NVIDIA driver's CUDA version is 12.4 which is older than
the PTX compiler version 12.5.82` (the job runs, compiling more slowly) is a warning.

## Why is this bad?
A driver supports CUDA up to the version `nvidia-smi` shows in its header. Software built for
a newer CUDA cannot start (or cannot JIT its PTX) on it. Nothing runs on the GPU until the
driver or the software changes. 803 means the CUDA driver library (`libcuda`, or a newer
`cuda-compat` copy of it) does not go with the loaded kernel driver, usually one too old for
it or one upgraded without a reboot; 804 means the `cuda-compat` copy was tried on a GPU that
forward compatibility does not support (GeForce and most workstation cards).

## Example
```
RuntimeError: The NVIDIA driver on your system is too old (found version 11060).
```
The driver supports CUDA 11.6; the PyTorch wheel needs a newer CUDA.

## How to fix
1. Install a build for the CUDA the driver supports, e.g.
   `pip install torch --index-url https://download.pytorch.org/whl/cu118` for an 11.x driver.
2. Or upgrade the driver (CUDA 12.x needs ≥ 525.60.13, 13.x ≥ 580.65.06 on Linux).
3. On data-center GPUs, the `cuda-compat` package can run a newer CUDA on an older driver.
",
};

/// The newest `PyTorch` wheel tag that a driver supporting CUDA `major.minor` can run.
fn wheel_for(major: u32, minor: u32) -> Option<&'static str> {
    Some(match (major, minor) {
        (m, _) if m >= 13 => "cu130",
        (12, n) if n >= 8 => "cu128",
        (12, n) if n >= 6 => "cu126",
        (12, n) if n >= 4 => "cu124",
        (12, _) => "cu121",
        (11, n) if n >= 8 => "cu118",
        (11, n) if n >= 7 => "cu117",
        (11, n) if n >= 6 => "cu116",
        (11, n) if n >= 3 => "cu113",
        (11, _) => "cu111",
        (10, 2) => "cu102",
        _ => return None,
    })
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = env_observations(input, EnvKind::DriverTooOld);
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    // 803 and 804 are about which libcuda meets which kernel driver, not about the wheel's
    // CUDA: the wheel advice below would not help.
    match env_detail(&hits).as_deref() {
        Some(d) if d == detail::ERROR_803 => return vec![driver_mismatch(&hits, false)],
        Some(d) if d == detail::ERROR_804 => return vec![driver_mismatch(&hits, true)],
        // FFmpeg prints its minimum driver after any failure to load the driver's video
        // library: the missing library (GD543) is the finding then.
        Some(d) if d == detail::NVENC && video_library_missing(input) => return Vec::new(),
        Some(d) if d == detail::NVENC => return vec![nvenc(&hits)],
        Some(d) if d == detail::OPTIX_ABI => return vec![optix(&hits)],
        Some(d) if d.starts_with(detail::XLA_PTX_COMPILER) => {
            return vec![xla_slower_compilation(&hits, d)];
        }
        _ => {}
    }
    // `found version 11060` is cudaDriverGetVersion: 1000 * major + 10 * minor.
    let supported = env_detail(&hits)
        .and_then(|d| d.parse::<u32>().ok())
        .map(|v| (v / 1000, (v % 1000) / 10));
    // "the software needs driver 551.78 or later", "the container needs driver 450.51 or later".
    let needed = env_detail(&hits).and_then(|d| {
        d.split_once("needs driver ").and_then(|(who, rest)| {
            Some((who.to_owned(), rest.strip_suffix(" or later")?.to_owned()))
        })
    });
    let message = match (supported, needed) {
        (_, Some((who, version))) => format!(
            "The NVIDIA driver is older than {}needs (driver {version} or later): nothing can run on the GPU until the driver is updated.",
            who.trim_start_matches("the ")
                .split_whitespace()
                .next()
                .map_or_else(String::new, |w| format!("the {w} "))
        ),
        (Some((major, minor)), None) => format!(
            "The NVIDIA driver supports CUDA up to {major}.{minor}, older than the CUDA the software was built for; nothing can run on the GPU until one of them changes."
        ),
        (None, None) => "The NVIDIA driver is older than the CUDA runtime the software was built for; nothing can run on the GPU until one of them changes.".to_owned(),
    };
    let mut f = finding_from(
        "GD540",
        Cause::EnvDriverTooOld,
        Severity::Error,
        message,
        0.9,
        &hits,
    );
    match supported.and_then(|(a, b)| wheel_for(a, b).map(|w| (a, b, w))) {
        Some((a, b, wheel)) => {
            f = f.with_remedy(
                format!("Install a PyTorch build for CUDA {a}.{b} or older"),
                Some(format!("pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/{wheel}")),
                Some("for other frameworks, pick the build for the same CUDA (e.g. jax[cuda12], cupy-cuda12x)".to_owned()),
            );
        }
        None => {
            f = f.with_remedy(
                "Install a build for the CUDA version `nvidia-smi` shows in its header, or older",
                Some("nvidia-smi | head -4  # then e.g.: pip install torch --index-url https://download.pytorch.org/whl/cu126".to_owned()),
                None,
            );
        }
    }
    f = f
        .with_remedy(
            "Or upgrade the driver: CUDA 12.x needs ≥ 525.60.13, CUDA 13.x ≥ 580.65.06 (Linux)",
            Some("sudo apt install nvidia-driver-580  # or your distribution's package".to_owned()),
            None,
        )
        .with_remedy(
            "On data-center GPUs, the forward-compatibility package runs a newer CUDA on an older driver",
            Some("sudo apt install cuda-compat-12-8  # then put /usr/local/cuda/compat on LD_LIBRARY_PATH".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// CUDA errors 803 (libcuda and the kernel driver do not go together) and 804 (a
/// `cuda-compat` libcuda on a GPU that forward compatibility does not support).
fn driver_mismatch(hits: &[&Observation], compat: bool) -> Hit {
    let message = if compat {
        "CUDA's forward-compatibility library (cuda-compat) was loaded on a GPU that does not support it (error 804): the driver is too old for the CUDA the software uses, and on this GPU only a newer driver helps."
    } else {
        "The CUDA driver library in use (libcuda) does not go with the loaded NVIDIA kernel driver (error 803): usually a driver too old for the CUDA libraries the job loads (or a cuda-compat copy of libcuda that this driver or GPU cannot use), or a driver upgrade not yet followed by a reboot."
    };
    let f = finding_from(
        "GD540",
        Cause::EnvDriverTooOld,
        Severity::Error,
        message,
        0.85,
        hits,
    );
    let f = f
        .with_remedy(
            "Install a current NVIDIA driver and reboot (a reboot alone fixes it right after a driver upgrade)",
            Some("nvidia-smi  # after the reboot it must work and show the new version".to_owned()),
            None,
        )
        .with_remedy(
            "Keep cuda-compat's libcuda off the loader's path unless the GPU is a data-center GPU (CUDA container images add it)",
            Some("ldconfig -p | grep libcuda.so; echo $LD_LIBRARY_PATH  # drop /usr/local/cuda/compat".to_owned()),
            None,
        );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// XLA's warning that the driver is older than the PTX compiler it bundles: the job runs,
/// but XLA compiles serially (slower start-up), and the driver may reject newer PTX later.
fn xla_slower_compilation(hits: &[&Observation], detail: &str) -> Hit {
    let message = format!(
        "The NVIDIA driver is older than {detail}: XLA compiles without parallelism (slower start-up) and may fail on PTX the driver cannot load; the job itself still runs."
    );
    let f = finding_from(
        "GD540",
        Cause::EnvDriverTooOld,
        Severity::Warn,
        message,
        0.9,
        hits,
    )
    .with_remedy(
        "Upgrade the driver to one whose CUDA version (nvidia-smi's header) is at least the PTX compiler's",
        Some("nvidia-smi | head -4; sudo apt install nvidia-driver-580  # or your distribution's package".to_owned()),
        None,
    )
    .with_remedy(
        "Or install the framework build for the CUDA the driver supports (e.g. an older jax[cuda12] / tensorflow[and-cuda])",
        None,
        None,
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// Whether the log says the driver's video library could not be loaded (`Cannot load
/// libnvidia-encode.so.1`, `libnvcuvid.so.1`).
fn video_library_missing(input: &Input<'_>) -> bool {
    env_observations(input, EnvKind::LibMissing)
        .iter()
        .any(|o| match &o.kind {
            gpu_doctor_scan::ObsKind::Env {
                detail: Some(d), ..
            } => d.contains("nvidia-encode") || d.contains("nvcuvid"),
            _ => false,
        })
}

/// OptiX is part of the driver: software built with a newer OptiX SDK needs a newer driver.
fn optix(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD540",
        Cause::EnvDriverTooOld,
        Severity::Error,
        "The NVIDIA driver's OptiX is older than the OptiX SDK the software was built with (OPTIX_ERROR_UNSUPPORTED_ABI_VERSION): OptiX ships inside the driver, so only a newer driver runs it.".to_owned(),
        0.85,
        hits,
    )
    .with_remedy(
        "Update the NVIDIA driver to one that supports the software's OptiX version (its release notes name the minimum driver)",
        Some("nvidia-smi | head -4   # then install a newer driver".to_owned()),
        None,
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// FFmpeg's NVENC: `The minimum required Nvidia driver for nvenc is 520.56.06 or newer`.
fn nvenc(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD540",
        Cause::EnvDriverTooOld,
        Severity::Error,
        "The NVIDIA driver is older than the NVENC API this FFmpeg was built for: its hardware encoders cannot start until the driver is upgraded (the log names the minimum) or an FFmpeg built against an older NVENC SDK is used.",
        0.9,
        hits,
    )
    .with_remedy(
        "Upgrade the driver to the minimum the log names, or newer",
        Some("nvidia-smi | head -4; sudo apt install nvidia-driver-580   # or your distribution's package".to_owned()),
        Some("in a container (Jellyfin, Plex), the host's driver is the one that counts".to_owned()),
    )
    .with_remedy(
        "Or use an FFmpeg (or media server image) built with an older nv-codec-headers",
        None,
        None,
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}
