//! `gpu-doctor env diff`: two exports from fake machines (the same cu121 torch on driver 580
//! and on driver 470); the diff must name the driver as what explains "works there, not here".

#[path = "check_support.rs"]
mod support;

use serde_json::Value;
use std::path::Path;
use support::*;

fn export(
    dir: &Path,
    name: &str,
    proc_version: &'static str,
    lib: &'static str,
) -> std::path::PathBuf {
    let root = dir.join(name);
    let ld = build(
        &root,
        &Machine {
            proc_version: Some(proc_version),
            lib_version: Some(lib),
            pci_gpu: true,
            ..Machine::default()
        },
    );
    let ld_file = dir.join(format!("{name}-ld.txt"));
    std::fs::write(&ld_file, ld).unwrap();
    let venv = venv(&dir.join(name), Some("torch-2.3.0-cu121"));
    let path = format!("{}/bin:/usr/bin:/bin", venv.display());
    let file = dir.join(format!("{name}.json"));
    let out = gpu_doctor(
        &[
            "check",
            "--root",
            root.to_str().unwrap(),
            "--ldconfig-file",
            ld_file.to_str().unwrap(),
            "--export",
            file.to_str().unwrap(),
        ],
        &[("PATH", path)],
    );
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    file
}

#[test]
fn the_driver_explains_works_there_not_here() {
    let dir = tempfile::tempdir().unwrap();
    let good = export(dir.path(), "good", "proc-version-580.txt", "580.159.04");
    let bad = export(dir.path(), "bad", "proc-version-470.txt", "470.182.03");
    let out = gpu_doctor(
        &["env", "diff", good.to_str().unwrap(), bad.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = scrub(&stdout(&out), dir.path());
    assert!(text.contains("torch.driver  A pass → B fail"), "{text}");
    insta::with_settings!({filters => FILTERS.to_vec()}, {
        insta::assert_snapshot!("diff_text", text);
    });
    let json = gpu_doctor(
        &[
            "env",
            "diff",
            "--json",
            good.to_str().unwrap(),
            bad.to_str().unwrap(),
        ],
        &[],
    );
    let v: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["differences"][0]["path"], "driver.kernel_module.version");
    // The same export against itself: nothing differs, exit 0.
    let same = gpu_doctor(
        &[
            "env",
            "diff",
            good.to_str().unwrap(),
            good.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(same.status.code(), Some(0));
    assert!(stdout(&same).contains("no differences"));
}

#[test]
fn a_file_that_is_not_an_export_is_a_tool_error_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let out = gpu_doctor(
        &[
            "env",
            "diff",
            junk.to_str().unwrap(),
            junk.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("schema_version") && err.contains("hint: re-create it"),
        "{err}"
    );
}
