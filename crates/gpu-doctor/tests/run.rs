//! `gpu-doctor run` end to end: the built binary supervising real child processes
//! (`testdata/run/job.py`) that print the real failure texts captured on an H200 and exit as
//! those jobs did. GPU state comes from recordings (`--source replay:`), or from nowhere.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn job() -> String {
    repo().join("testdata/run/job.py").display().to_string()
}

/// A real report of a GPU held by another process (pytorch/pytorch#3477), from the corpus.
fn other_process_text() -> String {
    repo()
        .join("crates/gpu-doctor-scan/tests/corpus/cases/127-pytorch-gpu0-full-other-process-error-2.txt")
        .display()
        .to_string()
}

fn recording(name: &str) -> String {
    format!(
        "replay:{}",
        repo().join("testdata/run").join(name).display()
    )
}

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Self {
        Run {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `gpu-doctor [--source SOURCE] run --run-dir DIR --report FILE --backoff 0 ARGS`, in the
    /// temporary folder, without a GPU driver unless a recording is given.
    fn command(&self, source: Option<&str>, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
        if let Some(s) = source {
            cmd.args(["--source", s]);
        }
        cmd.arg("run")
            .args([
                "--run-dir",
                "run",
                "--report",
                "report.json",
                "--backoff",
                "0",
            ])
            .args(["--sample-interval", "20ms", "--checkpoint-settle", "0s"])
            .args(args)
            .current_dir(self.dir.path())
            .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
            .env_remove("GPU_DOCTOR_SOURCE")
            .env_remove("PYTORCH_CUDA_ALLOC_CONF")
            .env_remove("PYTORCH_ALLOC_CONF")
            .env_remove("CUDA_VISIBLE_DEVICES")
            .env_remove("CUDA_LAUNCH_BLOCKING")
            .env_remove("PYTHONPATH")
            .env("NO_COLOR", "1");
        cmd
    }

    fn run(&self, source: Option<&str>, args: &[&str]) -> Output {
        self.command(source, args).output().unwrap()
    }

    fn report(&self) -> Value {
        let text = std::fs::read_to_string(self.path("report.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// The report with what changes from run to run (times, paths, pids, the explain
    /// engine's wording) replaced, for a snapshot.
    fn stable_report(&self) -> Value {
        let mut r = self.report();
        let text = serde_json::to_string_pretty(&r).unwrap();
        let text = self.filter(&text);
        r = serde_json::from_str(&text).unwrap();
        let obj = r.as_object_mut().unwrap();
        obj.insert("duration_seconds".into(), "[duration]".into());
        let findings = obj.remove("findings").unwrap();
        obj.insert(
            "findings".into(),
            format!("[{} findings]", findings.as_array().unwrap().len()).into(),
        );
        for a in obj["attempts"].as_array_mut().unwrap() {
            let a = a.as_object_mut().unwrap();
            a.insert("duration_seconds".into(), "[duration]".into());
            if let Some(f) = a.get_mut("finding").and_then(Value::as_object_mut) {
                f.insert("message".into(), "[explain's message]".into());
            }
        }
        r
    }

    fn filter(&self, text: &str) -> String {
        let dir = self.dir.path().display().to_string();
        let canonical = repo().canonicalize().unwrap().display().to_string();
        let out = text
            .replace(&dir, "[TMP]")
            .replace(&canonical, "[REPO]")
            .replace(&repo().display().to_string(), "[REPO]");
        replace_pids(&out)
    }
}

/// `memory_stats-1234.json` → `memory_stats-[PID].json` (and `.pickle`).
fn replace_pids(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('-') {
        out.push_str(&rest[..=i]);
        rest = &rest[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after = &rest[digits..];
        if digits > 0 && (after.starts_with(".json") || after.starts_with(".pickle")) {
            out.push_str("[PID]");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// gpu-doctor's own lines on stderr (decisions and the summary), with times filtered.
fn doctor_lines(run: &Run, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let mut out = String::new();
    let mut in_summary = false;
    for line in text.lines() {
        if line.starts_with("gpu-doctor run:") {
            in_summary = true;
        }
        if line.starts_with("gpu-doctor: no GPU state (") {
            // The loader's words differ between systems.
            out.push_str("gpu-doctor: no GPU state ([why]): going on without it\n");
        } else if line.starts_with("gpu-doctor:") || in_summary {
            out.push_str(&squash_durations(line));
            out.push('\n');
        }
    }
    run.filter(&out)
}

/// `in 1.2 s` → `in [t] s`, `   0.1 s` → `[t] s`.
fn squash_durations(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let mut out = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let next_is_s = words
            .get(i + 1)
            .is_some_and(|n| *n == "s" || n.starts_with("s "));
        if next_is_s && w.parse::<f64>().is_ok() {
            out.push("[t]");
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn attempts(report: &Value) -> &Vec<Value> {
    report["attempts"].as_array().unwrap()
}

#[test]
fn lowers_the_batch_until_it_fits_and_resumes_from_the_checkpoint() {
    let run = Run::new();
    let job = job();
    let out = run.run(
        None,
        &[
            "--batch-arg",
            "--batch-size",
            "--accum-arg",
            "--grad-accum",
            "--resume-arg",
            "--resume {checkpoint}",
            "--checkpoint-glob",
            "ckpt/*.pt",
            "--",
            "python3",
            &job,
            "train",
            "--batch-size",
            "64",
            "--fits",
            "16",
            "--steps",
            "4",
            "--oom-after-step",
            "2",
            "--ckpt-dir",
            "ckpt",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let so = stdout(&out);
    assert!(so.contains("resumed from ckpt/step-2.pt at step 2"), "{so}");
    assert!(
        so.ends_with("done: batch 16 accum 4 effective 64\n"),
        "{so}"
    );
    insta::assert_snapshot!("lower_batch_stderr", doctor_lines(&run, &out.stderr));
    insta::assert_json_snapshot!("lower_batch_report", run.stable_report());
}

#[test]
fn a_checkpoint_cut_short_is_passed_over() {
    let run = Run::new();
    let job = job();
    let out = run.run(
        None,
        &[
            "--batch-arg=--batch-size",
            "--resume-arg",
            "--resume={checkpoint}",
            "--checkpoint-glob",
            "ckpt/*.pt",
            "--",
            "python3",
            &job,
            "train",
            "--batch-size=32",
            "--fits",
            "16",
            "--oom-after-step",
            "2",
            "--ckpt-dir",
            "ckpt",
            "--slow-ckpt",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = doctor_lines(&run, &out.stderr);
    assert!(
        lines.contains(
            "gpu-doctor: passing over checkpoint ckpt/step-3.pt: it is a zip archive without its \
             end record (cut short)"
        ),
        "{lines}"
    );
    let report = run.report();
    assert_eq!(attempts(&report)[1]["resumed_from"], "ckpt/step-2.pt");
    assert_eq!(
        attempts(&report)[1]["argv"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        "--resume=ckpt/step-2.pt"
    );
    assert!(stdout(&out).contains("resumed from ckpt/step-2.pt at step 2"));
}

#[test]
fn batch_placeholder_and_batch_env() {
    let run = Run::new();
    let job = job();
    let out = run.run(
        None,
        &[
            "--batch",
            "40",
            "--batch-factor",
            "0.9",
            "--",
            "python3",
            &job,
            "train",
            "--batch-size",
            "{batch}",
            "--fits",
            "30",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = run.report();
    let batches: Vec<u64> = attempts(&report)
        .iter()
        .map(|a| a["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(batches, [40, 36, 32, 28]);
    assert_eq!(report["batch"]["target"], "{batch}");
    assert!(stdout(&out).contains("done: batch 28 accum 1"));

    let run = Run::new();
    let out = run.run(
        None,
        &[
            "--batch-env",
            "BATCH",
            "--batch",
            "8",
            "--",
            "python3",
            &job,
            "train",
            "--fits",
            "4",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = run.report();
    assert_eq!(attempts(&report)[1]["env_changes"]["BATCH"], "4");
    assert!(stdout(&out).contains("done: batch 4 accum 1"));
}

#[test]
fn the_smallest_batch_and_the_attempt_limit_stop_the_run() {
    let run = Run::new();
    let job = job();
    let out = run.run(
        None,
        &[
            "--batch-arg",
            "--batch-size",
            "--min-batch",
            "32",
            "--",
            "python3",
            &job,
            "train",
            "--batch-size",
            "64",
            "--fits",
            "16",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("min_batch_stderr", doctor_lines(&run, &out.stderr));

    let run = Run::new();
    let out = run.run(
        None,
        &[
            "--batch-arg",
            "--batch-size",
            "--max-attempts",
            "2",
            "--",
            "python3",
            &job,
            "train",
            "--batch-size",
            "64",
            "--fits",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = run.report();
    assert_eq!(attempts(&report).len(), 2);
    let reason = report["stop_reason"].as_str().unwrap();
    assert!(
        reason.ends_with("but --max-attempts 2 is reached"),
        "{reason}"
    );
}

#[test]
fn fragmentation_turns_on_expandable_segments_keeping_the_users_settings() {
    let run = Run::new();
    let job = job();
    let out = run
        .command(None, &["--", "python3", &job, "frag"])
        .env("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let so = stdout(&out);
    assert!(
        so.contains("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,expandable_segments:True\n"),
        "{so}"
    );
    assert!(so.contains("PYTORCH_ALLOC_CONF=max_split_size_mb:128,expandable_segments:True\n"));
    assert!(so.contains("NO OOM: 12 GiB allocated"));
    insta::assert_snapshot!("frag_stderr", doctor_lines(&run, &out.stderr));
    insta::assert_json_snapshot!("frag_report", run.stable_report());
}

#[test]
fn the_hook_shows_fragmentation_the_text_alone_does_not() {
    let run = Run::new();
    let fake = repo().join("testdata/run");
    let pythonpath = format!(
        "{}:{}",
        fake.join("fake_torch").display(),
        fake.join("user_site").display()
    );
    let script = fake.join("torch_job.py").display().to_string();
    let out = run
        .command(None, &["--", "python3", &script])
        .env("PYTHONPATH", &pythonpath)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The user's own sitecustomize still ran, in both attempts.
    assert_eq!(stderr(&out).matches("user sitecustomize ran").count(), 2);
    // History was recorded, bounded, with Python stacks only.
    assert!(stdout(&out).contains("history: {'max_entries': 20000, 'stacks': 'python'}"));
    let report = run.report();
    let first = &attempts(&report)[0];
    assert_eq!(first["cause"], "oom_fragmentation");
    assert!(
        first["cause_detail"]
            .as_str()
            .unwrap()
            .starts_with("the hook saw 53.4 GiB reserved by PyTorch but unallocated"),
        "{first}"
    );
    let files: Vec<&str> = first["hook_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[1].ends_with(".pickle") && Path::new(&run.path(files[1])).is_file());
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(run.path(files[0])).unwrap()).unwrap();
    assert_eq!(stats["requested_bytes"], 12u64 << 30);
    assert_eq!(
        stats["memory_stats"]["reserved_bytes.all.current"],
        138_512_695_296u64
    );
    assert_eq!(
        attempts(&report)[1]["env_changes"]["PYTORCH_ALLOC_CONF"],
        "expandable_segments:True"
    );

    // Without the hook only the text is there: no allocator numbers, no fragmentation.
    let run = Run::new();
    let out = run
        .command(None, &["--no-hook", "--", "python3", &script])
        .env("PYTHONPATH", &pythonpath)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = run.report();
    assert_eq!(attempts(&report).len(), 1);
    assert_ne!(attempts(&report)[0]["cause"], "oom_fragmentation");
    assert!(attempts(&report)[0].get("hook_files").is_none());
    assert!(!run.path("run/hook").exists());
}

#[test]
fn another_process_holding_the_gpu_moves_the_job_to_the_free_one() {
    let run = Run::new();
    let job = job();
    let uuid1 = "GPU-00000001-6aa9-50d2-ec35-e6628d3ffd99";
    let out = run.run(
        Some(&recording("two-gpus-other-process.ndjson")),
        &[
            "--wait-timeout",
            "5s",
            "--",
            "python3",
            &job,
            "gpu",
            uuid1,
            "--text",
            &other_process_text(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("running on {uuid1}")));
    insta::assert_snapshot!("other_process_move_stderr", doctor_lines(&run, &out.stderr));
    let report = run.report();
    assert_eq!(attempts(&report)[0]["cause"], "oom_other_process");
    assert_eq!(attempts(&report)[0]["action"], "move_gpu");
    assert_eq!(
        attempts(&report)[1]["env_changes"]["CUDA_VISIBLE_DEVICES"],
        uuid1
    );
    // GPU memory was sampled while it ran: the recording's GPU 0.
    assert_eq!(attempts(&report)[0]["peak_gpu_memory_source"], "device");
}

#[test]
fn another_process_on_the_only_gpu_is_waited_for() {
    let run = Run::new();
    let job = job();
    let started = Instant::now();
    let out = run.run(
        Some(&recording("one-gpu-busy-then-free.ndjson")),
        &[
            "--",
            "python3",
            &job,
            "text",
            &other_process_text(),
            "--marker",
            "marker",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30));
    let report = run.report();
    assert_eq!(attempts(&report)[0]["action"], "wait");
    assert_eq!(attempts(&report).len(), 2);
    let lines = doctor_lines(&run, &out.stderr);
    assert!(
        lines.contains("gpu-doctor: GPU 0 has 139.8 GiB free again: retrying"),
        "{lines}"
    );

    // And a wait that runs out stops the run.
    let run = Run::new();
    let out = run.run(
        Some(&recording("one-gpu-busy-then-free.ndjson")),
        &[
            "--wait-timeout",
            "100ms",
            "--",
            "python3",
            &job,
            "text",
            &other_process_text(),
            "--marker",
            "marker",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let reason = run.report()["stop_reason"].as_str().unwrap().to_owned();
    assert!(reason.starts_with("GPU 0 did not get"), "{reason}");
}

#[test]
fn a_gpu_fault_excludes_that_gpu_and_moves_to_a_healthy_one() {
    let run = Run::new();
    let job = job();
    let uuid1 = "GPU-00000001-6aa9-50d2-ec35-e6628d3ffd99";
    let out = run.run(
        Some(&recording("two-gpus-xid79.ndjson")),
        &[
            "--",
            "python3",
            &job,
            "gpu",
            uuid1,
            "--text",
            "err-illegal.txt",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("xid_stderr", doctor_lines(&run, &out.stderr));
    let report = run.report();
    assert_eq!(attempts(&report)[0]["cause"], "hw_xid");
    assert_eq!(attempts(&report)[0]["action"], "exclude_gpu");
    assert_eq!(report["excluded_gpus"], serde_json::json!([0]));
    assert_eq!(attempts(&report)[0]["gpu_events"][0]["xid"], 79);
}

#[test]
fn a_sticky_error_is_not_retried_blind() {
    let run = Run::new();
    let job = job();
    let out = run.run(None, &["--", "python3", &job, "sticky", "err-illegal.txt"]);
    assert_eq!(out.status.code(), Some(1));
    let report = run.report();
    assert_eq!(attempts(&report).len(), 1);
    assert_eq!(attempts(&report)[0]["cause"], "illegal_access");
    assert!(!report["findings"].as_array().unwrap().is_empty());
    insta::assert_snapshot!("sticky_stderr", doctor_lines(&run, &out.stderr));
}

#[test]
fn debug_rerun_runs_once_with_launch_blocking_then_reports() {
    let run = Run::new();
    let job = job();
    let out = run.run(
        None,
        &[
            "--debug-rerun",
            "--",
            "python3",
            &job,
            "sticky",
            "err-assert.txt",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let so = stdout(&out);
    assert_eq!(so, "CUDA_LAUNCH_BLOCKING=unset\nCUDA_LAUNCH_BLOCKING=1\n");
    let report = run.report();
    assert_eq!(attempts(&report).len(), 2);
    assert_eq!(attempts(&report)[0]["action"], "debug_rerun");
    assert_eq!(
        attempts(&report)[1]["env_changes"]["CUDA_LAUNCH_BLOCKING"],
        "1"
    );
    assert_eq!(attempts(&report)[1]["action"], "stop");
    insta::assert_snapshot!("debug_rerun_stderr", doctor_lines(&run, &out.stderr));
}

#[test]
fn an_environment_error_stops_with_checks_verdict() {
    let run = Run::new();
    let job = job();
    let out = run.run(None, &["--", "python3", &job, "text", "err-badordinal.txt"]);
    assert_eq!(out.status.code(), Some(1));
    let report = run.report();
    assert_eq!(attempts(&report).len(), 1);
    let cause = attempts(&report)[0]["cause"].as_str().unwrap();
    assert!(cause.starts_with("env_"), "{cause}");
    assert!(
        stderr(&out).contains("gpu-doctor: the environment is at fault; `gpu-doctor check` says:")
    );
}

#[test]
fn exit_statuses_pass_through() {
    let run = Run::new();
    let out = run.run(None, &["--", "python3", "-c", "import sys; sys.exit(3)"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(run.report()["attempts"][0]["action"], "stop");

    let run = Run::new();
    let out = run.run(None, &["--", "python3", &job(), "abort"]);
    assert_eq!(out.status.code(), Some(128 + 6), "{}", stderr(&out));
    assert_eq!(run.report()["attempts"][0]["signal"], 6);

    let run = Run::new();
    let out = run.run(None, &["--", "python3", "-c", "print('ok')"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "ok\n");
    insta::assert_snapshot!("success_stderr", doctor_lines(&run, &out.stderr));
}

/// Sends `sig` to `pid` with the `kill` utility (no libc in the tests).
fn send(sig: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// Starts a supervised `ignore-term` job and waits until it says it is ready.
fn start_stubborn(
    run: &Run,
    kill_timeout: &str,
) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    let mut child = run
        .command(
            None,
            &[
                "--kill-timeout",
                kill_timeout,
                "--",
                "python3",
                &job(),
                "ignore-term",
                "30",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    (child, out)
}

#[test]
fn a_forwarded_sigterm_escalates_to_sigkill_after_the_timeout() {
    let run = Run::new();
    let (mut child, mut out) = start_stubborn(&run, "500ms");
    let t = Instant::now();
    send("TERM", child.id());
    let status = child.wait().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(status.code(), Some(128 + 9));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(rest, "ignoring SIGTERM\n");
    let report = run.report();
    assert_eq!(report["outcome"], "interrupted");
    assert_eq!(report["attempts"].as_array().unwrap().len(), 1);
}

#[test]
fn a_second_signal_kills_at_once() {
    let run = Run::new();
    let (mut child, _out) = start_stubborn(&run, "60s");
    let t = Instant::now();
    send("TERM", child.id());
    std::thread::sleep(Duration::from_millis(300));
    send("INT", child.id());
    let status = child.wait().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(status.code(), Some(128 + 9));
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

#[test]
fn no_grandchild_outlives_the_run() {
    let run = Run::new();
    let out = run.run(None, &["--", "python3", &job(), "forker", "pids"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let pids: Vec<u32> = std::fs::read_to_string(run.path("pids"))
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!alive(pid), "grandchild {pid} is still running");
    }
}

#[test]
fn usage_errors_exit_2_with_a_hint() {
    let run = Run::new();
    let out = run.run(
        None,
        &[
            "--batch",
            "auto",
            "--batch-arg",
            "--bs",
            "--",
            "python3",
            "-c",
            "0",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("error: `--batch auto` is not available yet\nhint: "));

    let out = run.run(
        None,
        &["--batch-arg", "--batch-size", "--", "python3", "-c", "0"],
    );
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("usage_flag_missing", stderr(&out));

    let out = run.run(None, &["--", "/nonexistent/program"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("error: cannot start `/nonexistent/program`"));

    let out = run.run(None, &[]);
    assert_eq!(out.status.code(), Some(2));
}
