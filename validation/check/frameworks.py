"""What each framework says about itself, printed as JSON, to cross-check `check`'s probes
(run by validation/check.sh; each framework in its own try block)."""
import json
import time

out = {}
t = time.time()
try:
    import torch

    out["torch"] = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "arch_list": torch.cuda.get_arch_list(),
        "available": torch.cuda.is_available(),
        "devices": [
            [torch.cuda.get_device_name(i), list(torch.cuda.get_device_capability(i))]
            for i in range(torch.cuda.device_count())
        ],
        "nccl": list(torch.cuda.nccl.version()),
        "import_and_query_s": round(time.time() - t, 3),
    }
except Exception as e:  # noqa: BLE001 - recorded, not raised
    out["torch"] = {"error": repr(e)}
for name in ("cupy", "jax", "tensorflow"):
    t = time.time()
    try:
        mod = __import__(name)
        info = {"version": mod.__version__}
        if name == "cupy":
            info["runtime"] = mod.cuda.runtime.runtimeGetVersion()
            info["driver"] = mod.cuda.runtime.driverGetVersion()
        if name == "jax":
            info["devices"] = [str(d) for d in mod.devices()]
        info["seconds"] = round(time.time() - t, 3)
        out[name] = info
    except Exception as e:  # noqa: BLE001
        out[name] = {"error": repr(e)}
print(json.dumps(out, indent=2))
