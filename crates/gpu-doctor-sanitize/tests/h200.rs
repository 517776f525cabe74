//! Real compute-sanitizer 2025.3.1 logs (CUDA 13.0, driver 580, NVIDIA H200) of the planted
//! bugs in `validation/sanitize/`: each must condense to exactly the right single defect.

use gpu_doctor_model::Finding;
use gpu_doctor_sanitize::condense_log_named;
use std::path::PathBuf;

fn condense(name: &str) -> Vec<Finding> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/sanitize/h200")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    condense_log_named(&bytes, name).expect("a sanitizer log")
}

/// The findings that are about the job's own code (not the follow-on API errors, which
/// are warnings, nor the info notes).
fn defects(findings: &[Finding]) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|f| f.severity == gpu_doctor_model::Severity::Error)
        .collect()
}

fn reports(f: &Finding) -> f64 {
    f.evidence[0].values["reports"]
}

#[test]
fn out_of_bounds_global_write() {
    let findings = condense("oob_write.log");
    let d = defects(&findings);
    assert_eq!(d.len(), 1, "{findings:#?}");
    assert_eq!(d[0].code.0, "GD601");
    assert_eq!(
        d[0].message,
        "Out-of-bounds __global__ write of 4 bytes in `scale` at oob_write.cu:10 (24 reports: threads 232..255, block 3), launched from `main`"
    );
    assert!(
        d[0].remedies[0]
            .action
            .contains("elements 1000..1023 of a 1000-element buffer")
    );
    insta::assert_json_snapshot!(findings);
}

#[test]
fn shared_memory_race() {
    let findings = condense("race_shared.log");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code.0, "GD604");
    assert!(
        findings[0]
            .message
            .contains("on the write at race_shared.cu:9 by several threads (510 hazards)"),
        "{}",
        findings[0].message
    );
    insta::assert_json_snapshot!(findings);
}

#[test]
fn missing_syncthreads_analysis_report() {
    let findings = condense("missing_sync.log");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(
        findings[0].remedies[0].action,
        "Add `__syncthreads()` between the write at missing_sync.cu:11 and the read at missing_sync.cu:13"
    );
    insta::assert_json_snapshot!(findings);
}

#[test]
fn missing_syncthreads_hazard_report() {
    // The first 200 lines of the 4096-hazard `--racecheck-report hazard` log.
    let findings = condense("missing_sync-hazard.head.log");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code.0, "GD604");
    // The host stub named like the kernel is not the user's frame; `main` is.
    assert!(
        findings[0].message.ends_with("launched from `main`"),
        "{}",
        findings[0].message
    );
}

#[test]
fn uninitialised_global_read() {
    let findings = condense("uninit_read.log");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].code.0, "GD605");
    assert!((reports(&findings[0]) - 256.0).abs() < 0.5);
    insta::assert_json_snapshot!(findings);
}

#[test]
fn divergent_barrier() {
    let findings = condense("divergent_barrier.log");
    let d = defects(&findings);
    assert_eq!(d.len(), 1, "{findings:#?}");
    assert_eq!(d[0].code.0, "GD606");
    insta::assert_json_snapshot!(findings);
}

#[test]
fn out_of_range_index_in_a_triton_kernel() {
    let findings = condense("triton_oob.log");
    let d = defects(&findings);
    assert_eq!(d.len(), 1, "{findings:#?}");
    assert_eq!(d[0].code.0, "GD601");
    assert!(
        d[0].message.starts_with(
            "Out-of-bounds __global__ read of 4 bytes in `gather_kernel` at triton_oob.py:19"
        ),
        "{}",
        d[0].message
    );
    // The Python frame that launched it, past the interpreter and Triton's own frames.
    assert!(
        d[0].message
            .ends_with("launched from `main` (triton_oob.py:28)"),
        "{}",
        d[0].message
    );
    insta::assert_json_snapshot!(findings);
}

#[test]
fn leak() {
    let findings = condense("leak.log");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(
        findings[0].message,
        "4096 bytes of device memory never freed (1 allocation, allocated in `main`)"
    );
}

#[test]
fn api_error() {
    let findings = condense("api_error.log");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(
        findings[0].message,
        "`cudaMemcpy` from `main` failed with cudaErrorInvalidValue (error 1): invalid argument"
    );
}

#[test]
fn default_print_limit_is_reported() {
    let findings = condense("many_reports-print-limit-100.log");
    let codes: Vec<&str> = findings.iter().map(|f| f.code.0.as_str()).collect();
    // The API errors that followed were past the limit too.
    assert_eq!(codes, ["GD601", "GD610"], "{findings:#?}");
    assert!((reports(&findings[0]) - 100.0).abs() < 0.5);
    assert!(
        findings[1]
            .message
            .contains("counted 16386 errors but printed 100"),
        "{}",
        findings[1].message
    );
}
