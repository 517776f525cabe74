#!/usr/bin/env python3
"""Rewrite the generated tables of the corpus README from the cases and the corpus test.

The corpus README (crates/gpu-doctor-scan/tests/corpus/README.md) carries three things
that must follow the cases: the cause-by-framework counts, the score sentence and the
per-cause table. Hand-editing them drifted (a count of 999 under a heading of 1002), so
this script derives all three:

    cargo test --release -p gpu-doctor-rules --test corpus -- --nocapture > /tmp/corpus.txt
    scripts/corpus-tables.py /tmp/corpus.txt

It reads the case headers for the counts and the test's printed confusion table for the
scores, and rewrites the README in place. The per-round table ("right now" per set) is
printed, not written, because its rows carry prose the script cannot know.
"""

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "crates/gpu-doctor-scan/tests/corpus"
README = CORPUS / "README.md"
FRAMEWORKS = ["pytorch", "tensorflow", "jax", "cupy", "cuda", "nccl", "kernel", "other"]
CAUSES = [
    "oom_capacity", "oom_fragmentation", "oom_other_process", "oom_leak",
    "illegal_access", "device_assert", "env_driver_too_old", "env_torch_cpu_build",
    "env_arch_unsupported", "env_lib_missing", "env_nvml_mismatch", "env_no_driver",
    "env_visible_devices", "cudnn_error", "cublas_error", "nccl_error", "hw_xid",
    "hw_thermal_power", "other",
]


def header(path):
    fields = {}
    for line in path.read_text(errors="replace").splitlines():
        if line == "---":
            break
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def counts_table(cases):
    cells = Counter((h["cause"], h["framework"]) for h in cases)
    rows = ["| cause | " + " | ".join(FRAMEWORKS) + " | total |",
            "|---|" + "---:|" * (len(FRAMEWORKS) + 1)]
    for cause in CAUSES:
        row = [str(cells[(cause, f)] or "") for f in FRAMEWORKS]
        total = sum(cells[(cause, f)] for f in FRAMEWORKS)
        rows.append(f"| `{cause}` | " + " | ".join(row) + f" | {total} |")
    col = [str(sum(cells[(c, f)] for c in CAUSES)) for f in FRAMEWORKS]
    rows.append("| **total** | " + " | ".join(col) + f" | {len(cases)} |")
    return "\n".join(rows)


def parse_test_output(text):
    score = re.search(r"corpus: (\d+)/(\d+) right = ([\d.]+)%.*floor ([\d.]+)%", text)
    if not score:
        sys.exit("no score line in the test output (run the test with --nocapture)")
    table = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+(\d+)\s+(\d+)\s*(.*)$", line)
        if m and m.group(1) in CAUSES:
            table[m.group(1)] = (int(m.group(3)), int(m.group(2)), m.group(4).strip())
    misses = [line.split()[0] for line in text.splitlines()
              if re.match(r"^\s+\S+\.txt\s+expected", line)]
    return score.groups(), table, misses


def cause_table(table):
    rows = ["| cause | right | misses predicted as |", "|---|---:|---|"]
    for cause in sorted(table):
        right, n, wrong = table[cause]
        wrong = re.sub(r"(\w+) \((\d+)\)",
                       lambda m: m.group(0) if m.group(1) == "none"
                       else f"`{m.group(1)}` ({m.group(2)})", wrong)
        rows.append(f"| `{cause}` | {right}/{n} | {wrong} |")
    return "\n".join(rows)


def replace_table(text, first_row, new):
    """Swap the Markdown table that starts with `first_row` for `new`."""
    start = text.index(first_row)
    end = text.index("\n\n", start)
    return text[:start] + new + text[end:]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1]).read_text()
    (right, total, pct, floor), table, misses = parse_test_output(out)
    cases = [header(p) for p in sorted((CORPUS / "cases").glob("[0-9]*.txt"))]

    text = README.read_text()
    text = re.sub(r"Per cause and framework \(\d+ cases\):",
                  f"Per cause and framework ({len(cases)} cases):", text)
    text = replace_table(text, "| cause | pytorch |", counts_table(cases))
    text = replace_table(text, "| cause | right | misses predicted as |", cause_table(table))
    text = re.sub(r"\(the \d+ above plus the (\d+) real H200 outputs",
                  f"(the {len(cases)} above plus the \\1 real H200 outputs", text)
    text = re.sub(r"At the last change: \*\*\d+ of \d+ right \([\d.]+ %\)\*\*",
                  f"At the last change: **{right} of {total} right ({pct} %)**", text)
    text = re.sub(r"The test fails below its floor \([\d.]+ %\)",
                  f"The test fails below its floor ({floor} %)", text)
    README.write_text(text)

    # The per-round "right now" column, for the hand-kept table.
    rounds = []
    sampling = CORPUS / "sampling-2026-11-30"
    for log in [sampling / "MAPPING.txt", *sampling.glob("round*/MAPPING.txt")]:
        numbers = [int(n) for n in re.findall(r"-> (\d+)-", log.read_text())]
        if numbers:
            name = "round1" if log.parent == sampling else log.parent.name
            rounds.append((name, min(numbers), max(numbers)))
    missed = Counter()
    for name in misses:
        if name[0].isdigit():
            number = int(name.split("-")[0])
            for rnd, lo, hi in rounds:
                if lo <= number <= hi:
                    missed[rnd] += 1
    for rnd, lo, hi in sorted(rounds, key=lambda r: r[1]):
        size = len([p for p in (CORPUS / "cases").glob("[0-9]*.txt")
                    if lo <= int(p.name.split("-")[0]) <= hi])
        print(f"{rnd} ({lo}-{hi}): {size - missed[rnd]}/{size}")
    print(f"score {right}/{total} = {pct} %, floor {floor} %")


if __name__ == "__main__":
    main()
