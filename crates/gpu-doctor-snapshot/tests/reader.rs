//! The reader on real H200 snapshots, on every protocol and schema variant, and on hostile
//! input.

use gpu_doctor_snapshot::{
    Action, AnalyzeOptions, BlockState, Limits, SnapshotError, analyze, read_snapshot,
};
use std::path::PathBuf;

fn path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn read(rel: &str) -> Result<gpu_doctor_snapshot::Snapshot, SnapshotError> {
    gpu_doctor_snapshot::read_file(&path(rel), &mut |_| {})
}

/// Totals Python's `pickle.load` gives for the real snapshots (sum of segment fields, trace
/// lengths, block states), so the typed reader is checked against the reference unpickler.
#[test]
fn real_snapshots_match_python_pickle() {
    // file, segments, trace entries, reserved, allocated, active blocks, inactive blocks
    let cases = [
        (
            "h200/frag.pickle",
            67,
            384,
            72_081_211_392u64,
            69_441_945_600u64,
            100,
            67,
        ),
        (
            "h200/frag-oom-real.pickle",
            129,
            646,
            138_512_695_296,
            81_159_782_400,
            129,
            129,
        ),
        (
            "h200/leak.pickle",
            124,
            846,
            2_132_803_584,
            2_113_959_936,
            182,
            2,
        ),
        (
            "h200/gpt2-train-stacks-all.pickle",
            130,
            22_064,
            8_084_520_960,
            1_567_775_744,
            454,
            151,
        ),
    ];
    for (file, segs, entries, reserved, allocated, active, inactive) in cases {
        let s = read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(s.protocol, 4, "{file}");
        assert_eq!(s.segments.len(), segs, "{file}");
        assert_eq!(
            s.device_traces.iter().map(Vec::len).sum::<usize>(),
            entries,
            "{file}"
        );
        assert_eq!(
            s.segments.iter().map(|x| x.total_size).sum::<u64>(),
            reserved,
            "{file}"
        );
        assert_eq!(
            s.segments.iter().map(|x| x.allocated_size).sum::<u64>(),
            allocated,
            "{file}"
        );
        let count = |st: BlockState| {
            s.segments
                .iter()
                .flat_map(|x| &x.blocks)
                .filter(|b| b.state == st)
                .count()
        };
        assert_eq!(count(BlockState::ActiveAllocated), active, "{file}");
        assert_eq!(count(BlockState::Inactive), inactive, "{file}");
        let settings = s.allocator_settings.as_ref().expect("allocator_settings");
        assert!(!settings.expandable_segments);
        assert_eq!(settings.max_split_size, None, "-1 means unlimited");
        assert_eq!(settings.alloc_conf.as_deref(), Some(""));
    }
}

#[test]
fn frames_and_stacks_are_interned() {
    let s = read("h200/gpt2-train-stacks-all.pickle").expect("reads");
    // 22 064 trace entries and 605 blocks share 151 distinct stacks of 610 distinct frames.
    assert_eq!(s.frames.len(), 610);
    assert_eq!(s.stacks.len(), 151);
    assert_eq!(s.external_annotations.len(), 20);
    assert_eq!(
        s.external_annotations[0].fields,
        vec![
            ("stage".to_owned(), "START".to_owned()),
            ("name".to_owned(), "Optimizer.step#AdamW.step".to_owned())
        ]
    );
    let oom = read("h200/frag-oom-real.pickle").expect("reads");
    let e = oom.device_traces[0].last().expect("entries");
    assert_eq!(e.action, Action::Oom);
    assert_eq!(e.size, 12_884_901_888);
    assert_eq!(e.device_free(), Some(11_044_782_080));
    let top = oom.stack(e.stack).next().expect("a frame");
    assert_eq!(
        (top.filename.as_str(), top.line),
        ("/home/user/train.py", 113)
    );
}

#[test]
fn every_protocol_reads_the_same() {
    let reference = read("h200/frag-oom-real.pickle").expect("reads");
    let opts = AnalyzeOptions::default();
    let want = serde_json::to_string(&analyze(&reference, &opts)).expect("json");
    for (p, file) in [
        (2, "snapshots/frag-oom-real.p2.pickle"),
        (3, "snapshots/frag-oom-real.p3.pickle"),
        (5, "snapshots/frag-oom-real.p5.pickle"),
    ] {
        let s = read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(s.protocol, p);
        assert_eq!(
            serde_json::to_string(&analyze(&s, &opts)).expect("json"),
            want,
            "{file}"
        );
    }
}

#[test]
fn torch_2_0_history_layout() {
    let modern = read("h200/leak.pickle").expect("reads");
    let legacy = read("snapshots/legacy-2.0.pickle").expect("reads");
    assert!(legacy.legacy_history);
    assert!(!modern.legacy_history);
    assert_eq!(legacy.segments.len(), modern.segments.len());
    for (l, m) in legacy.segments.iter().zip(&modern.segments) {
        assert_eq!(l.blocks.len(), m.blocks.len());
        for (lb, mb) in l.blocks.iter().zip(&m.blocks) {
            // Addresses rebuilt from the segment start, sizes and frames from `history`.
            assert_eq!(lb.address, mb.address);
            if mb.state != BlockState::Inactive {
                assert_eq!(lb.requested_size, mb.requested_size);
            }
            let lf: Vec<_> = legacy.stack(lb.stack).collect();
            let mf: Vec<_> = modern.stack(mb.stack).collect();
            assert_eq!(lf, mf);
        }
    }
    assert!(
        legacy.device_traces[0]
            .iter()
            .all(|e| e.time_us().is_none())
    );
    let a = analyze(&legacy, &AnalyzeOptions::default());
    let b = analyze(&modern, &AnalyzeOptions::default());
    assert_eq!(a.allocated_bytes, b.allocated_bytes);
    assert_eq!(a.leak_candidates.len(), b.leak_candidates.len());
}

#[test]
fn bare_segment_list() {
    let s = read("snapshots/bare-segments.pickle").expect("reads");
    assert_eq!(s.segments.len(), 8);
    assert!(s.device_traces.is_empty());
    assert!(s.allocator_settings.is_none());
}

#[test]
fn expandable_segments_and_both_pending_free_spellings() {
    let s = read("snapshots/expandable.pickle").expect("reads");
    assert_eq!(s.protocol, 5);
    assert!(s.segments.iter().all(|x| x.is_expandable));
    let states: Vec<BlockState> = s
        .segments
        .iter()
        .flat_map(|x| &x.blocks)
        .map(|b| b.state)
        .collect();
    assert_eq!(
        states
            .iter()
            .filter(|s| **s == BlockState::ActivePendingFree)
            .count(),
        2,
        "active_pending_free and active_awaiting_free: {states:?}"
    );
    assert_eq!(s.segments[1].stream, 140_000_000_000);
    assert_eq!(s.segments[1].pool_id, (0, 1));
    let actions: Vec<Action> = s.device_traces[0].iter().map(|e| e.action).collect();
    assert!(actions.contains(&Action::SegmentMap) && actions.contains(&Action::SegmentUnmap));
    assert_eq!(
        actions.last(),
        Some(&Action::Other),
        "annotate is kept as other"
    );
    let settings = s.allocator_settings.as_ref().expect("settings");
    assert!(settings.expandable_segments);
    assert!(
        settings
            .entries
            .contains(&("roundup_power2_divisions".into(), "{1: 0, 2: 0}".into())),
        "{:?}",
        settings.entries
    );
    let a = analyze(&s, &AnalyzeOptions::default());
    assert_eq!(a.reserved_bytes, 62 << 20);
    assert_eq!(a.active_bytes, (40 << 20) + 512);
    // Reserved over time follows segment_map/segment_unmap: 80 MiB mapped, 20 unmapped, 2 mapped.
    let reserved: Vec<u64> = a.timeline.iter().map(|p| p.reserved_bytes).collect();
    assert_eq!(reserved.first(), Some(&(80 << 20)));
    assert_eq!(reserved.last(), Some(&(62 << 20)));
}

fn refuse(rel: &str) -> SnapshotError {
    match read(rel) {
        Ok(_) => panic!("{rel} was accepted"),
        Err(e) => e,
    }
}

#[test]
fn hostile_files_are_refused_clearly() {
    let e = refuse("snapshots/evil-global-os-system.pickle");
    assert!(
        matches!(e, SnapshotError::Forbidden { name: "GLOBAL", .. }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "refused opcode GLOBAL at byte 2 (imports `os.system`): a memory snapshot is plain data and never imports or calls code"
    );
    let e = refuse("snapshots/evil-stack-global.pickle");
    assert!(
        e.to_string().contains("STACK_GLOBAL") && e.to_string().contains("posix.system"),
        "{e}"
    );

    let e = refuse("snapshots/evil-deep-nesting.pickle");
    assert!(
        matches!(e, SnapshotError::TooDeep { limit: 64, .. }),
        "{e:?}"
    );

    for file in [
        "snapshots/evil-huge-unicode8.pickle",
        "snapshots/evil-huge-bytes8.pickle",
    ] {
        let e = refuse(file);
        assert!(
            matches!(
                e,
                SnapshotError::LengthBeyondEnd {
                    claimed: 1_099_511_627_776,
                    remaining: 4,
                    ..
                }
            ),
            "{file}: {e:?}"
        );
    }
    // Cut inside the first pickle FRAME: its length prefix reaches past the end.
    let e = refuse("snapshots/evil-truncated.pickle");
    assert!(
        matches!(
            e,
            SnapshotError::LengthBeyondEnd {
                offset: 3,
                remaining: 4989,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.hint().contains("cut short"));
    let bytes = std::fs::read(path("h200/frag.pickle")).expect("fixture");
    let e = read_snapshot(&bytes[..5000], None, Limits::default(), &mut |_| {}).expect_err("cut");
    assert!(
        matches!(e, SnapshotError::Truncated { offset: 5000 }),
        "without a known length: {e:?}"
    );
    let e = refuse("snapshots/protocol0.pickle");
    assert!(matches!(e, SnapshotError::NotPickle(b'(')), "{e:?}");
    for e in [
        refuse("snapshots/evil-truncated.pickle"),
        refuse("snapshots/evil-deep-nesting.pickle"),
    ] {
        assert!(!e.hint().is_empty());
    }
}

fn read_bytes(
    bytes: &[u8],
    limits: Limits,
) -> Result<gpu_doctor_snapshot::Snapshot, SnapshotError> {
    read_snapshot(bytes, Some(bytes.len() as u64), limits, &mut |_| {})
}

#[test]
fn crafted_bytes() {
    let ok = Limits::default();
    assert!(matches!(read_bytes(b"", ok), Err(SnapshotError::Empty)));
    assert!(matches!(
        read_bytes(b"\x80\x06}.", ok),
        Err(SnapshotError::Protocol(6))
    ));
    assert!(matches!(
        read_bytes(b"\x80\x01}.", ok),
        Err(SnapshotError::Protocol(1))
    ));
    // REDUCE, BUILD, INST, OBJ, NEWOBJ are refused on sight.
    for (op, name) in [
        (b'R', "REDUCE"),
        (b'b', "BUILD"),
        (b'i', "INST"),
        (b'o', "OBJ"),
        (0x81, "NEWOBJ"),
    ] {
        match read_bytes(&[0x80, 4, b'N', op, b'.'], ok) {
            Err(SnapshotError::Forbidden {
                name: n, offset: 3, ..
            }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(matches!(
        read_bytes(b"\x80\x04\xff.", ok),
        Err(SnapshotError::UnknownOpcode {
            op: 0xff,
            offset: 2
        })
    ));
    // A memo reference that was never stored, and a pop from an empty stack.
    assert!(matches!(
        read_bytes(b"\x80\x04h\x05.", ok),
        Err(SnapshotError::Malformed { .. })
    ));
    assert!(matches!(
        read_bytes(b"\x80\x040.", ok),
        Err(SnapshotError::Malformed { .. })
    ));
    // A dict without `segments` is not a snapshot; an empty one with segments=[] is.
    assert!(matches!(
        read_bytes(b"\x80\x04}.", ok),
        Err(SnapshotError::NotSnapshot(_))
    ));
    let empty = b"\x80\x04}(\x8c\x08segments]u.";
    let s = read_bytes(empty, ok).expect("empty snapshot");
    assert!(s.segments.is_empty());
    // Over the string cap, and over the memory budget.
    let small = Limits {
        max_string_bytes: 4,
        ..ok
    };
    assert!(matches!(
        read_bytes(b"\x80\x04\x8c\x08segments.", small),
        Err(SnapshotError::TooLarge {
            claimed: 8,
            limit: 4,
            ..
        })
    ));
    let tiny = Limits {
        max_retained_bytes: 1000,
        ..ok
    };
    let many: Vec<u8> = [&b"\x80\x04]("[..], &b"N".repeat(100), b"e."].concat();
    assert!(matches!(
        read_bytes(&many, tiny),
        Err(SnapshotError::MemoryLimit { .. })
    ));
    // Nesting with marks alone.
    let marks: Vec<u8> = [&b"\x80\x04"[..], &b"(".repeat(100)].concat();
    assert!(matches!(
        read_bytes(&marks, ok),
        Err(SnapshotError::TooDeep { .. })
    ));
    // A container taken twice through the memo is refused, not copied.
    let twice = b"\x80\x04]\x94(\x8c\x01a\x8c\x01bu.";
    assert!(read_bytes(twice, ok).is_err());
    let reuse = b"\x80\x04](}\x94(\x8c\x06action\x8c\x05alloce\x94h\x00h\x00a.";
    assert!(matches!(
        read_bytes(reuse, ok),
        Err(SnapshotError::Malformed { .. } | SnapshotError::NotSnapshot(_))
    ));
}

/// Every prefix of a real snapshot is refused cleanly (no panic), and every single-byte
/// corruption of a small one either reads or gives an error.
#[test]
fn prefixes_and_corruptions_never_panic() {
    let bytes = std::fs::read(path("snapshots/expandable.pickle")).expect("fixture");
    for cut in 0..bytes.len() {
        assert!(
            read_bytes(&bytes[..cut], Limits::default()).is_err(),
            "prefix {cut}"
        );
    }
    for i in 0..bytes.len() {
        for x in [0u8, 0x7f, 0xff, b'(', b'e'] {
            let mut b = bytes.clone();
            b[i] = x;
            let _ = read_bytes(&b, Limits::default());
        }
    }
}

#[test]
fn progress_is_reported_for_large_input() {
    let bytes = std::fs::read(path("h200/gpt2-train-stacks-all.pickle")).expect("fixture");
    let mut seen = Vec::new();
    read_snapshot(
        &bytes[..],
        Some(bytes.len() as u64),
        Limits::default(),
        &mut |at| seen.push(at),
    )
    .expect("reads");
    assert!(!seen.is_empty());
    assert!(seen.windows(2).all(|w| w[0] < w[1]));
}

/// A trace of `n` allocations written the way pickle writes one: each entry a memoized dict
/// with its keys and a fresh `"N/A"` string, appended in batches of 1000.
fn long_trace(n: u32) -> Vec<u8> {
    fn text(b: &mut Vec<u8>, s: &str) {
        b.push(0x8c); // SHORT_BINUNICODE
        b.push(u8::try_from(s.len()).unwrap());
        b.extend_from_slice(s.as_bytes());
    }
    let mut b = vec![0x80, 4, b'}', b'('];
    text(&mut b, "device_traces");
    b.extend([b']', b'(', b']', b'(']);
    for i in 0..n {
        b.extend([b'}', 0x94, b'(']);
        text(&mut b, "action");
        text(&mut b, "alloc");
        text(&mut b, "addr");
        b.push(b'J'); // BININT
        b.extend((i * 512).to_le_bytes());
        text(&mut b, "size");
        b.push(b'J');
        b.extend(512u32.to_le_bytes());
        text(&mut b, "compile_context");
        text(&mut b, "N/A");
        b.extend([b'u', 0x94]);
        if (i + 1) % 1000 == 0 {
            b.extend([b'e', b'(']);
        }
    }
    b.extend([b'e', b'e', b'u', b'.']);
    b
}

/// The memory bound counts what the reader holds, not every value the file ever made: a
/// trace whose pickle values add up to far more than the limit still reads when its typed
/// entries fit (the bound once tripped on real 765 MiB snapshots this way), and a limit below
/// what the entries themselves need still trips.
#[test]
fn the_memory_bound_counts_what_is_held() {
    let bytes = long_trace(100_000);
    let fits = Limits {
        max_retained_bytes: 8 << 20,
        ..Limits::default()
    };
    let snap = read_bytes(&bytes, fits).expect("100 000 entries fit in 8 MiB");
    assert_eq!(snap.device_traces[0].len(), 100_000);
    let too_small = Limits {
        max_retained_bytes: 1 << 20,
        ..Limits::default()
    };
    assert!(matches!(
        read_bytes(&bytes, too_small),
        Err(SnapshotError::MemoryLimit { .. })
    ));
}
