//! Rules over a torch memory snapshot (GD550–GD569): why an out-of-memory happened
//! (fragmentation, capacity, a leak, another process) and the risks a snapshot shows without
//! one (steady growth, stranded free memory).
//!
//! The input is [`MemoryFacts`], plain numbers that `gpu-doctor snapshot` fills from its
//! analyses; the rules read no file. [`diagnose`] returns the root cause first.

pub mod fragmentation_risk;
pub mod growth;
pub mod leak;
pub mod oom_capacity;
pub mod oom_fragmentation;
pub mod oom_leak;
pub mod oom_other_process;
pub mod oom_unexplained;

use crate::registry::RuleDoc;
use gpu_doctor_model::{Evidence, Finding, GpuIndex};

/// Every memory rule's documentation, for the registry.
pub static RULES: &[&RuleDoc] = &[
    &oom_fragmentation::DOC,
    &oom_capacity::DOC,
    &oom_leak::DOC,
    &oom_other_process::DOC,
    &leak::DOC,
    &fragmentation_risk::DOC,
    &growth::DOC,
    &oom_unexplained::DOC,
];

/// The out-of-memory moment, as the snapshot's `oom` trace entry and the replay saw it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OomFacts {
    /// The rounded request ("Tried to allocate").
    pub requested_bytes: u64,
    /// What CUDA said was free on the device.
    pub device_free_bytes: Option<u64>,
    pub allocated_bytes: u64,
    pub reserved_bytes: u64,
    /// The largest free block in the allocator's segments.
    pub largest_free_block_bytes: u64,
    /// Where it was asked (`train.py:113 in <module>`).
    pub site: Option<String>,
}

impl OomFacts {
    /// Reserved by torch but not allocated.
    pub fn cached_free_bytes(&self) -> u64 {
        self.reserved_bytes.saturating_sub(self.allocated_bytes)
    }
}

/// A site whose live memory grew steadily over the recording.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LeakFacts {
    pub site: String,
    pub growth_bytes: u64,
    pub live_bytes: u64,
    pub live_allocations: usize,
    pub frees: usize,
}

/// What a snapshot says, as numbers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemoryFacts {
    /// Evidence source: the snapshot's file name.
    pub source: String,
    pub gpu: Option<GpuIndex>,
    pub allocated_bytes: u64,
    pub reserved_bytes: u64,
    /// Free bytes in segments that also hold live blocks (`empty_cache()` cannot return them).
    pub stranded_free_bytes: u64,
    pub largest_free_block_bytes: u64,
    /// `expandable_segments:True` was in force.
    pub expandable_segments: bool,
    /// Free bytes in whole pages, which expandable segments could map again as one range.
    pub expandable_reusable_bytes: u64,
    /// The device's capacity, when known from elsewhere (NVML); snapshots do not carry it.
    pub device_total_bytes: Option<u64>,
    pub oom: Option<OomFacts>,
    /// Leak candidates, largest growth first.
    pub leaks: Vec<LeakFacts>,
}

/// Runs every snapshot rule; the root cause comes first.
pub fn diagnose(facts: &MemoryFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(oom) = &facts.oom {
        let primary = oom_leak::check(facts, oom)
            .or_else(|| oom_other_process::check(facts, oom))
            .or_else(|| oom_fragmentation::check(facts, oom))
            .or_else(|| oom_capacity::check(facts, oom))
            .or_else(|| oom_unexplained::check(facts, oom));
        let leak_is_primary = primary.as_ref().is_some_and(|f| f.code.0 == oom_leak::CODE);
        out.extend(primary);
        if !leak_is_primary {
            out.extend(leak::check(facts));
        }
    } else {
        out.extend(leak::check(facts));
        out.extend(fragmentation_risk::check(facts));
    }
    out
}

/// Bytes as torch's OOM message prints them (`12.00 GiB`, `424.00 MiB`), so a finding can
/// be compared with the error text directly.
pub fn torch_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes <= 1024 {
        format!("{bytes} bytes")
    } else if b <= KIB * KIB {
        format!("{:.2} KiB", b / KIB)
    } else if b <= KIB * KIB * KIB {
        format!("{:.2} MiB", b / (KIB * KIB))
    } else {
        format!("{:.2} GiB", b / (KIB * KIB * KIB))
    }
}

/// The evidence line every OOM finding carries.
fn oom_evidence(facts: &MemoryFacts, oom: &OomFacts) -> Evidence {
    let free = oom
        .device_free_bytes
        .map_or_else(|| "unknown".to_owned(), torch_bytes);
    let mut values = std::collections::BTreeMap::new();
    values.insert("requested_bytes".into(), oom.requested_bytes as f64);
    if let Some(f) = oom.device_free_bytes {
        values.insert("device_free_bytes".into(), f as f64);
    }
    values.insert("allocated_bytes".into(), oom.allocated_bytes as f64);
    values.insert("reserved_bytes".into(), oom.reserved_bytes as f64);
    values.insert("cached_free_bytes".into(), oom.cached_free_bytes() as f64);
    values.insert(
        "largest_free_block_bytes".into(),
        oom.largest_free_block_bytes as f64,
    );
    let at = oom
        .site
        .as_deref()
        .map(|s| format!(" at {s}"))
        .unwrap_or_default();
    Evidence {
        source: facts.source.clone(),
        line: None,
        text: format!(
            "oom{at}: asked {}; free on the device {free}; allocated {}; reserved but unallocated {}; largest free block {}",
            torch_bytes(oom.requested_bytes),
            torch_bytes(oom.allocated_bytes),
            torch_bytes(oom.cached_free_bytes()),
            torch_bytes(oom.largest_free_block_bytes),
        ),
        values,
    }
}

fn leak_evidence(facts: &MemoryFacts, leak: &LeakFacts) -> Evidence {
    let mut values = std::collections::BTreeMap::new();
    values.insert("growth_bytes".into(), leak.growth_bytes as f64);
    values.insert("live_bytes".into(), leak.live_bytes as f64);
    values.insert("live_allocations".into(), leak.live_allocations as f64);
    Evidence {
        source: facts.source.clone(),
        line: None,
        text: format!(
            "{}: +{} over the recording, {} in {} allocations still alive, {} frees",
            leak.site,
            torch_bytes(leak.growth_bytes),
            torch_bytes(leak.live_bytes),
            leak.live_allocations,
            leak.frees
        ),
        values,
    }
}

fn with_gpu(f: Finding, facts: &MemoryFacts) -> Finding {
    match facts.gpu {
        Some(g) => f.on_gpu(g),
        None => f,
    }
}

/// The remedies every leak finding offers.
fn leak_remedies(f: Finding, site: &str) -> Finding {
    f.with_remedy(
        format!("Find what keeps the tensors from {site} alive (a list of outputs, `total += loss` without `.item()`, a cache keyed by step)"),
        None,
        Some("accumulate Python numbers (`loss.item()`), `.detach()` what you log, clear lists each epoch".into()),
    )
    .with_remedy(
        "Take two snapshots a few hundred steps apart and compare them",
        Some("gpu-doctor snapshot diff before.pickle after.pickle".into()),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::Cause;

    fn gib(x: f64) -> u64 {
        (x * 1024.0 * 1024.0 * 1024.0) as u64
    }

    /// The numbers of the real H200 fragmentation OOM (`frag-oom-real`).
    fn frag_oom() -> MemoryFacts {
        MemoryFacts {
            source: "frag-oom-real.pickle".into(),
            allocated_bytes: 81_159_782_400,
            reserved_bytes: 138_512_695_296,
            stranded_free_bytes: 57_352_912_896,
            largest_free_block_bytes: 444_596_224,
            expandable_reusable_bytes: 56_811_847_680,
            oom: Some(OomFacts {
                requested_bytes: 12_884_901_888,
                device_free_bytes: Some(11_044_782_080),
                allocated_bytes: 81_159_782_400,
                reserved_bytes: 138_512_695_296,
                largest_free_block_bytes: 444_596_224,
                site: Some("train.py:113 in <module>".into()),
            }),
            ..MemoryFacts::default()
        }
    }

    #[test]
    fn fragmentation_oom_is_fragmentation_with_expandable_segments_first() {
        let f = diagnose(&frag_oom());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].cause, Cause::OomFragmentation);
        assert_eq!(f[0].code.0, "GD550");
        assert_eq!(
            f[0].remedies[0].command.as_deref(),
            Some("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
        );
        assert!(f[0].message.contains("53.41 GiB"), "{}", f[0].message);
    }

    #[test]
    fn request_beyond_free_plus_cache_is_capacity() {
        let mut facts = frag_oom();
        if let Some(o) = facts.oom.as_mut() {
            o.requested_bytes = gib(80.0);
        }
        let f = diagnose(&facts);
        assert_eq!(f[0].cause, Cause::OomCapacity);
        assert_eq!(f[0].code.0, "GD551");
    }

    #[test]
    fn growing_site_makes_the_oom_a_leak() {
        let mut facts = frag_oom();
        if let Some(o) = facts.oom.as_mut() {
            o.requested_bytes = gib(80.0);
        }
        facts.leaks.push(LeakFacts {
            site: "train.py:25 in <module>".into(),
            growth_bytes: gib(40.0),
            live_bytes: gib(40.0),
            live_allocations: 400,
            frees: 0,
        });
        let f = diagnose(&facts);
        assert_eq!(f[0].cause, Cause::OomLeak);
        assert_eq!(f.len(), 1, "the leak is the primary finding, not repeated");
    }

    #[test]
    fn memory_held_elsewhere_is_another_process() {
        let mut facts = frag_oom();
        facts.device_total_bytes = Some(gib(139.8));
        if let Some(o) = facts.oom.as_mut() {
            o.requested_bytes = gib(20.0);
            o.device_free_bytes = Some(gib(1.0));
            o.reserved_bytes = gib(30.0);
            o.allocated_bytes = gib(29.0);
        }
        let f = diagnose(&facts);
        assert_eq!(f[0].cause, Cause::OomOtherProcess);
    }

    #[test]
    fn no_oom_and_little_stranded_memory_is_quiet() {
        let facts = MemoryFacts {
            allocated_bytes: gib(1.5),
            reserved_bytes: gib(7.5),
            stranded_free_bytes: gib(1.4),
            ..MemoryFacts::default()
        };
        assert!(diagnose(&facts).is_empty());
        let risky = MemoryFacts {
            stranded_free_bytes: gib(4.0),
            ..facts
        };
        let f = diagnose(&risky);
        assert_eq!(f[0].code.0, "GD555");
        assert!(
            diagnose(&MemoryFacts {
                expandable_segments: true,
                ..risky
            })
            .is_empty()
        );
    }

    #[test]
    fn torch_bytes_matches_pytorch() {
        assert_eq!(torch_bytes(12 * (1 << 30)), "12.00 GiB");
        assert_eq!(torch_bytes(1 << 30), "1024.00 MiB");
        assert_eq!(torch_bytes(512), "512 bytes");
    }

    #[test]
    fn every_rule_is_documented() {
        for code in [
            "GD550", "GD551", "GD552", "GD553", "GD554", "GD555", "GD556", "GD557",
        ] {
            assert!(RULES.iter().any(|r| r.code == code), "{code}");
        }
    }
}
