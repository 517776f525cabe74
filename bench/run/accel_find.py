"""accelerate's find_executable_batch_size on the same job as validation/run/train.py: one
full-length training step per try, starting at --start, in one process.

Prints `found BATCH tries N seconds S` (S from the start of the script, torch import and CUDA
initialisation included, as gpu-doctor's time includes them for every attempt)."""
import argparse
import time

T0 = time.time()
import torch  # noqa: E402
from accelerate.utils import find_executable_batch_size  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--start", type=int, default=256)
p.add_argument("--seq", type=int, default=65536)
p.add_argument("--factor", type=float, default=None, help="default: accelerate's own (0.9)")
a = p.parse_args()
tries = []


def step(batch_size):
    tries.append(batch_size)
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
    ).to(dev, torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch_size, a.seq, 1024, device=dev, dtype=torch.bfloat16)
    loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    return batch_size


kwargs = {"starting_batch_size": a.start}
if a.factor is not None:
    kwargs["reduce_batch_size_fn"] = lambda: int(tries[-1] * a.factor)
try:
    found = find_executable_batch_size(step, **kwargs)()
except TypeError:
    # An accelerate without reduce_batch_size_fn: its own schedule.
    kwargs.pop("reduce_batch_size_fn", None)
    found = find_executable_batch_size(step, **kwargs)()
print("found %d tries %d seconds %.2f schedule %s" % (found, len(tries), time.time() - T0, tries), flush=True)
