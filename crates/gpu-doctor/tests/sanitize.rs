//! `gpu-doctor sanitize` end to end, with a stand-in `compute-sanitizer` script that prints
//! a saved log and exits with a chosen status.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/sanitize")
        .join(rel)
}

/// A folder holding a fake `compute-sanitizer` that prints `$FAKE_LOG` around the job's
/// own output and exits with `$FAKE_EXIT`.
fn fake_sanitizer() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("compute-sanitizer");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         echo \"args: $*\" >&2\n\
         echo 'job: step 1'\n\
         cat \"$FAKE_LOG\"\n\
         printf 'job: done'\n\
         exit \"${FAKE_EXIT:-0}\"\n",
    )
    .unwrap();
    make_executable(&script);
    dir
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn gpu_doctor(path_dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.env("PATH", format!("{}:/usr/bin:/bin", path_dir.display()))
        .env("GPU_DOCTOR_SANITIZER_SEARCH", path_dir.join("none"))
        .env_remove("GPU_DOCTOR_COMPUTE_SANITIZER")
        .env("NO_COLOR", "1");
    cmd
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn run(log: &str, exit: i32, args: &[&str]) -> Output {
    let dir = fake_sanitizer();
    gpu_doctor(dir.path())
        .env("FAKE_LOG", fixture(log))
        .env("FAKE_EXIT", exit.to_string())
        .arg("sanitize")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn condenses_and_passes_the_job_status_through() {
    let out = run(
        "formats/memcheck-no-lineinfo.log",
        3,
        &["--", "./solver", "in.cnf"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The job's own lines pass through; the sanitizer's report lines do not.
    assert!(stdout.contains("solver: reading input"), "{stdout}");
    assert!(!stdout.contains("\n========= Invalid"), "{stdout}");
    insta::assert_snapshot!(stdout);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("args: --tool memcheck --print-limit 0 ./solver in.cnf"),
        "{stderr}"
    );
    assert!(
        stderr.contains("3 reports condensed into 2 findings (job exit status 3)"),
        "{stderr}"
    );
}

#[test]
fn json_on_stdout_job_output_on_stderr() {
    let out = run(
        "formats/racecheck-analysis.log",
        0,
        &["--tool", "racecheck", "--json", "--", "./decode"],
    );
    // The job succeeded, but racecheck found error-level races.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    insta::assert_json_snapshot!(doc);
    assert!(text(&out.stderr).contains("[ RUN      ] ReaderTest.DeltaDecode"));
}

#[test]
fn a_clean_run_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("clean.log");
    std::fs::write(
        &log,
        "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n",
    )
    .unwrap();
    let fake = fake_sanitizer();
    let out = gpu_doctor(fake.path())
        .env("FAKE_LOG", &log)
        .args(["sanitize", "--tool", "initcheck", "--", "./ok"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with("\nNo defects found by compute-sanitizer initcheck.\n"));
}

#[test]
fn show_reports_echoes_the_raw_lines() {
    let out = run(
        "formats/cuda-memcheck-legacy.log",
        0,
        &["--show-reports", "--", "./proj"],
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("========= Invalid __global__ read of size 8\n"),
        "{stdout}"
    );
    assert!(stdout.contains("error[GD601]"), "{stdout}");
}

#[test]
fn missing_sanitizer_is_a_tool_error_naming_the_places() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpu_doctor(dir.path())
        .args(["sanitize", "--", "./app"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let searched = dir.path().join("none");
    assert!(
        stderr.contains(&format!(
            "error: compute-sanitizer was not found (looked on PATH and in {})",
            searched.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: compute-sanitizer ships with the CUDA toolkit"),
        "{stderr}"
    );
}

#[test]
fn a_command_is_required() {
    let dir = fake_sanitizer();
    let out = gpu_doctor(dir.path()).args(["sanitize"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sigterm_reaches_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("got-term");
    let script = dir.path().join("compute-sanitizer");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntrap 'echo term > {}; exit 143' TERM\necho ready\nwhile :; do sleep 0.05; done\n",
            mark.display()
        ),
    )
    .unwrap();
    make_executable(&script);
    let mut child = gpu_doctor(dir.path())
        .args(["sanitize", "--", "./long-job"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the job to start (its first line), then signal gpu-doctor alone.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 6];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    assert_eq!(&first, b"ready\n");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "term\n");
}
