//! `gpu-doctor pick` over a recording of eight H200s (`testdata/fit/eight-gpus.ndjson`:
//! GPUs 0 and 6 free and idle, 1 busy, 2 lost, 3 with uncorrectable ECC errors, 4 with a
//! pending row remap, 5 and 7 lightly used), and the lease that keeps two picks apart.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn pick(lock_dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.current_dir(root())
        .args([
            "--source",
            "replay:testdata/fit/eight-gpus.ndjson",
            "pick",
            "--lock-dir",
        ])
        .arg(lock_dir)
        .args(args)
        .env("NO_COLOR", "1");
    cmd
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8(out.stdout.clone()).unwrap(),
        String::from_utf8(out.stderr.clone()).unwrap(),
    )
}

#[test]
fn picks_the_healthiest_freest_gpu_and_explains_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let out = pick(dir.path(), &["--min-free", "20GiB", "--max-util", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (stdout, stderr) = text(&out);
    assert_eq!(
        stdout,
        "CUDA_VISIBLE_DEVICES=GPU-00000000-7f00-4c1a-9e21-0a1b2c3d4e5f\n"
    );
    insta::assert_snapshot!(stderr);
}

#[test]
fn export_indices_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = pick(
        dir.path(),
        &["--count", "2", "--export", "--indices", "--no-lock"],
    )
    .output()
    .unwrap();
    assert_eq!(
        text(&out).0,
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=0,6\n"
    );
    let out = pick(dir.path(), &["--count", "2", "--json", "--hold", "5s"])
        .output()
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert!(doc["lease"]["pid"].as_u64().is_some());
    // The pid, the time and the temporary directory change from run to run.
    doc["lease"] = serde_json::Value::Null;
    insta::assert_json_snapshot!(doc);
}

#[test]
fn not_enough_gpus_is_exit_1_and_leases_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = pick(dir.path(), &["--count", "6"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = text(&out);
    assert_eq!(stdout, "");
    assert!(stderr.contains("error: 5 of 6 GPUs qualify"), "{stderr}");
    let leases = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "lease")
        })
        .count();
    assert_eq!(leases, 0);
}

#[test]
fn two_concurrent_picks_get_different_gpus() {
    // Started together, each a separate process of the real binary; repeated to give a race
    // every chance to show.
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let spawn = || {
            pick(dir.path(), &["--min-free", "20GiB"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        assert_eq!(a.status.code(), Some(0), "round {round}");
        assert_eq!(b.status.code(), Some(0), "round {round}");
        let (ga, gb) = (text(&a).0, text(&b).0);
        assert_ne!(ga, gb, "round {round}: both got {ga}");
        let mut got = [ga, gb];
        got.sort();
        // The two freest healthy GPUs: 0 (139 GiB) and 6 (138 GiB).
        assert_eq!(
            got,
            [
                "CUDA_VISIBLE_DEVICES=GPU-00000000-7f00-4c1a-9e21-0a1b2c3d4e5f\n".to_owned(),
                "CUDA_VISIBLE_DEVICES=GPU-00000006-7f00-4c1a-9e21-0a1b2c3d4e5f\n".to_owned()
            ],
            "round {round}"
        );
    }
}

#[test]
fn an_expired_lease_frees_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let first = pick(dir.path(), &["--hold", "0s"]).output().unwrap();
    let second = pick(dir.path(), &[]).output().unwrap();
    assert_eq!(text(&first).0, text(&second).0);
}

#[test]
fn bad_sizes_are_tool_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = pick(dir.path(), &["--min-free", "lots"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("hint: write it like 20GiB"));
}
