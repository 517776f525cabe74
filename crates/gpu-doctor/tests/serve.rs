//! `gpu-doctor serve` end to end: the built binary over the stand-in NVML driver and over a
//! replay, scraped over loopback; startup errors and their hints.

mod common;

use common::{bin, with_scenario};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A running `serve` and the address it printed; killed on drop.
struct Serving {
    child: Child,
    addr: String,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(mut cmd: std::process::Command, extra: &[&str]) -> Serving {
    let mut child = cmd
        .args(["serve", "--listen", "127.0.0.1:0", "--interval", "200ms"])
        .args(extra)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // "gpu-doctor serve: http://127.0.0.1:PORT/metrics (sampling every 200ms); ..."
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    Serving { child, addr }
}

fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out[9..12].parse().unwrap();
    let body = out.split_once("\r\n\r\n").map(|x| x.1).unwrap_or_default();
    (status, body.to_owned())
}

/// Waits until a sample is in, then returns the metrics body.
fn metrics_when_ready(addr: &str) -> String {
    let t = Instant::now();
    loop {
        let (status, body) = get(addr, "/healthz");
        if status == 200 || t.elapsed() > Duration::from_secs(10) {
            assert_eq!(status, 200, "{body}");
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    get(addr, "/metrics").1
}

/// The metrics with the values that change from run to run (times, the build) replaced.
fn settle(metrics: &str) -> String {
    metrics
        .lines()
        .map(|l| {
            if l.starts_with("gpu_doctor_sample_age_seconds ")
                || l.starts_with("gpu_doctor_sample_duration_seconds ")
                || l.starts_with("gpu_doctor_samples_total ")
            {
                format!("{} [varies]", l.split(' ').next().unwrap_or_default())
            } else if let Some(start) = l.find(",command=\"")
                && let Some(end) = l.find("} ")
            {
                // The stand-in's pids may be real processes here: their /proc details vary.
                format!(
                    "{},command=[/proc],container=[/proc]{}",
                    &l[..start],
                    &l[end..]
                )
            } else if l.starts_with("gpu_doctor_build_info{") {
                "gpu_doctor_build_info{version=\"[version]\"} 1".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn serves_the_stand_in_gpu() {
    let s = serve(with_scenario("one-gpu-busy"), &[]);
    let metrics = metrics_when_ready(&s.addr);
    insta::assert_snapshot!(settle(&metrics));
}

#[test]
fn serves_eight_gpus_with_findings_and_bounded_processes() {
    let s = serve(with_scenario("eight-gpus"), &["--top-processes", "2"]);
    let metrics = metrics_when_ready(&s.addr);
    let used = metrics
        .lines()
        .filter(|l| l.starts_with("gpu_doctor_memory_used_bytes{"))
        .count();
    assert_eq!(used, 8, "{metrics}");
    for line in metrics
        .lines()
        .filter(|l| l.starts_with("gpu_doctor_processes{"))
    {
        let gpu = &line[line.find("gpu=\"").unwrap()..];
        let gpu = &gpu[..gpu.find('}').unwrap()];
        let n: usize = line.rsplit(' ').next().unwrap().parse().unwrap();
        let series = metrics
            .lines()
            .filter(|l| l.starts_with(&format!("gpu_doctor_process_memory_used_bytes{{{gpu},")))
            .count();
        assert!(series <= 3, "{gpu}: {series} series for {n} processes");
    }
}

#[test]
fn serves_a_replay_and_stays_healthy_after_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.ndjson");
    let st = with_scenario("one-gpu-busy")
        .args(["record", "--interval", "10ms", "--count", "3", "--output"])
        .arg(&rec)
        .status()
        .unwrap();
    assert!(st.success());
    let s = serve(bin(), &["--source", &format!("replay:{}", rec.display())]);
    let metrics = metrics_when_ready(&s.addr);
    assert!(
        metrics.contains("\ngpu_doctor_memory_total_bytes{gpu=\"0\""),
        "{metrics}"
    );
    // Three samples at 200 ms, then the last stands.
    std::thread::sleep(Duration::from_secs(1));
    let (status, body) = get(&s.addr, "/healthz");
    assert_eq!(status, 200, "{body}");
    let (_, metrics) = get(&s.addr, "/metrics");
    assert!(
        metrics.contains("\ngpu_doctor_samples_total 3\n"),
        "{metrics}"
    );
}

#[test]
fn a_taken_port_is_reported_with_a_hint() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = with_scenario("one-gpu-idle")
        .args(["serve", "--listen", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&addr, "[addr]");
    let port = addr.rsplit(':').next().unwrap();
    insta::assert_snapshot!(stderr.replace(port, "[port]"));
}

#[test]
fn a_too_short_interval_is_refused() {
    let out = bin()
        .args(["serve", "--interval", "10ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr));
}

#[test]
fn no_driver_is_an_error_not_an_empty_endpoint() {
    let out = bin()
        .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");
    let _ = std::io::stderr().flush();
}
