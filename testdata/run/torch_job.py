"""A job that uses (the stand-in) torch and hits a fragmentation OOM unless expandable
segments are on. Prints what the hook set up, so the test sees it."""
import torch

x = torch.empty(12 * 2**30)
print("history:", torch.cuda.memory.history, flush=True)
print("allocated 12 GiB", flush=True)
