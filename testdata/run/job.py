#!/usr/bin/env python3
"""Stand-in jobs for the `gpu-doctor run` tests: real processes that fail the way real GPU
jobs do, printing the real failure texts captured on an H200 (testdata/h200/err-*.txt), and
exit as those jobs did. No GPU and no torch needed.

    job.py train  --batch-size N [--grad-accum A] [--fits N] [--steps S] [--ckpt-dir D]
                  [--resume PATH] [--oom-after-step K] [--slow-ckpt]
    job.py frag   (fragmentation OOM unless expandable_segments:True is in both variables)
    job.py text   FILE [--marker M]   (print FILE and exit 1; with a marker: only the first time)
    job.py gpu    UUID [--text FILE]  (OOM unless CUDA_VISIBLE_DEVICES is UUID)
    job.py sticky FILE                (print FILE, exit 1; says when CUDA_LAUNCH_BLOCKING=1)
    job.py ignore-term SECONDS        (ignores SIGTERM, sleeps)
    job.py forker PIDFILE             (leaves a grandchild in its group and one outside it)
    job.py abort                      (dies by SIGABRT)
    job.py env                        (prints the variables gpu-doctor may set, exits 0)
"""

import argparse
import os
import signal
import sys
import time
import zipfile

H200 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h200")


def real_text(name):
    """A captured failure: a file of testdata/h200 without the capture harness's trailing
    `rc=N` line, or (a path) a corpus case without its header."""
    path = name if os.sep in name else os.path.join(H200, name)
    with open(path) as f:
        text = f.read()
    if "\n---\n" in text and text.startswith("source:"):
        text = text.split("\n---\n", 1)[1]
    lines = [l for l in text.splitlines() if not l.startswith("rc=")]
    return "\n".join(lines) + "\n"


def fail(text, code=1):
    sys.stdout.flush()
    sys.stderr.write(text)
    sys.stderr.flush()
    sys.exit(code)


def save_checkpoint(path, step, slow=False):
    """Writes a zip archive, as torch.save does. Slow: straight to the final name, in pieces."""
    if not slow:
        tmp = path + ".tmp"
        with zipfile.ZipFile(tmp, "w") as z:
            z.writestr("archive/data.pkl", "step=%d" % step)
        os.replace(tmp, path)
        return
    with zipfile.ZipFile(path + ".whole", "w") as z:
        z.writestr("archive/data.pkl", "step=%d" % step)
    with open(path + ".whole", "rb") as f:
        data = f.read()
    os.remove(path + ".whole")
    with open(path, "wb") as f:
        # Half the file, then the job dies: what a kill in the middle of torch.save leaves.
        f.write(data[: len(data) // 2])
        f.flush()
        time.sleep(0.2)


def train(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=int(os.environ.get("BATCH", "0")))
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--fits", type=int, default=8, help="largest batch that fits")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--ckpt-dir", default=None)
    p.add_argument("--resume", default=None)
    p.add_argument("--oom-after-step", type=int, default=0)
    p.add_argument("--slow-ckpt", action="store_true")
    a = p.parse_args(argv)
    start = 0
    if a.resume:
        with zipfile.ZipFile(a.resume) as z:
            start = int(z.read("archive/data.pkl").decode().split("=")[1])
        print("resumed from %s at step %d" % (a.resume, start), flush=True)
    for step in range(start + 1, a.steps + 1):
        if a.batch_size > a.fits and step > a.oom_after_step:
            if a.slow_ckpt and a.ckpt_dir:
                save_checkpoint(os.path.join(a.ckpt_dir, "step-%d.pt" % step), step, True)
            fail(real_text("err-oom.txt"))
        print(
            "step %d/%d batch %d accum %d" % (step, a.steps, a.batch_size, a.grad_accum),
            flush=True,
        )
        if a.ckpt_dir:
            os.makedirs(a.ckpt_dir, exist_ok=True)
            save_checkpoint(os.path.join(a.ckpt_dir, "step-%d.pt" % step), step)
            # Distinct modification times, so "newest" is well defined on coarse clocks.
            time.sleep(0.02)
    print(
        "done: batch %d accum %d effective %d"
        % (a.batch_size, a.grad_accum, a.batch_size * a.grad_accum),
        flush=True,
    )


def frag(_argv):
    cuda = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    new = os.environ.get("PYTORCH_ALLOC_CONF", "")
    print("PYTORCH_CUDA_ALLOC_CONF=%s" % cuda, flush=True)
    print("PYTORCH_ALLOC_CONF=%s" % new, flush=True)
    if "expandable_segments:True" in cuda and "expandable_segments:True" in new:
        print(real_text("frag-expandable.txt"), end="", flush=True)
        return
    # The real run printed its own numbers first, then the OOM.
    fail(real_text("err-frag-oom-real.txt"))


def text(argv):
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--marker", default=None)
    a = p.parse_args(argv)
    if a.marker:
        if os.path.exists(a.marker):
            print("second run: fine", flush=True)
            return
        open(a.marker, "w").close()
    fail(real_text(a.file))


def gpu(argv):
    p = argparse.ArgumentParser()
    p.add_argument("uuid")
    p.add_argument("--text", default="err-oom.txt")
    a = p.parse_args(argv)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    print("CUDA_VISIBLE_DEVICES=%s" % visible, flush=True)
    if visible != a.uuid:
        fail(real_text(a.text))
    print("running on %s" % visible, flush=True)


def sticky(argv):
    blocking = os.environ.get("CUDA_LAUNCH_BLOCKING") == "1"
    print("CUDA_LAUNCH_BLOCKING=%s" % ("1" if blocking else "unset"), flush=True)
    fail(real_text(argv[0]))


def ignore_term(argv):
    signal.signal(signal.SIGTERM, lambda *_: print("ignoring SIGTERM", flush=True))
    print("ready", flush=True)
    deadline = time.time() + float(argv[0])
    while time.time() < deadline:
        time.sleep(0.05)


def forker(argv):
    pidfile = argv[0]
    pids = []
    for detach in (False, True):
        pid = os.fork()
        if pid == 0:
            if detach:
                os.setsid()  # leaves the job's process group
            # Close the pipes so the test does not depend on them to notice the exit.
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    with open(pidfile, "w") as f:
        f.write(" ".join(str(p) for p in pids))
    print("children %s" % pids, flush=True)
    fail(real_text("err-illegal.txt"), 1)


def abort(_argv):
    print("about to abort", flush=True)
    os.kill(os.getpid(), signal.SIGABRT)
    time.sleep(5)


def env(_argv):
    for k in sorted(os.environ):
        if k.startswith(("PYTORCH_", "CUDA_", "GPU_DOCTOR_", "BATCH")) or k == "PYTHONPATH":
            print("%s=%s" % (k, os.environ[k]), flush=True)


COMMANDS = {
    "train": train,
    "frag": frag,
    "text": text,
    "gpu": gpu,
    "sticky": sticky,
    "ignore-term": ignore_term,
    "forker": forker,
    "abort": abort,
    "env": env,
}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](sys.argv[2:])
