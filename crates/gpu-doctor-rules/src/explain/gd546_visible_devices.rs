//! GD546: the job asked for a GPU it cannot see.

use super::{Hit, Input, env_observations, finding_from, has_detail};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{EnvKind, ObsKind, Observation, detail};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD546",
    name: "gpu-not-visible",
    cause: Some(Cause::EnvVisibleDevices),
    summary: "The job asked for a GPU that is not visible to it (invalid device ordinal, no GPUs available)",
    body: r#"## What it does
Finds `invalid device ordinal` (CUDA 101), `no CUDA-capable device is detected` (100), `No CUDA
GPUs are available`, nvidia-smi's `No devices were found` and Slurm's `gres/gpu count reported lower
than configured (0 < N)` (the driver answers but lists no GPU), and NCCL's `Duplicate GPU
detected` (two ranks on one GPU). `all CUDA-capable devices are busy or unavailable` (CUDA 46;
`CUDA-capable device(s) is/are busy or unavailable` since CUDA 11) is reported here with cause
`other`: the GPU is visible but refuses new work (exclusive-process mode with another process
on it, MPS, a GPU that needs a reset, an unlicensed virtual GPU). So are `nvidia-smi -q`'s
`License Status : Unlicensed` on a virtual GPU and Slurm's `gres/gpu count reported lower than
configured (3 < 4)` (some GPUs missing: one fell off the bus, or the MIG layout changed), and
docker's `cannot set both Count and DeviceIDs` gets advice of its own. A plain "no driver"
message (`Found no NVIDIA driver`, nvidia-smi's `couldn't communicate with the NVIDIA driver`)
printed inside a container (a docker compose service's `name-1  | ` prefix, a shell prompt whose
host name is a container ID) is reported here rather than by GD545: the container was not given
the GPU. So is a missing nvidia-smi (`bash: nvidia-smi: command not found`) in a log that also
shows the GPU with its driver loaded (the driver's `/proc/driver/nvidia/gpus/.../information`,
a CI runner's `GPUs UIDs: GPU-...`, a start script's `NVIDIA GPU detected`): the machine has
the driver, and this environment was not given its files.

## Why is this bad?
The job addressed a GPU index that does not exist in its view: `CUDA_VISIBLE_DEVICES`
renumbers GPUs from 0 and hides the rest, or a scheduler gave it fewer GPUs than it assumes.

## Example
```
torch.AcceleratorError: CUDA error: invalid device ordinal
GPU device may be out of range, do you have enough GPUs?
```
`cuda:3` on a machine (or allocation) with one GPU.

## How to fix
1. See what the job sees: `echo $CUDA_VISIBLE_DEVICES`,
   `python -c "import torch; print(torch.cuda.device_count())"`, `nvidia-smi -L`.
2. Address GPUs relative to `CUDA_VISIBLE_DEVICES` (`cuda:0` is the first visible one), or
   derive the device from `LOCAL_RANK`.
3. For "busy or unavailable", check the compute mode (`nvidia-smi -q -d COMPUTE`) and who holds
   the GPU.
"#,
};

/// A finding for a message that names its own situation.
type SpecialFinding = fn(&[&Observation]) -> Finding;

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    if let Some(evidence) = no_driver_in_container(input) {
        return vec![Hit {
            finding: container_not_given_the_gpu(&evidence),
            seq: evidence[0].seq,
        }];
    }
    if let Some(evidence) = nvidia_smi_missing_beside_a_gpu(input) {
        return vec![Hit {
            finding: tools_not_given(&evidence),
            seq: evidence[0].seq,
        }];
    }
    let mut hits = env_observations(input, EnvKind::VisibleDevices);
    // NVML's `Unknown Error` beside its `Function Not Found`: the libnvidia-ml that loaded is
    // not the driver's (GD543 says so), which explains the failure without lost device access.
    let foreign_nvml = env_observations(input, EnvKind::LibMismatch)
        .iter()
        .any(|o| o.text.contains("NVML: Function Not Found"));
    if foreign_nvml {
        hits.retain(|o| !has_detail(o, detail::DEVICE_ACCESS_LOST));
    }
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let visible = input.live.map(|s| s.devices.len());
    // Messages that name their own situation get their own finding.
    let specials: [(&str, SpecialFinding); 16] = [
        (detail::DEVICE_ACCESS_LOST, lost_device_access),
        (detail::JAX_NO_GPU, jax_found_none),
        (detail::CDI_UNRESOLVED, cdi_unresolved),
        (detail::DUPLICATE_GPU, duplicate_gpu),
        (detail::NO_GPU_ENUMERATED, none_enumerated),
        (detail::CONTAINER_WITHOUT_GPUS, container_without_gpus),
        (detail::VISIBLE_DEVICES_ENVVAR_REFUSED, envvar_refused),
        (detail::VISIBLE_AFTER_INIT, visible_after_init),
        (detail::LAUNCHER_SLOT, launcher_slot),
        (detail::DOCKER_GPU_REQUEST, docker_gpu_request),
        (detail::GPUS_MISSING, gpus_missing),
        (detail::VGPU_UNLICENSED, vgpu_unlicensed),
        (detail::GPU_HELD_BY_CLIENT, gpu_held_by_client),
        (detail::CDI_MODE_HOOK, cdi_mode_hook),
        (detail::GRES_SPEC_INVALID, gres_spec_invalid),
        (detail::NVENC_SESSION, nvenc_session),
    ];
    // The first detail that names a situation; the CUDA errors' own details come after them.
    let generic = [detail::DEVICES_BUSY, detail::NO_CUDA_DEVICE];
    let named = hits.iter().find_map(|o| match &o.kind {
        ObsKind::Env {
            detail: Some(d), ..
        } if !generic.contains(&d.as_str()) => Some(d.as_str()),
        _ => None,
    });
    let special = specials
        .into_iter()
        .find_map(|(name, finding)| (named == Some(name)).then_some(finding))
        // "Busy or unavailable" says more than an index error beside it.
        .or_else(|| {
            hits.iter()
                .any(|o| has_detail(o, detail::DEVICES_BUSY))
                .then_some(devices_unavailable as SpecialFinding)
        });
    if let Some(finding) = special {
        return vec![Hit {
            finding: finding(&hits),
            seq: first.seq,
        }];
    }
    // CUDA's 100 (no device at all) and 101 (an index past the last visible one) differ.
    let none_visible = hits.iter().any(|o| has_detail(o, detail::NO_CUDA_DEVICE));
    let message = match (none_visible, visible) {
        (true, Some(n)) => format!("The driver answered but showed the job no GPU (CUDA's \"no CUDA-capable device\"): CUDA_VISIBLE_DEVICES is empty or wrong, or the container was started without GPUs; this machine shows {n} GPU(s) now."),
        (true, None) => "The driver answered but showed the job no GPU (CUDA's \"no CUDA-capable device\"): CUDA_VISIBLE_DEVICES is empty or wrong, or the container was started without GPUs.".to_owned(),
        (false, Some(n)) => format!("The job asked for a GPU it cannot see (invalid device ordinal or no GPUs available); this machine shows {n} GPU(s) now."),
        (false, None) => "The job asked for a GPU it cannot see: the device index is out of range for the GPUs visible to it, or none is visible.".to_owned(),
    };
    let mut f = finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        message,
        0.85,
        &hits,
    );
    f = f
        .with_remedy(
            "See which GPUs the job can see",
            Some("echo \"$CUDA_VISIBLE_DEVICES\"; nvidia-smi -L; python -c \"import torch; print(torch.cuda.device_count())\"".to_owned()),
            None,
        )
        .with_remedy(
            "Address GPUs relative to CUDA_VISIBLE_DEVICES (cuda:0 is the first visible one), e.g. from LOCAL_RANK",
            Some("device = torch.device(\"cuda\", int(os.environ.get(\"LOCAL_RANK\", 0)))".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// `docker: Error response from daemon: cannot set both Count and DeviceIDs on device
/// request`: the container never started.
fn docker_gpu_request(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "Docker refused the container's GPU request: it names both a number of GPUs and their IDs (`--gpus` with both, or compose's `count` next to `device_ids`); give one of them.",
        0.9,
        hits,
    )
    .with_remedy(
        "Ask for GPUs by ID only (or by count only)",
        Some("docker run --gpus '\"device=0,1\"' ...   (or: docker run --gpus 2 ...)".to_owned()),
        Some("compose: under deploy.resources.reservations.devices keep either `count` or `device_ids`".to_owned()),
    )
}

/// Slurm's `gres/gpu count reported lower than configured (3 < 4)`: the node is drained.
fn gpus_missing(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::Other,
        Severity::Error,
        "Slurm drained the node: it found fewer GPUs than gres.conf/slurm.conf configure. A GPU has dropped off the bus (the kernel log then shows Xid 79), or the GPUs or their MIG layout changed without the configuration.",
        0.6,
        hits,
    )
    .with_remedy(
        "Compare the GPUs the node shows with its configuration",
        Some("nvidia-smi -L; grep -i gpu /etc/slurm/gres.conf; scontrol show node $(hostname) | grep -i gres".to_owned()),
        None,
    )
    .with_remedy(
        "Look for a GPU that fell off the bus",
        Some("sudo dmesg | grep -iE 'Xid|fallen off|NVRM'".to_owned()),
        None,
    )
    .with_remedy(
        "Once the counts agree, return the node to service",
        Some("scontrol update nodename=<node> state=resume".to_owned()),
        None,
    )
}

/// nvidia-smi's `--gpu-reset` or MIG change refused: `GPU 00000000:C1:00.0 is currently in use
/// by another process`, `MIG mode is in pending disable state ...:In use by another client`.
/// The holder is usually a resident client rather than a job.
fn gpu_held_by_client(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::Other,
        Severity::Error,
        "nvidia-smi cannot reset the GPU or change its MIG mode while a process holds it open: besides jobs, resident clients do (nvidia-persistenced, DCGM or dcgm-exporter, Fabric Manager, an X server, another nvidia-smi).",
        0.8,
        hits,
    )
    .with_remedy(
        "See which processes hold the GPU's device files",
        Some("sudo fuser -v /dev/nvidia*; nvidia-smi --query-compute-apps=pid,process_name --format=csv".to_owned()),
        None,
    )
    .with_remedy(
        "Stop the resident clients, retry, then start them again",
        Some("sudo systemctl stop nvidia-persistenced nvidia-dcgm dcgm-exporter 2>/dev/null; sudo nvidia-smi --gpu-reset -i 0".to_owned()),
        Some("on Kubernetes the GPU operator's daemonsets run these clients: drain the node first".to_owned()),
    )
}

/// `License Status : Unlicensed` in `nvidia-smi -q`: a virtual GPU runs throttled without a
/// license, then refuses CUDA.
fn vgpu_unlicensed(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::Other,
        Severity::Error,
        "The virtual GPU is unlicensed: NVIDIA's vGPU software throttles it shortly after boot and then refuses CUDA work until it gets a license.",
        0.8,
        hits,
    )
    .with_remedy(
        "Check the license state and the license server the guest uses",
        Some("nvidia-smi -q | grep -i -A2 license; cat /etc/nvidia/gridd.conf".to_owned()),
        None,
    )
    .with_remedy(
        "Restart the licensing daemon after fixing its configuration or token",
        Some("sudo systemctl restart nvidia-gridd && journalctl -u nvidia-gridd | tail".to_owned()),
        None,
    )
}

/// CUDA's 46, `all CUDA-capable devices are busy or unavailable`: the GPU is visible but takes
/// no new context. Not a visibility problem: the GPU is in a compute mode that refuses this
/// process (exclusive-process with another process on it, prohibited), MPS is in the way, the
/// GPU needs a reset (GD202 says so when the kernel log shows it), or a vGPU is unlicensed.
fn devices_unavailable(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::Other,
        Severity::Error,
        "The GPU is visible but refuses new work (CUDA's \"busy or unavailable\", 46): it is in exclusive-process mode with another process on it or in prohibited mode, an MPS server stands in the way, it needs a reset, or a virtual GPU is unlicensed.",
        0.6,
        hits,
    )
    .with_remedy(
        "Check the compute mode and which processes hold the GPU",
        Some("nvidia-smi -q -d COMPUTE; nvidia-smi --query-compute-apps=pid,name --format=csv".to_owned()),
        Some("in EXCLUSIVE_PROCESS mode one process at a time gets the GPU; an admin can set DEFAULT with `nvidia-smi -c 0`".to_owned()),
    )
    .with_remedy(
        "Check for an MPS control daemon, and for a GPU that needs a reset",
        Some("pgrep -a nvidia-cuda-mps; sudo dmesg | grep -iE 'NVRM|Xid|reset required'".to_owned()),
        None,
    )
    .with_remedy(
        "On a virtual GPU, check its license",
        Some("nvidia-smi -q | grep -i -A2 license".to_owned()),
        None,
    )
}

/// `Failed to initialize NVML: Unknown Error`: NVML found the driver but could not open the
/// device nodes. Inside a container this is the well-known loss of access after the host's
/// systemd rewrote the container's device cgroup (`systemctl daemon-reload`, cgroup v2).
fn lost_device_access(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "NVML could not open the GPU's device nodes: in a container, it has lost its access to /dev/nvidia* (the host's systemd rewrote its device cgroup); outside one, the nodes' permissions are wrong.",
        0.6,
        hits,
    )
    .with_remedy(
        "Check the device nodes and, in a container, the cgroup's device list",
        Some("ls -l /dev/nvidia*; cat /sys/fs/cgroup/devices/devices.list 2>/dev/null".to_owned()),
        Some("`c 195:* m` instead of `rw` means access was taken away".to_owned()),
    )
    .with_remedy(
        "Restart the container to get access back",
        Some("docker restart <container>  (Kubernetes: delete the pod)".to_owned()),
        None,
    )
    .with_remedy(
        "Stop it from recurring: create the /dev/char symlinks the toolkit documents, or pass the device nodes explicitly",
        Some("sudo nvidia-ctk system create-dev-char-symlinks --create-all".to_owned()),
        Some("NVIDIA container toolkit troubleshooting: \"Containers losing access to GPUs\"".to_owned()),
    )
}

/// A container that was started without the GPUs: no `--gpus`, or no NVIDIA runtime.
fn container_without_gpus(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "The container was started without the GPUs: docker was not asked for them (`--gpus`), or the NVIDIA container runtime is not installed or not registered with docker.",
        0.8,
        hits,
    )
    .with_remedy(
        "Start it with the GPUs",
        Some("docker run --gpus all ...   (compose: deploy.resources.reservations.devices with driver: nvidia)".to_owned()),
        None,
    )
    .with_remedy(
        "If docker does not know the runtime, install the NVIDIA container toolkit and register it",
        Some("sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker".to_owned()),
        Some("`docker info | grep -i runtime` should list nvidia".to_owned()),
    )
}

/// "No driver" printed inside a container (a compose service's output, a prompt whose host
/// name is a container ID): the container's view, and the messages, in log order. Only the
/// plain messages count (`Found no NVIDIA driver`, nvidia-smi's `couldn't communicate`, a stub
/// libcuda): a named situation (nouveau, the UVM module, a missing nvidia-smi) keeps GD545's
/// reading. GD545 stays silent when this answers.
pub(crate) fn no_driver_in_container<'a>(input: &'a Input<'_>) -> Option<Vec<&'a Observation>> {
    let container = input.facts.of_kind("container").next()?;
    let no_driver = env_observations(input, EnvKind::NoDriver);
    let plain = no_driver
        .iter()
        .all(|o| matches!(&o.kind, ObsKind::Env { detail: None, .. }));
    if no_driver.is_empty() || !plain {
        return None;
    }
    let mut evidence = vec![container];
    evidence.extend(no_driver);
    evidence.extend(env_observations(input, EnvKind::VisibleDevices));
    evidence.sort_by_key(|o| o.seq);
    Some(evidence)
}

/// A missing nvidia-smi where the log also shows the GPU with its driver loaded (see
/// `ObsKind::GpuPresent`), and no other "no driver" message: the machine has the driver, and
/// this environment (a container, a CI job's container) was not given its files. Both lines,
/// in log order. GD545 stays silent when this answers.
pub(crate) fn nvidia_smi_missing_beside_a_gpu<'a>(
    input: &'a Input<'_>,
) -> Option<Vec<&'a Observation>> {
    let present = input.facts.of_kind("gpu_present").next()?;
    let no_driver = env_observations(input, EnvKind::NoDriver);
    if no_driver.is_empty()
        || !no_driver
            .iter()
            .all(|o| has_detail(o, detail::NVIDIA_SMI_MISSING))
    {
        return None;
    }
    let mut evidence = vec![present];
    evidence.extend(no_driver);
    evidence.sort_by_key(|o| o.seq);
    Some(evidence)
}

fn tools_not_given(evidence: &[&Observation]) -> Finding {
    let how = evidence
        .iter()
        .find_map(|o| match &o.kind {
            ObsKind::GpuPresent { how } => Some(how.as_str()),
            _ => None,
        })
        .unwrap_or("another line");
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        format!("nvidia-smi is missing here although the log shows an NVIDIA GPU on this machine ({how}): this environment, most often a container started without the NVIDIA runtime, was not given the driver's files, and its GPU jobs will find no GPU either."),
        0.6,
        evidence,
    )
    .with_remedy(
        "Ask for the GPU when the container starts",
        Some("docker run --gpus all ...   # compose: deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]".to_owned()),
        Some("Kubernetes: runtimeClassName: nvidia (where the runtime is not the default) and resources.limits: nvidia.com/gpu: 1; a CI job's container: pass NVIDIA_VISIBLE_DEVICES through (GitHub Actions: container.options: --gpus all)".to_owned()),
    )
    .with_remedy(
        "Give it the driver's tools and compute libraries, not only the device",
        Some("NVIDIA_DRIVER_CAPABILITIES=compute,utility".to_owned()),
        Some("nvidia-smi comes with the `utility` capability; images not built from NVIDIA's CUDA images set neither variable".to_owned()),
    )
}

/// Inside a container, "no driver" means the container did not get the GPU: a container
/// sees the host's driver only through the NVIDIA container toolkit, which mounts its
/// libraries and device nodes in when the GPU is asked for.
fn container_not_given_the_gpu(evidence: &[&Observation]) -> Finding {
    let how = evidence
        .iter()
        .find_map(|o| match &o.kind {
            ObsKind::Container { how } => Some(how.as_str()),
            _ => None,
        })
        .unwrap_or("a container");
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        format!("The job ran inside a container ({how}) that was not given the GPU: a container sees the host's driver only through the NVIDIA container toolkit, so \"no driver\" inside it means docker, compose or Kubernetes did not pass the GPU in (or the toolkit is not set up on the host)."),
        0.7,
        evidence,
    )
    .with_remedy(
        "Ask for the GPU when the container starts",
        Some("docker run --gpus all ...   # compose: deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]".to_owned()),
        Some("Kubernetes: runtimeClassName: nvidia (where the runtime is not the default) and resources.limits: nvidia.com/gpu: 1".to_owned()),
    )
    .with_remedy(
        "Give it the driver's compute libraries, not only the device",
        Some("NVIDIA_DRIVER_CAPABILITIES=compute,utility".to_owned()),
        Some("images not built from NVIDIA's CUDA images lack NVIDIA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES; set both".to_owned()),
    )
    .with_remedy(
        "Check the host: its driver works and docker knows NVIDIA's runtime",
        Some("nvidia-smi && docker info | grep -i runtime   # none: sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker".to_owned()),
        None,
    )
}

/// The container toolkit set to CDI mode hands GPUs out only through its own runtime: the
/// hook that docker's `--gpus` calls refuses to run.
fn cdi_mode_hook(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "The container did not get its GPUs: the NVIDIA container toolkit is in CDI mode, where docker's `--gpus` hook is refused and GPUs come only through the NVIDIA runtime (`--runtime=nvidia`) or CDI device names.",
        0.85,
        hits,
    )
    .with_remedy(
        "Ask for the GPUs through the NVIDIA runtime, or by their CDI names",
        Some("docker run --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all ...   # or: docker run --device nvidia.com/gpu=all ...".to_owned()),
        None,
    )
    .with_remedy(
        "Or set the toolkit back to its default mode, where --gpus works",
        Some("sudo nvidia-ctk config --in-place --set nvidia-container-runtime.mode=auto && sudo systemctl restart docker".to_owned()),
        Some("/etc/nvidia-container-runtime/config.toml holds the mode".to_owned()),
    )
}

/// Slurm refused the job's generic-resource request: it names a resource (or a GPU type) the
/// cluster does not define, or the cluster defines no GPUs at all.
/// NVENC would not open an encode session. `out of memory (10)` is the driver's cap on
/// concurrent sessions on GeForce cards far more often than memory; `unsupported device (2)`
/// and "no NVENC capable devices" mean the GPU has no encoder (mining cards, the GT 1030, the
/// A100 and H100) or is not the one selected.
fn nvenc_session(hits: &[&Observation]) -> Finding {
    let session_cap = hits.iter().any(|o| o.text.contains("out of memory"));
    let message = if session_cap {
        "NVENC refused a new encode session (\"out of memory\"): on GeForce and most workstation cards the driver caps concurrent encode sessions (5 to 12, by driver), and that cap, not the GPU's memory, is what was reached."
    } else {
        "NVENC could not open an encode session on this GPU: it has no hardware encoder (mining cards such as the P106, the GT 1030, the A100 and H100), or the encoder used is not on the GPU selected."
    };
    finding_from("GD546", Cause::Other, Severity::Error, message, 0.75, hits)
        .with_remedy(
            "See which encode sessions are open, and whether this GPU has an encoder",
            Some("nvidia-smi --query-gpu=name,encoder.stats.sessionCount --format=csv; nvidia-smi -q | grep -A3 -i encoder".to_owned()),
            Some("NVIDIA's Video Encode and Decode support matrix lists each GPU's NVENC and its session limit".to_owned()),
        )
        .with_remedy(
            "Run fewer encodes at once, or encode on a GPU with NVENC (or on the CPU: -c:v libx264)",
            None,
            None,
        )
}

fn gres_spec_invalid(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "Slurm refused the job's GPU request: the `--gres`/`--gpus` option names a resource or GPU type this cluster (or partition) does not define, so no GPU can be allocated as asked.",
        0.75,
        hits,
    )
    .with_remedy(
        "See the generic resources the nodes offer, and ask for one of them",
        Some("sinfo -o \"%P %N %G\"   # then e.g. --gres=gpu:a100:1 or --gpus=1".to_owned()),
        Some("a GPU type must be spelled as in gres.conf; a partition without GPUs offers none".to_owned()),
    )
    .with_remedy(
        "On a cluster you run: declare the GPUs to Slurm",
        Some("GresTypes=gpu and Gres=gpu:N on the node in slurm.conf, with a gres.conf (or AutoDetect=nvml) on the node".to_owned()),
        None,
    )
}

/// The NVIDIA container runtime reads the GPU list from volume mounts (the device plugin's
/// `volume-mounts` strategy) and refuses `NVIDIA_VISIBLE_DEVICES` from an unprivileged
/// container: an image that sets it (NGC's do) cannot start.
fn envvar_refused(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "The NVIDIA container runtime refused NVIDIA_VISIBLE_DEVICES from this unprivileged container: it is set to take the GPU list from volume mounts only, and the image (NGC images do) sets the variable.",
        0.85,
        hits,
    )
    .with_remedy(
        "Unset or override the variable in the pod spec so the device plugin's list is used",
        Some("env: [{name: NVIDIA_VISIBLE_DEVICES, value: \"\"}]  # or remove it from the image".to_owned()),
        None,
    )
    .with_remedy(
        "Or let the runtime accept the variable from unprivileged containers",
        Some("accept-nvidia-visible-devices-envvar-when-unprivileged = true  # /etc/nvidia-container-runtime/config.toml".to_owned()),
        Some("this lets any pod ask for any GPU: keep it off on shared clusters".to_owned()),
    )
}

/// TensorFlow: `Visible devices cannot be modified after being initialized`.
fn visible_after_init(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "TensorFlow's visible GPUs were set after TensorFlow had initialized them: something (an op, a model, another library's TensorFlow context) touched the GPUs before `tf.config.set_visible_devices` ran.",
        0.85,
        hits,
    )
    .with_remedy(
        "Choose the GPUs before anything touches them: first thing after importing TensorFlow, or with CUDA_VISIBLE_DEVICES before the process starts",
        Some("CUDA_VISIBLE_DEVICES=1 python train.py".to_owned()),
        Some("in a notebook, restart the kernel: the GPUs stay initialized for the process's life".to_owned()),
    )
    .with_remedy(
        "Or check first and skip the call when the devices are already set",
        Some("if not tf.config.list_logical_devices('GPU'): tf.config.set_visible_devices(gpus[1], 'GPU')".to_owned()),
        None,
    )
}

/// DeepSpeed's launcher: `No slot '2' specified on host 'localhost'`.
fn launcher_slot(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "The launcher was asked for a GPU id its host's slot list lacks: with CUDA_VISIBLE_DEVICES set, DeepSpeed numbers only the visible GPUs (0, 1, ...), so the original ids in --include or the hostfile do not match.",
        0.75,
        hits,
    )
    .with_remedy(
        "Pick the GPUs with the launcher, not with CUDA_VISIBLE_DEVICES",
        Some("unset CUDA_VISIBLE_DEVICES; deepspeed --include localhost:0,2 train.py".to_owned()),
        None,
    )
    .with_remedy(
        "Or keep CUDA_VISIBLE_DEVICES and give the launcher the renumbered ids (or only --num_gpus)",
        Some("CUDA_VISIBLE_DEVICES=0,2 deepspeed --num_gpus 2 train.py".to_owned()),
        None,
    )
}

/// nvidia-smi's `No devices were found`, Slurm's `gres/gpu count reported lower than
/// configured (0 < 8)`: the driver answers but lists no GPU.
fn none_enumerated(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "The driver answers but lists no GPU: the GPUs' device nodes are not reachable from here (a container or cgroup without them, a Slurm node whose slurmd cannot open them), or no GPU is bound to the NVIDIA driver.",
        0.6,
        hits,
    )
    .with_remedy(
        "See whether the GPUs and their device nodes are there, and which driver holds them",
        Some("ls -l /dev/nvidia*; lspci -nnk -d 10de: | grep -A2 -i nvidia".to_owned()),
        Some("`Kernel driver in use: vfio-pci` or `nouveau` means the NVIDIA driver does not own the GPU".to_owned()),
    )
    .with_remedy(
        "In a container, pass the GPUs; under Slurm, check that slurmd sees them and resume the node",
        Some("docker run --gpus all ...   |   slurmd -C; sudo systemctl restart slurmd; scontrol update nodename=<node> state=resume".to_owned()),
        None,
    )
    .with_remedy(
        "If a GPU was there before, look for it falling off the bus",
        Some("sudo dmesg -T | grep -i -E 'NVRM|Xid'".to_owned()),
        None,
    )
}

/// NCCL's `Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000`: the ranks
/// did not each select their own GPU.
fn duplicate_gpu(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "Two ranks of the job run on the same GPU (NCCL: Duplicate GPU detected): each rank must select its own device, and a device hard-coded in the script or a CUDA_VISIBLE_DEVICES that shows each rank one GPU puts them together.",
        0.85,
        hits,
    )
    .with_remedy(
        "Select the device from the rank's local index before creating the process group",
        Some("torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))".to_owned()),
        Some("remove any hard-coded cuda:N or CUDA_VISIBLE_DEVICES set inside the script".to_owned()),
    )
    .with_remedy(
        "Check what each rank sees",
        Some("python -c \"import os, torch; print(os.environ.get('LOCAL_RANK'), os.environ.get('CUDA_VISIBLE_DEVICES'), torch.cuda.device_count())\"".to_owned()),
        None,
    )
}

/// JAX's `no supported devices found for platform CUDA`: its CUDA backend did not start. It
/// says so after any failure (an OOM while starting, an old driver), so it is a warning that
/// ranks below the reason printed before it.
fn jax_found_none(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Warn,
        "JAX found no GPU it could use: none is visible to the process (CUDA_VISIBLE_DEVICES, a scheduler that gives each task one GPU while JAX expects to see the node's), or the CUDA backend failed to start for a reason printed before this line.",
        0.5,
        hits,
    )
    .with_remedy(
        "See what the process can see",
        Some("echo \"$CUDA_VISIBLE_DEVICES\"; nvidia-smi -L; python -c \"import jax; print(jax.devices())\"".to_owned()),
        None,
    )
    .with_remedy(
        "Under Slurm, let every task see the node's GPUs (JAX's cluster detection expects it)",
        Some("srun --gpus-per-node=N ...   (not --gpus-per-task=1)".to_owned()),
        None,
    )
}

/// podman's `unresolvable CDI devices nvidia.com/gpu=all`: no (or a stale) CDI specification
/// describes the GPUs.
fn cdi_unresolved(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD546",
        Cause::EnvVisibleDevices,
        Severity::Error,
        "The container runtime could not resolve the GPUs it was asked for (CDI): the NVIDIA CDI specification is missing, stale after a driver update, or not where this runtime looks.",
        0.8,
        hits,
    )
    .with_remedy(
        "Generate the CDI specification and list what it names",
        Some("sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml && nvidia-ctk cdi list".to_owned()),
        Some("regenerate it after every driver update (the toolkit's nvidia-cdi-refresh service does so)".to_owned()),
    )
    .with_remedy(
        "With podman, use 4.1 or newer: older versions know no CDI names and take nvidia.com/gpu=0 for a file path",
        Some("podman --version".to_owned()),
        None,
    )
}
