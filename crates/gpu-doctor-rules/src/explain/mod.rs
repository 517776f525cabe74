//! The rules over what a job printed and what the kernel logged: facts from
//! `gpu-doctor-scan` in, findings out, the root cause first.
//!
//! Each rule lives in its own file with its documentation (`DOC`) and a pure `check`
//! function. [`diagnose`] runs them all, then orders the findings: the finding whose cause
//! explains the others comes first (a missing driver explains every CUDA error; a device-side
//! assert explains the cuBLAS failure that followed it), and findings that are knock-on
//! effects of the first are demoted to `info` and say so.

mod gd200_xid_hardware;
mod gd201_xid_application;
mod gd202_gpu_lost;
mod gd203_ecc_uncorrectable;
mod gd204_pcie_aer;
mod gd205_thermal_power;
mod gd206_ecc_corrected;
mod gd207_iommu_fault;
mod gd208_gpu_init_failed;
mod gd209_host_ecc;
mod gd210_driver_crash;
mod gd500_oom_capacity;
mod gd501_oom_fragmentation;
mod gd502_oom_other_process;
mod gd503_oom_leak;
mod gd504_oom_request_exceeds_gpu;
mod gd505_oom_warning_only;
mod gd506_host_memory;
mod gd510_illegal_access;
mod gd511_device_assert;
mod gd520_cublas_error;
mod gd522_cudnn_error;
mod gd530_nccl_error;
mod gd531_nccl_timeout;
mod gd540_driver_too_old;
mod gd541_torch_cpu_build;
mod gd542_arch_unsupported;
mod gd543_lib_missing;
mod gd544_nvml_mismatch;
mod gd545_no_driver;
mod gd546_visible_devices;
mod gd547_cuda_error;
mod gd548_driver_install;
mod gd549_tf_placement;
mod gd570_memory_growth;
mod gd571_sanitizer_report;
mod gd579_unrecognised_failure;
pub mod oom;
pub mod xid;

use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Evidence, Finding, Sample, Severity};
use gpu_doctor_scan::units::format_bytes;
use gpu_doctor_scan::{LogFacts, Observation};

/// The documentation of every rule in this module, for the registry.
pub static RULES: &[&RuleDoc] = &[
    &gd200_xid_hardware::DOC,
    &gd201_xid_application::DOC,
    &gd202_gpu_lost::DOC,
    &gd203_ecc_uncorrectable::DOC,
    &gd204_pcie_aer::DOC,
    &gd205_thermal_power::DOC,
    &gd206_ecc_corrected::DOC,
    &gd207_iommu_fault::DOC,
    &gd208_gpu_init_failed::DOC,
    &gd209_host_ecc::DOC,
    &gd210_driver_crash::DOC,
    &gd500_oom_capacity::DOC,
    &gd501_oom_fragmentation::DOC,
    &gd502_oom_other_process::DOC,
    &gd503_oom_leak::DOC,
    &gd504_oom_request_exceeds_gpu::DOC,
    &gd505_oom_warning_only::DOC,
    &gd506_host_memory::DOC,
    &gd510_illegal_access::DOC,
    &gd511_device_assert::DOC,
    &gd520_cublas_error::DOC,
    &gd522_cudnn_error::DOC,
    &gd530_nccl_error::DOC,
    &gd531_nccl_timeout::DOC,
    &gd540_driver_too_old::DOC,
    &gd541_torch_cpu_build::DOC,
    &gd542_arch_unsupported::DOC,
    &gd543_lib_missing::DOC,
    &gd544_nvml_mismatch::DOC,
    &gd545_no_driver::DOC,
    &gd546_visible_devices::DOC,
    &gd547_cuda_error::DOC,
    &gd548_driver_install::DOC,
    &gd549_tf_placement::DOC,
    &gd570_memory_growth::DOC,
    &gd571_sanitizer_report::DOC,
    &gd579_unrecognised_failure::DOC,
];

/// What every rule gets: the scanned facts, what the GPUs show now (with `--live`), and
/// the analysis of the out-of-memory messages, done once.
pub struct Input<'a> {
    pub facts: &'a LogFacts,
    pub live: Option<&'a Sample>,
    pub oom: Option<oom::OomAnalysis>,
}

/// A finding and where its evidence first appeared, for ordering.
pub(crate) struct Hit {
    pub finding: Finding,
    /// The scanner's sequence number of the first observation the finding rests on.
    pub seq: u64,
}

type Rule = fn(&Input<'_>) -> Vec<Hit>;

const CHECKS: &[Rule] = &[
    gd200_xid_hardware::check,
    gd201_xid_application::check,
    gd202_gpu_lost::check,
    gd203_ecc_uncorrectable::check,
    gd204_pcie_aer::check,
    gd205_thermal_power::check,
    gd206_ecc_corrected::check,
    gd207_iommu_fault::check,
    gd208_gpu_init_failed::check,
    gd209_host_ecc::check,
    gd210_driver_crash::check,
    gd500_oom_capacity::check,
    gd501_oom_fragmentation::check,
    gd502_oom_other_process::check,
    gd503_oom_leak::check,
    gd504_oom_request_exceeds_gpu::check,
    gd505_oom_warning_only::check,
    gd506_host_memory::check,
    gd510_illegal_access::check,
    gd511_device_assert::check,
    gd520_cublas_error::check,
    gd522_cudnn_error::check,
    gd530_nccl_error::check,
    gd531_nccl_timeout::check,
    gd540_driver_too_old::check,
    gd541_torch_cpu_build::check,
    gd542_arch_unsupported::check,
    gd543_lib_missing::check,
    gd544_nvml_mismatch::check,
    gd545_no_driver::check,
    gd546_visible_devices::check,
    gd547_cuda_error::check,
    gd548_driver_install::check,
    gd549_tf_placement::check,
    gd570_memory_growth::check,
    gd571_sanitizer_report::check,
];

/// Runs every rule over the facts (and the live sample, when given) and returns the
/// findings with the primary root cause first. Findings that are knock-on effects of the
/// primary one follow it, demoted to `info`.
pub fn diagnose(facts: &LogFacts, live: Option<&Sample>) -> Vec<Finding> {
    let input = Input {
        facts,
        live,
        oom: oom::analyse(facts, live),
    };
    let mut hits: Vec<Hit> = CHECKS.iter().flat_map(|check| check(&input)).collect();
    // A failure line speaks only when no rule found an error: then it is the failure.
    let unrecognised = hits
        .iter()
        .all(|h| h.finding.severity < Severity::Error)
        .then(|| gd579_unrecognised_failure::check(facts))
        .flatten();
    order(&mut hits);
    if let Some(hit) = unrecognised {
        // After the last warning (an environment warning often explains a later failure), before
        // what is only information.
        let at = hits
            .iter()
            .rposition(|h| h.finding.severity >= Severity::Warn)
            .map_or(0, |last| last + 1);
        hits.insert(at, hit);
    }
    hits.into_iter().map(|h| h.finding).collect()
}

/// Scans `bytes` (one input, named `input`) and diagnoses it, without live GPU facts.
pub fn explain_text(bytes: &[u8]) -> Vec<Finding> {
    let facts = gpu_doctor_scan::scan_bytes("input", bytes);
    diagnose(&facts, None)
}

/// Whether a cause leaves the process unable to go on: the CUDA context is corrupted
/// (device assert, illegal access: CUDA errors 700, 710, 714–719), the GPU itself failed, or
/// NCCL's communicator is broken. Such a job must be restarted as a new process; retrying in
/// the same process only repeats the error. Out-of-memory and environment causes are not
/// sticky (an OOM can be caught and retried in-process; an environment problem needs a fix,
/// not a restart).
pub fn is_sticky(cause: Cause) -> bool {
    matches!(
        cause,
        Cause::DeviceAssert | Cause::IllegalAccess | Cause::HwXid | Cause::NcclError
    )
}

/// Whether the finding's cause is sticky (see [`is_sticky`]).
pub fn finding_is_sticky(finding: &Finding) -> bool {
    is_sticky(finding.cause)
}

/// How strongly a cause explains the others: higher first.
fn root_rank(f: &Finding) -> u8 {
    match f.cause {
        // A GPU the driver could not bring up: a failing card, or a driver that cannot drive it
        // (missing, mismatched, the open module on an old GPU), which then says so and ranks
        // first.
        Cause::HwXid if f.code.0 == gd208_gpu_init_failed::DOC.code => 91,
        Cause::HwXid if f.severity == Severity::Error => 95,
        // A crash inside the driver's module breaks every GPU call after it.
        Cause::Other if f.code.0 == gd210_driver_crash::DOC.code => 94,
        // An environment warning (JAX's "no supported devices", XLA's slower compilation,
        // TensorRT not found) follows the failure that caused it, or matters less than any.
        c if c.is_environment() && f.severity < Severity::Error => 5,
        // A missing libcuda is why the runtime then calls the driver "insufficient".
        Cause::EnvLibMissing if f.message.starts_with(gd543_lib_missing::DRIVER_LIBRARY) => 93,
        Cause::EnvLibMissing => 65,
        // "PyTorch sees no GPU" with no reason is the symptom of any other environment finding.
        Cause::EnvTorchCpuBuild
            if gd541_torch_cpu_build::SEES_NO_GPU
                .iter()
                .any(|s| f.message.starts_with(s)) =>
        {
            64
        }
        // A driver that is missing or does not match its libraries explains the "no device"
        // errors that come with it.
        Cause::EnvNvmlMismatch | Cause::EnvNoDriver => 92,
        Cause::EnvVisibleDevices => 88,
        // GD546's situations of cause `other` (a GPU that refuses work, an unlicensed vGPU, a
        // node short of GPUs) are why the CUDA calls after them fail.
        Cause::Other if f.code.0 == gd546_visible_devices::DOC.code => 88,
        c if c.is_environment() => 90,
        Cause::DeviceAssert => 80,
        c if c.is_oom() && f.severity >= Severity::Warn => 70,
        // The host ran out of memory (GD506) or its RAM failed (GD209): it killed the job or
        // the node, and the peers that then time out are its knock-on.
        Cause::Other
            if f.code.0 == gd506_host_memory::DOC.code
                || (f.code.0 == gd209_host_ecc::DOC.code && f.severity == Severity::Error) =>
        {
            68
        }
        Cause::IllegalAccess => 60,
        Cause::HwThermalPower | Cause::HwXid => 50,
        Cause::CudnnError | Cause::CublasError => 40,
        Cause::NcclError => 30,
        c if c.is_oom() => 20,
        _ => 10,
    }
}

/// Whether a finding with cause `later` is most likely a consequence of `root`.
fn knock_on(later: Cause, root: Cause) -> bool {
    if later == root {
        return false;
    }
    match root {
        // A corrupted context makes every later CUDA call fail.
        Cause::DeviceAssert | Cause::IllegalAccess | Cause::HwXid => !later.is_environment(),
        // A broken installation explains any CUDA failure after it.
        c if c.is_environment() => !later.is_environment() || later == Cause::EnvLibMissing,
        // After an OOM, library calls that could not get memory and peers waiting in
        // collectives fail too.
        c if c.is_oom() => matches!(
            later,
            Cause::CublasError | Cause::CudnnError | Cause::NcclError | Cause::Other
        ),
        // A rank that died leaves the others timing out.
        _ => later == Cause::NcclError || later == Cause::Other,
    }
}

fn order(hits: &mut [Hit]) {
    // What is only information (a harmless allocator note, corrected ECC errors) never goes
    // before a problem.
    hits.sort_by(|a, b| {
        (b.finding.severity > Severity::Info)
            .cmp(&(a.finding.severity > Severity::Info))
            .then(root_rank(&b.finding).cmp(&root_rank(&a.finding)))
            .then(a.seq.cmp(&b.seq))
    });
    let Some((first, rest)) = hits.split_first_mut() else {
        return;
    };
    let root = first.finding.cause;
    for hit in rest {
        if hit.finding.severity > Severity::Info && knock_on(hit.finding.cause, root) {
            hit.finding.severity = Severity::Info;
            hit.finding.confidence = (hit.finding.confidence * 0.5).max(0.05);
            hit.finding.message = format!(
                "Likely a knock-on of the {} above: {}",
                root.as_str(),
                hit.finding.message
            );
        }
    }
}

/// Evidence from one observation.
pub(crate) fn evidence(obs: &Observation) -> Evidence {
    Evidence {
        source: obs.source.clone(),
        line: Some(obs.line),
        text: obs.text.clone(),
        values: std::collections::BTreeMap::new(),
    }
}

/// Evidence from one observation with named numbers attached.
pub(crate) fn evidence_with(obs: &Observation, values: &[(&str, Option<u64>)]) -> Evidence {
    let mut e = evidence(obs);
    for (name, value) in values {
        if let Some(v) = value {
            e.values.insert((*name).to_owned(), *v as f64);
        }
    }
    e
}

/// Evidence for a finding that rests on many similar lines: the first, and the last when it
/// differs, plus a count.
pub(crate) fn first_and_last(observations: &[&Observation]) -> Vec<Evidence> {
    let mut out = Vec::new();
    if let Some(first) = observations.first() {
        out.push(evidence(first));
    }
    if observations.len() > 1
        && let Some(last) = observations.last()
        && last.text != observations[0].text
    {
        out.push(evidence(last));
    }
    out
}

/// A finding whose evidence is the first and last of `observations` (see [`first_and_last`]).
pub(crate) fn finding_from(
    code: &str,
    cause: Cause,
    severity: Severity,
    message: impl Into<String>,
    confidence: f32,
    observations: &[&Observation],
) -> Finding {
    let mut f = Finding::new(code, cause, severity, message).confidence(confidence);
    for e in first_and_last(observations) {
        f = f.with_evidence(e);
    }
    f
}

/// `12.00 GiB`.
pub(crate) fn size(bytes: u64) -> String {
    format_bytes(bytes)
}

/// The ranks an error appeared on, as a phrase: ` on rank 3` / ` on ranks 0, 3`.
pub(crate) fn ranks_phrase(observations: &[&Observation]) -> String {
    let mut ranks: Vec<u32> = observations.iter().filter_map(|o| o.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    match ranks.len() {
        0 => String::new(),
        1 => format!(" on rank {}", ranks[0]),
        _ => format!(
            " on ranks {}",
            ranks
                .iter()
                .take(8)
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests;

/// The environment observations of one kind.
/// The observations whose kind matches `is_kind`, in input order.
pub(crate) fn observations_where<'a>(
    input: &'a Input<'_>,
    is_kind: impl Fn(&gpu_doctor_scan::ObsKind) -> bool,
) -> Vec<&'a Observation> {
    input
        .facts
        .observations
        .iter()
        .filter(|o| is_kind(&o.kind))
        .collect()
}

pub(crate) fn env_observations<'a>(
    input: &'a Input<'_>,
    kind: gpu_doctor_scan::EnvKind,
) -> Vec<&'a Observation> {
    input
        .facts
        .observations
        .iter()
        .filter(|o| matches!(&o.kind, gpu_doctor_scan::ObsKind::Env { env, .. } if *env == kind))
        .collect()
}

/// The first detail an environment observation carries (a version, `sm_80`, a library).
pub(crate) fn env_detail(observations: &[&Observation]) -> Option<String> {
    observations.iter().find_map(|o| match &o.kind {
        gpu_doctor_scan::ObsKind::Env { detail, .. } => detail.clone(),
        _ => None,
    })
}

/// Whether an environment observation carries exactly this detail.
pub(crate) fn has_detail(o: &Observation, d: &str) -> bool {
    matches!(&o.kind, gpu_doctor_scan::ObsKind::Env { detail: Some(x), .. } if x == d)
}

/// The Xid observations whose catalog class passes `keep` (unknown Xids have no class).
pub(crate) fn xid_observations<'a>(
    input: &'a Input<'_>,
    keep: impl Fn(Option<xid::XidClass>, u32) -> bool,
) -> Vec<(&'a Observation, u32)> {
    input
        .facts
        .observations
        .iter()
        .filter_map(|o| match &o.kind {
            gpu_doctor_scan::ObsKind::Xid { xid: n, .. } => {
                keep(xid::lookup(*n).map(|e| e.class), *n).then_some((o, *n))
            }
            _ => None,
        })
        .collect()
}

/// "Xid 79 (GPU has fallen off the bus) at PCI 0000:05:00".
pub(crate) fn xid_phrase(obs: &Observation, n: u32) -> String {
    let what = xid::lookup(n).map_or_else(
        || "not in the catalog".to_owned(),
        |e| e.description.clone(),
    );
    let at = at_pci(&[obs]);
    format!("Xid {n} ({what}){at}")
}

/// " at PCI 0000:05:00" for the first of these observations that names its device, else "".
pub(crate) fn at_pci(observations: &[&Observation]) -> String {
    observations
        .iter()
        .find_map(|o| o.kind.pci())
        .map(|p| format!(" at PCI {p}"))
        .unwrap_or_default()
}
