//! The exporter over real TCP on loopback: routes, statuses for bad requests, and what a
//! scrape sees while the source hangs or fails.

use gpu_doctor_exporter::{Exporter, ExporterConfig, ExporterError, HttpConfig};
use gpu_doctor_model::{
    DeviceInfo, DeviceSample, GpuEvent, GpuIndex, GpuUuid, Inventory, Reading, Sample, SystemClock,
};
use gpu_doctor_source::{GpuSource, SourceError};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// What the scripted source does on each `sample()` call.
#[derive(Clone, Copy)]
enum Mode {
    Ok,
    Hang,
    Fail,
}

struct Scripted {
    mode: Arc<AtomicU32>,
    n: u64,
}

impl GpuSource for Scripted {
    fn inventory(&mut self) -> Result<Inventory, SourceError> {
        Ok(Inventory {
            devices: vec![DeviceInfo {
                index: GpuIndex(0),
                uuid: GpuUuid("GPU-test".into()),
                name: "NVIDIA H200".into(),
                pci_bus_id: Reading::Unsupported,
                compute_capability: Reading::Unsupported,
                memory_total_bytes: Reading::Value(1 << 30),
                temperature_slowdown_celsius: Reading::Unsupported,
                temperature_shutdown_celsius: Reading::Unsupported,
                pcie_max_link: Reading::Unsupported,
                serial: Reading::Unsupported,
            }],
            ..Inventory::default()
        })
    }

    fn sample(&mut self) -> Result<Sample, SourceError> {
        match self.mode.load(Ordering::SeqCst) {
            1 => {
                // A driver that hangs (as NVML does on a GPU falling off the bus).
                std::thread::sleep(Duration::from_secs(3));
                Err(SourceError::Driver("timed out".into()))
            }
            2 => Err(SourceError::Driver("GPU is lost".into())),
            _ => {
                self.n += 1;
                Ok(Sample {
                    timestamp_ms: self.n * 50,
                    devices: vec![DeviceSample {
                        index: GpuIndex(0),
                        memory_used_bytes: Reading::Value(self.n << 20),
                        memory_total_bytes: Reading::Value(1 << 30),
                        ..DeviceSample::default()
                    }],
                    processes: vec![],
                })
            }
        }
    }

    fn drain_events(&mut self) -> Result<Vec<GpuEvent>, SourceError> {
        Ok(vec![])
    }
}

fn start(http: HttpConfig) -> (Exporter, Arc<AtomicU32>) {
    let mode = Arc::new(AtomicU32::new(Mode::Ok as u32));
    let source = Scripted {
        mode: Arc::clone(&mode),
        n: 0,
    };
    let mut config = ExporterConfig::new("127.0.0.1:0".parse().unwrap(), Duration::from_millis(50));
    config.stale_after = Duration::from_millis(500);
    config.http = http;
    let exporter = Exporter::start(Box::new(source), &config, Arc::new(SystemClock)).unwrap();
    // Wait for the first sample.
    let t = Instant::now();
    while exporter.snapshot().sample.is_none() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    (exporter, mode)
}

/// Sends raw bytes, returns everything the server wrote before closing (or 2 s passing).
fn raw(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status_of(response: &str) -> &str {
    response.split(' ').nth(1).unwrap_or("none")
}

fn get(addr: SocketAddr, path: &str, accept: Option<&str>) -> String {
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    raw(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\n{accept}Connection: close\r\n\r\n").as_bytes(),
    )
}

#[test]
fn routes_and_formats() {
    let (exporter, _) = start(HttpConfig::default());
    let addr = exporter.local_addr();

    let plain = get(addr, "/metrics", None);
    assert_eq!(status_of(&plain), "200", "{plain}");
    assert!(plain.contains("Content-Type: text/plain; version=0.0.4"));
    assert!(plain.contains(
        "\ngpu_doctor_memory_used_bytes{gpu=\"0\",uuid=\"GPU-test\",name=\"NVIDIA H200\"} "
    ));
    assert!(!plain.contains("# EOF"));

    let om = get(
        addr,
        "/metrics?x=1",
        Some("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"),
    );
    assert!(om.contains("Content-Type: application/openmetrics-text; version=1.0.0"));
    assert!(om.ends_with("# EOF\n"));

    let health = get(addr, "/healthz", None);
    assert_eq!(status_of(&health), "200", "{health}");
    assert!(health.contains("ok: last sample"));

    assert_eq!(status_of(&get(addr, "/nope", None)), "404");
    let head = raw(
        addr,
        b"HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status_of(&head), "200");
    assert!(
        head.ends_with("\r\n\r\n"),
        "HEAD must not send a body: {head}"
    );
    exporter.shutdown();
}

#[test]
fn malformed_requests_get_4xx() {
    let (exporter, _) = start(HttpConfig {
        read_timeout: Duration::from_millis(300),
        ..HttpConfig::default()
    });
    let addr = exporter.local_addr();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "POST",
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".to_vec(),
            "405",
        ),
        (
            "DELETE",
            b"DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            "405",
        ),
        (
            "garbage",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n".to_vec(),
            "400",
        ),
        ("no version", b"GET /metrics\r\n\r\n".to_vec(), "400"),
        ("no host", b"GET /metrics HTTP/1.1\r\n\r\n".to_vec(), "400"),
        (
            "relative target",
            b"GET metrics HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "bad header",
            b"GET / HTTP/1.1\r\nHost x\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "huge head",
            {
                let mut v = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec();
                v.extend(std::iter::repeat_n(b'a', 64 * 1024));
                v
            },
            "431",
        ),
        (
            "never finishes",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\n".to_vec(),
            "408",
        ),
        (
            "http2",
            b"GET / HTTP/2.0\r\nHost: x\r\n\r\n".to_vec(),
            "505",
        ),
    ];
    for (what, bytes, want) in cases {
        let response = raw(addr, &bytes);
        assert_eq!(status_of(&response), want, "{what}: {response}");
    }
    // A 405 says what is allowed.
    let r = raw(addr, b"PUT / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(r.contains("Allow: GET, HEAD"), "{r}");
    // And the server still serves afterwards.
    assert_eq!(status_of(&get(addr, "/healthz", None)), "200");
    exporter.shutdown();
}

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let (exporter, _) = start(HttpConfig::default());
    let mut s = TcpStream::connect(exporter.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    // Three pipelined requests, the last one closing.
    s.write_all(
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 3, "{out}");
    exporter.shutdown();
}

#[test]
fn a_hung_source_does_not_block_scrapes_and_turns_healthz_503() {
    let (exporter, mode) = start(HttpConfig::default());
    let addr = exporter.local_addr();
    mode.store(Mode::Hang as u32, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(800));
    let t = Instant::now();
    let metrics = get(addr, "/metrics", None);
    let took = t.elapsed();
    assert_eq!(status_of(&metrics), "200");
    // The scrape answers from the last snapshot while the sampler is stuck for 3 s.
    assert!(took < Duration::from_secs(1), "scrape took {took:?}");
    let health = get(addr, "/healthz", None);
    assert_eq!(status_of(&health), "503", "{health}");
    assert!(health.contains("stale"), "{health}");
    mode.store(Mode::Ok as u32, Ordering::SeqCst);
    exporter.shutdown();
}

#[test]
fn a_failing_source_is_reported_not_hidden() {
    let (exporter, mode) = start(HttpConfig::default());
    let addr = exporter.local_addr();
    mode.store(Mode::Fail as u32, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(300));
    let health = get(addr, "/healthz", None);
    assert_eq!(status_of(&health), "503");
    assert!(
        health.contains("source failed: NVML failed: GPU is lost"),
        "{health}"
    );
    let metrics = get(addr, "/metrics", None);
    assert!(metrics.contains("\ngpu_doctor_source_up 0\n"), "{metrics}");
    assert!(!metrics.contains("gpu_doctor_sample_errors_total 0\n"));
    exporter.shutdown();
}

#[test]
fn a_full_queue_gets_503_not_a_hang() {
    let (exporter, _) = start(HttpConfig {
        workers: 1,
        queue: 1,
        read_timeout: Duration::from_secs(3),
        ..HttpConfig::default()
    });
    let addr = exporter.local_addr();
    // One idle connection holds the only worker, a second fills the queue.
    let _busy = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let _queued = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let r = get(addr, "/metrics", None);
    assert_eq!(status_of(&r), "503", "{r}");
    exporter.shutdown();
}

#[test]
fn a_taken_port_is_an_error_with_a_hint() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut config = ExporterConfig::new(taken.local_addr().unwrap(), Duration::from_secs(1));
    config.http.workers = 1;
    let source = Scripted {
        mode: Arc::new(AtomicU32::new(0)),
        n: 0,
    };
    let err = Exporter::start(Box::new(source), &config, Arc::new(SystemClock)).unwrap_err();
    assert!(matches!(err, ExporterError::Bind { .. }), "{err}");
    assert!(err.hint().unwrap().contains("--listen"));
}
