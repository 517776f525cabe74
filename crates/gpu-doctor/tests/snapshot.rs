//! `gpu-doctor snapshot` end to end: the built binary on real H200 snapshots, the schema
//! variants, hostile files, `diff` and `--html`. Output is compared with insta snapshots.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the binary from the repo root (so paths in the output are the relative ones given).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("runs the binary");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn human_summary_of_real_snapshots() {
    for (name, file, code) in [
        ("frag", "testdata/h200/frag.pickle", 1),
        ("frag_oom_real", "testdata/h200/frag-oom-real.pickle", 1),
        ("leak", "testdata/h200/leak.pickle", 1),
        (
            "gpt2_stacks_all",
            "testdata/h200/gpt2-train-stacks-all.pickle",
            0,
        ),
    ] {
        let (status, stdout, stderr) = run(&["snapshot", "--top", "5", file]);
        assert_eq!(status, code, "{file}: {stderr}");
        assert!(stderr.is_empty(), "{file}: {stderr}");
        insta::assert_snapshot!(format!("human_{name}"), stdout);
    }
}

#[test]
fn json_of_real_snapshots() {
    for (name, file) in [
        ("frag", "testdata/h200/frag.pickle"),
        ("frag_oom_real", "testdata/h200/frag-oom-real.pickle"),
        ("leak", "testdata/h200/leak.pickle"),
        (
            "gpt2_stacks_all",
            "testdata/h200/gpt2-train-stacks-all.pickle",
        ),
    ] {
        let (_, stdout, stderr) = run(&["snapshot", "--json", "--top", "3", file]);
        let v: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{file}: {e}: {stderr}"));
        assert_eq!(v["schema_version"], gpu_doctor_model_schema());
        for key in [
            "allocated_bytes",
            "reserved_bytes",
            "largest_free_block_bytes",
            "oom",
            "top_sites",
            "leak_candidates",
            "findings",
        ] {
            assert!(v.get(key).is_some(), "{file}: no {key}");
        }
        insta::assert_json_snapshot!(format!("json_{name}"), v);
    }
}

fn gpu_doctor_model_schema() -> serde_json::Value {
    serde_json::json!(1)
}

#[test]
fn oom_causes_follow_the_numbers() {
    let cause = |file: &str| {
        let (_, stdout, _) = run(&["snapshot", "--json", file]);
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        v["findings"][0]["cause"]
            .as_str()
            .unwrap_or("none")
            .to_owned()
    };
    // 12 GiB asked, 53 GiB reserved but unallocated, largest free block 424 MiB.
    assert_eq!(
        cause("testdata/h200/frag-oom-real.pickle"),
        "oom_fragmentation"
    );
    // 80 GiB asked, 72 GiB free on the device plus 2.5 GiB cached.
    assert_eq!(cause("testdata/h200/frag.pickle"), "oom_capacity");
    assert_eq!(cause("testdata/h200/leak.pickle"), "oom_leak");
    assert_eq!(cause("testdata/h200/gpt2-train-stacks-all.pickle"), "none");
}

#[test]
fn schema_variants_through_the_binary() {
    for (file, code) in [
        ("testdata/snapshots/frag-oom-real.p2.pickle", 1),
        ("testdata/snapshots/frag-oom-real.p5.pickle", 1),
        ("testdata/snapshots/legacy-2.0.pickle", 1),
        // Eight 1 GiB segments with 424 MiB stranded in each: GD555.
        ("testdata/snapshots/bare-segments.pickle", 1),
        ("testdata/snapshots/expandable.pickle", 0),
    ] {
        let (status, _, stderr) = run(&["snapshot", file]);
        assert_eq!(status, code, "{file}: {stderr}");
    }
    let (_, stdout, _) = run(&["snapshot", "testdata/snapshots/expandable.pickle"]);
    insta::assert_snapshot!("human_expandable", stdout);
}

#[test]
fn hostile_files_exit_2_with_a_clear_error() {
    let mut all = String::new();
    for file in [
        "testdata/snapshots/evil-global-os-system.pickle",
        "testdata/snapshots/evil-stack-global.pickle",
        "testdata/snapshots/evil-deep-nesting.pickle",
        "testdata/snapshots/evil-huge-unicode8.pickle",
        "testdata/snapshots/evil-huge-bytes8.pickle",
        "testdata/snapshots/evil-truncated.pickle",
        "testdata/snapshots/protocol0.pickle",
        "testdata/snapshots/does-not-exist.pickle",
    ] {
        let (status, stdout, stderr) = run(&["snapshot", file]);
        assert_eq!(status, 2, "{file}");
        assert!(stdout.is_empty(), "{file}: {stdout}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains("\nhint: "),
            "{file}: {stderr}"
        );
        all.push_str(&stderr);
    }
    insta::assert_snapshot!("hostile_errors", all);
}

#[test]
fn usage_errors() {
    let (status, _, stderr) = run(&["snapshot", "--device", "3", "testdata/h200/leak.pickle"]);
    assert_eq!(status, 2);
    assert!(
        stderr.contains("device 3 is not in this snapshot"),
        "{stderr}"
    );
    let (status, _, _) = run(&["snapshot"]);
    assert_eq!(status, 2, "a file is required");
}

#[test]
fn diff_two_snapshots() {
    let (status, stdout, stderr) = run(&[
        "snapshot",
        "diff",
        "--top",
        "3",
        "testdata/h200/leak.pickle",
        "testdata/h200/frag.pickle",
    ]);
    assert_eq!(status, 1, "{stderr}");
    insta::assert_snapshot!("diff_human", stdout);
    let (_, stdout, _) = run(&[
        "snapshot",
        "diff",
        "--json",
        "--top",
        "3",
        "testdata/h200/leak.pickle",
        "testdata/h200/frag.pickle",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    insta::assert_json_snapshot!("diff_json", v);
    // The same file twice: nothing grew.
    let (status, stdout, _) = run(&[
        "snapshot",
        "diff",
        "testdata/h200/leak.pickle",
        "testdata/h200/leak.pickle",
    ]);
    assert_eq!(status, 0);
    assert!(
        stdout.contains("(+0 bytes)") && stdout.contains("No growth"),
        "{stdout}"
    );
}

#[test]
fn html_page_is_self_contained() {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("frag.html");
    let page_arg = page.to_string_lossy().into_owned();
    let (status, stdout, stderr) = run(&[
        "snapshot",
        "--html",
        &page_arg,
        "testdata/h200/frag-oom-real.pickle",
    ]);
    assert_eq!(status, 1);
    assert!(stdout.contains("GD550"));
    assert!(stderr.contains("wrote "), "{stderr}");
    let html = std::fs::read_to_string(&page).expect("page written");
    assert!(html.starts_with("<!DOCTYPE html>"));
    for needle in [
        "Memory over time",
        "Segment map",
        "Top allocation sites",
        "GD550",
        "<polyline",
        "<rect",
    ] {
        assert!(html.contains(needle), "no {needle}");
    }
    // Nothing from the network: no external scripts, styles, images or fonts.
    for bad in ["http://", "https://", "<script src", "<link", "@import"] {
        assert!(!html.contains(bad), "{bad}");
    }
    // One row per segment, each block a rect: 129 segments of two blocks.
    assert_eq!(html.matches("<rect").count(), 258);
}
