//! `gpu-doctor guard` end to end: the binary, the stand-in NVML driver and real processes.
//!
//! The stand-in driver's pids are whatever its scenario says, so each test starts real
//! `sleep` children and writes a scenario at test time that puts their pids on GPU 0 with
//! the memory the test wants. The guard then reads their owners from the real `/proc`, and
//! a stop is a real signal. Root's processes are never touched, so when the tests run as
//! root (CI does) the children run as `nobody` (uid 65534); otherwise as the test's own
//! user. A passwd file written by the test names that uid `tenant`.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;
const NOBODY: u32 = 65534;

fn fake_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps dir");
    [
        deps.join("libfake_nvml.so"),
        deps.join("../libfake_nvml.so"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("libfake_nvml.so is built as a dev-dependency")
}

fn euid() -> u32 {
    // The test's own effective uid, read the way the guard reads others'.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// The uid the tenant's processes run as.
fn tenant_uid() -> u32 {
    if euid() == 0 { NOBODY } else { euid() }
}

/// A `sleep` that runs as the tenant.
fn tenant_sleep() -> Child {
    let mut cmd = Command::new("sleep");
    cmd.arg("60");
    if euid() == 0 {
        cmd.uid(NOBODY).gid(NOBODY);
    }
    let child = cmd.spawn().expect("spawn sleep");
    // Wait until exec has happened, so /proc shows the tenant as the owner.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let comm =
            std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap_or_default();
        if comm.trim() == "sleep" {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    /// A scenario with one H200 and `procs` (pid, GiB) on it, a passwd and group file, and
    /// a budget file with `budget`.
    fn new(procs: &[(u32, u64)], budget: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let processes: Vec<serde_json::Value> = procs
            .iter()
            .map(|&(pid, gib)| serde_json::json!({"pid": pid, "gpu": 0, "used_memory_bytes": gib * GIB}))
            .collect();
        let scenario = serde_json::json!({
            "description": "guard test: real sleep children on one H200",
            "gpus": [{"uuid": "GPU-8a7c6967-6aa9-50d2-ec35-e6628d3ffd99", "pci_bus_id": "00000000:00:06.0"}],
            "processes": processes,
        });
        std::fs::write(dir.path().join("scenario.json"), scenario.to_string()).unwrap();
        let uid = tenant_uid();
        std::fs::write(
            dir.path().join("passwd"),
            format!("root:x:0:0::/root:/bin/sh\ntenant:x:{uid}:{uid}::/:/bin/sh\nother:x:4242:4242::/:/bin/sh\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("group"),
            format!("root:x:0:\ntenants:x:{uid}:\n"),
        )
        .unwrap();
        std::fs::write(dir.path().join("budget.toml"), budget).unwrap();
        Setup { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn guard(&self, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
            .env("NO_COLOR", "1")
            .env_remove("GPU_DOCTOR_SOURCE")
            .env("GPU_DOCTOR_NVML_LIB", fake_lib())
            .env("FAKE_NVML_SCENARIO", self.path("scenario.json"))
            .arg("guard")
            .arg("--config")
            .arg(self.path("budget.toml"))
            .arg("--passwd")
            .arg(self.path("passwd"))
            .arg("--group")
            .arg(self.path("group"))
            .args(extra)
            .output()
            .expect("run gpu-doctor guard")
    }
}

/// Replaces the digits that follow each `marker` with `mask` (no regex dependency).
fn mask_after(text: &str, marker: &str, mask: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out.push_str(mask);
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// Pids, uids, start times and timings vary; everything else in the output must not.
fn settle(text: &str, pids: &[(u32, &str)]) -> String {
    let mut out = text.to_owned();
    for (pid, name) in pids {
        out = out.replace(&pid.to_string(), name);
    }
    let out = mask_after(&out, "exited ", "[N]");
    let out = mask_after(&out, "uid ", "[UID]");
    mask_after(&out, "\"start_time\": ", "[START]")
}

fn alive(child: &mut Child) -> bool {
    child.try_wait().unwrap().is_none()
}

fn end(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

const STOP_BUDGET: &str = r#"
[[budget]]
user = "tenant"
limit = "20GiB"
action = "stop"
grace = "2s"
"#;

#[test]
fn dry_run_says_what_it_would_do_and_does_nothing() {
    let (mut big, mut small) = (tenant_sleep(), tenant_sleep());
    let s = Setup::new(&[(big.id(), 18), (small.id(), 6)], STOP_BUDGET);
    let out = s.guard(&["--once", "--dry-run"]);
    let names = [(big.id(), "[BIG]"), (small.id(), "[SMALL]")];
    let stderr = settle(&String::from_utf8_lossy(&out.stderr), &names);
    let stdout = settle(&String::from_utf8_lossy(&out.stdout), &names);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    insta::assert_snapshot!("dry_run_stderr", stderr);
    insta::assert_snapshot!("dry_run_stdout", stdout);
    // Nothing was signalled.
    std::thread::sleep(Duration::from_millis(200));
    assert!(alive(&mut big) && alive(&mut small));
    end(big);
    end(small);
}

#[test]
fn the_over_budget_process_is_stopped_and_the_other_keeps_running() {
    let (mut big, mut small) = (tenant_sleep(), tenant_sleep());
    let s = Setup::new(&[(big.id(), 18), (small.id(), 6)], STOP_BUDGET);
    let out = s.guard(&["--once", "--json"]);
    let names = [(big.id(), "[BIG]"), (small.id(), "[SMALL]")];
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = settle(&String::from_utf8_lossy(&out.stdout), &names)
        .replace(&s.path("budget.toml").display().to_string(), "[FILE]");
    let json = mask_after(&json, "\"uid\": ", "[UID]");
    insta::assert_snapshot!("stop_json", json);
    // `sleep` dies of SIGTERM; the other one is untouched.
    let status = big.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(15)
    );
    assert!(alive(&mut small));
    end(small);
}

#[test]
fn within_budget_nothing_happens() {
    let mut a = tenant_sleep();
    let s = Setup::new(&[(a.id(), 19)], STOP_BUDGET);
    let out = s.guard(&["--once"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Every process with a budget is within it.\n"
    );
    assert!(alive(&mut a));
    end(a);
}

#[test]
fn a_process_no_rule_names_is_never_touched() {
    let mut a = tenant_sleep();
    let s = Setup::new(
        &[(a.id(), 90), (1, 90)],
        "[[budget]]\nuser = \"other\"\nlimit = \"1GiB\"\naction = \"stop\"\ngrace = \"1s\"\n",
    );
    let out = s.guard(&["--once"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(alive(&mut a));
    end(a);
}

#[test]
fn root_processes_are_never_touched_even_when_named() {
    if euid() != 0 {
        eprintln!("skipped: needs root to own a process named by a group budget");
        return;
    }
    // A root-owned sleep, in the budget's group by its gid 0, far over budget.
    let mut rooted = Command::new("sleep").arg("60").spawn().unwrap();
    let s = Setup::new(
        &[(rooted.id(), 90)],
        "[[budget]]\ngroup = \"root\"\nlimit = \"1GiB\"\naction = \"stop\"\ngrace = \"1s\"\n",
    );
    let out = s.guard(&["--once"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(alive(&mut rooted));
    end(rooted);
}

#[test]
fn a_budget_file_cannot_make_a_non_root_user_stop_another_users_process() {
    if euid() != 0 {
        eprintln!("skipped: simulating another user's guard needs root (--as-uid)");
        return;
    }
    // The guard decides as uid 4242 ("other"); the file says to stop the tenant's process.
    let mut victim = tenant_sleep();
    let s = Setup::new(&[(victim.id(), 30)], STOP_BUDGET);
    let out = s.guard(&["--once", "--as-uid", "4242"]);
    let names = [(victim.id(), "[VICTIM]")];
    let stdout = settle(&String::from_utf8_lossy(&out.stdout), &names);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("refused_stdout", stdout);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        alive(&mut victim),
        "a non-root guard stopped another user's process"
    );
    end(victim);
}

#[test]
fn as_uid_is_for_root_only() {
    if euid() == 0 {
        return;
    }
    let s = Setup::new(&[], STOP_BUDGET);
    let out = s.guard(&["--once", "--as-uid", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_bad_budget_file_names_the_line() {
    let s = Setup::new(
        &[],
        "[[budget]]\nuser = \"tenant\"\nlimit = \"40 parsecs\"\n",
    );
    let out = s.guard(&["--once"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr)
        .replace(&s.path("budget.toml").display().to_string(), "[FILE]");
    insta::assert_snapshot!("bad_file", stderr);
}

#[test]
fn warnings_only_never_signal() {
    let mut a = tenant_sleep();
    let s = Setup::new(
        &[(a.id(), 30)],
        "[[budget]]\ngroup = \"tenants\"\nfraction = 0.1\n",
    );
    let out = s.guard(&["--once"]);
    let stdout = settle(&String::from_utf8_lossy(&out.stdout), &[(a.id(), "[PID]")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout.starts_with("warn[GD592] oom_other_process [GPU 0]: pid [PID] of tenant on GPU 0 is over budget: it holds 30.0 GiB and tenant holds 30.0 GiB in all there, against a budget of 14.0 GiB (group tenants, line 1)"), "{stdout}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(alive(&mut a));
    end(a);
}

#[test]
fn the_example_budget_file_parses() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/guard.example.toml");
    let s = Setup::new(&[], &std::fs::read_to_string(example).unwrap());
    let out = s.guard(&["--once", "--dry-run"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs the guard without `--once` until `done()` or 10 s, then ends it; its stdout.
fn guard_loop(s: &Setup, done: &mut dyn FnMut() -> bool) -> String {
    let mut guard = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .env("NO_COLOR", "1")
        .env_remove("GPU_DOCTOR_SOURCE")
        .env("GPU_DOCTOR_NVML_LIB", fake_lib())
        .env("FAKE_NVML_SCENARIO", s.path("scenario.json"))
        .args(["guard", "--interval", "100ms", "--config"])
        .arg(s.path("budget.toml"))
        .arg("--passwd")
        .arg(s.path("passwd"))
        .arg("--group")
        .arg(s.path("group"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the guard");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    guard.kill().unwrap();
    let out = guard.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_running_guard_stops_a_process_and_keeps_watching() {
    let (mut big, mut small) = (tenant_sleep(), tenant_sleep());
    let s = Setup::new(&[(big.id(), 18), (small.id(), 6)], STOP_BUDGET);
    let mut stopped_at: Option<Instant> = None;
    let stdout = guard_loop(&s, &mut || {
        if stopped_at.is_none() && big.try_wait().unwrap().is_some() {
            stopped_at = Some(Instant::now());
        }
        // A few more rounds after the stop: the finding is reported, and the other process
        // must stay untouched.
        stopped_at.is_some_and(|t| t.elapsed() > Duration::from_millis(600))
    });
    let stopped = stopped_at.is_some();
    assert!(stopped, "the guard did not stop the process over budget");
    std::thread::sleep(Duration::from_millis(300));
    assert!(alive(&mut small));
    assert!(
        stdout.contains("error[GD593] oom_other_process [GPU 0]: stopped pid"),
        "{stdout}"
    );
    end(small);
}

#[test]
fn the_running_guard_warns_once_per_process() {
    let mut a = tenant_sleep();
    let s = Setup::new(
        &[(a.id(), 30)],
        "[[budget]]\nuser = \"tenant\"\nlimit = \"20GiB\"\n",
    );
    let begun = Instant::now();
    let stdout = guard_loop(&s, &mut || begun.elapsed() > Duration::from_millis(1200));
    // About ten rounds, one warning.
    assert_eq!(stdout.matches("warn[GD592]").count(), 1, "{stdout}");
    assert!(alive(&mut a));
    end(a);
}
