"""Holds GPU memory for the recordings: `hold.py SECONDS GIB` keeps GIB allocated;
`hold.py SECONDS GIB --grow` allocates 1 GiB more every half second up to GIB, then frees
everything and exits."""
import sys
import time

import torch

seconds, gib = float(sys.argv[1]), int(sys.argv[2])
grow = "--grow" in sys.argv
blocks = []
if grow:
    for _ in range(gib):
        blocks.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
        torch.cuda.synchronize()
        print(f"allocated {len(blocks)} GiB", flush=True)
        time.sleep(0.5)
    del blocks
    torch.cuda.empty_cache()
    time.sleep(1.0)
else:
    blocks.append(torch.empty(gib << 30, dtype=torch.uint8, device="cuda"))
    torch.cuda.synchronize()
    print(f"holding {gib} GiB", flush=True)
    time.sleep(seconds)
