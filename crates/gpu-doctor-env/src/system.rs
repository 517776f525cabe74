//! The host probe: OS, kernel, hostname and CPU, for the report header and `env diff`.

use crate::Probe;
use crate::facts::HostFacts;
use crate::host::{Host, read_text};

#[derive(Debug, Clone, Default)]
pub struct HostProbe;

impl Probe for HostProbe {
    type Facts = HostFacts;
    const NAME: &'static str = "host";

    fn probe(&self, host: &Host) -> HostFacts {
        let one_line = |p: &str| {
            read_text(&host.path(p))
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
        };
        let os = read_text(&host.path("/etc/os-release")).and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_owned())
            })
        });
        let cpuinfo = read_text(&host.path("/proc/cpuinfo")).unwrap_or_default();
        let cpu = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_owned())
        });
        let count = cpuinfo
            .lines()
            .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
            .count();
        HostFacts {
            hostname: one_line("/proc/sys/kernel/hostname"),
            os,
            kernel: one_line("/proc/sys/kernel/osrelease"),
            cpu,
            cpu_count: u32::try_from(count).ok().filter(|c| *c > 0),
        }
    }
}
