# gpu-doctor's Python probe. Run as `python3 probe.py base` (the interpreter, its
# site-packages, installed wheels and which frameworks are importable) or
# `python3 probe.py FRAMEWORK` (one framework in its own interpreter, so the CUDA libraries
# it maps are its own and one slow import does not hold up the others).
# Prints one line: the marker, then JSON. Everything is guarded: a probe never raises.
import json
import os
import sys
import time

MARK = "GPU_DOCTOR_PROBE "
FAMILIES = {
    "cudart": "libcudart.so",
    "cudnn": "libcudnn.so",
    "nccl": "libnccl.so",
    "cublas": "libcublas.so",
    "cuda": "libcuda.so",
    "nvml": "libnvidia-ml.so",
}
FRAMEWORKS = ("torch", "tensorflow", "jax", "cupy")


def short(err):
    text = "%s: %s" % (type(err).__name__, err)
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return (lines[-1] if lines else text)[:500]


def loaded_libraries():
    out = {}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                base = os.path.basename(path)
                for fam, prefix in FAMILIES.items():
                    if base == prefix or base.startswith(prefix + "."):
                        paths = out.setdefault(fam, [])
                        if path not in paths:
                            paths.append(path)
    except OSError:
        pass
    return out


def cc_string(major, minor):
    return "%d.%d" % (major, minor)


def base():
    import importlib.util
    import site
    import sysconfig

    dirs = []
    try:
        dirs.extend(site.getsitepackages())
    except Exception:
        pass
    try:
        dirs.append(site.getusersitepackages())
    except Exception:
        pass
    try:
        dirs.append(sysconfig.get_paths()["purelib"])
    except Exception:
        pass
    seen = []
    for d in dirs:
        if d and os.path.isdir(d) and d not in seen:
            seen.append(d)
    packages = {}
    # What changes when a wheel is installed, upgraded or shadowed: gpu-doctor keeps a
    # framework's probe result only while this stays the same.
    fingerprint = []
    # Reading dist-info folder names is much faster than importlib.metadata on big envs.
    for d in seen:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            if not n.endswith(".dist-info"):
                continue
            stem = n[: -len(".dist-info")]
            if "-" not in stem:
                continue
            name, version = stem.split("-", 1)
            key = name.lower().replace("_", "-")
            if key.startswith(("nvidia-", "torch", "tensorflow", "jax", "cupy", "triton")):
                packages.setdefault(key, version)
                fingerprint.append(stat_line(os.path.join(d, n, "RECORD")))
    present = []
    for fw in FRAMEWORKS:
        try:
            spec = importlib.util.find_spec(fw)
            if spec is not None:
                present.append(fw)
                # Where the import resolves (a folder on sys.path can shadow the wheel).
                fingerprint.append(stat_line(spec.origin or fw))
        except Exception:
            pass
    return {
        "interpreter": {
            "executable": sys.executable,
            "version": sys.version.split()[0],
            "prefix": sys.prefix,
            "venv": sys.prefix != sys.base_prefix,
            "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
            "site_packages": seen,
        },
        "packages": packages,
        "frameworks": present,
        "fingerprint": sorted(fingerprint),
    }


def stat_line(path):
    try:
        st = os.stat(path)
        return "%s %d %d" % (path, st.st_mtime_ns, st.st_size)
    except OSError:
        return "%s missing" % path


def cudnn_string(v):
    # cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 and older major*1000 + minor*100 + patch.
    v = int(v)
    if v >= 90000:
        return "%d.%d.%d" % (v // 10000, (v % 10000) // 100, v % 100)
    return "%d.%d.%d" % (v // 1000, (v % 1000) // 100, v % 100)


def probe_torch(r):
    import warnings

    import torch

    r["version"] = torch.__version__
    r["cuda_build"] = torch.version.cuda
    r["is_cuda_build"] = torch.version.cuda is not None
    if not r["is_cuda_build"]:
        r["cuda_works"] = False
        r["cuda_error"] = "Torch not compiled with CUDA enabled"
        return
    try:
        flags = torch._C._cuda_getArchFlags()
        r["arch_list"] = flags.split() if flags else []
    except Exception:
        pass
    try:
        v = torch.backends.cudnn.version()
        r["cudnn"] = cudnn_string(v) if v else None
    except Exception:
        pass
    try:
        r["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception:
        pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            available = torch.cuda.is_available()
        except Exception as e:
            available = False
            r["cuda_error"] = short(e)
    if not available:
        r["cuda_works"] = False
        if not r.get("cuda_error"):
            msgs = [str(w.message) for w in caught]
            r["cuda_error"] = (msgs[-1].strip().splitlines()[0][:500] if msgs else None)
        if not r.get("cuda_error"):
            try:
                torch.cuda.init()
            except Exception as e:
                r["cuda_error"] = short(e)
        return
    try:
        for i in range(torch.cuda.device_count()):
            major, minor = torch.cuda.get_device_capability(i)
            r["devices"].append({"name": torch.cuda.get_device_name(i), "capability": cc_string(major, minor)})
        x = torch.ones(4, device="cuda")
        r["cuda_works"] = float((x + 1).sum().item()) == 8.0
    except Exception as e:
        r["cuda_works"] = False
        r["cuda_error"] = short(e)


def probe_tensorflow(r):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    r["version"] = tf.__version__
    try:
        info = dict(tf.sysconfig.get_build_info())
    except Exception:
        info = {}
    r["is_cuda_build"] = bool(info.get("is_cuda_build", False))
    r["cuda_build"] = info.get("cuda_version")
    r["cudnn"] = info.get("cudnn_version")
    caps = info.get("cuda_compute_capabilities") or []
    r["arch_list"] = [str(c) for c in caps]
    try:
        gpus = tf.config.list_physical_devices("GPU")
    except Exception as e:
        r["cuda_works"] = False
        r["cuda_error"] = short(e)
        return
    for g in gpus:
        try:
            d = tf.config.experimental.get_device_details(g)
            cc = d.get("compute_capability")
            r["devices"].append({"name": d.get("device_name", g.name), "capability": cc_string(*cc) if cc else None})
        except Exception:
            r["devices"].append({"name": g.name, "capability": None})
    if not gpus:
        r["cuda_works"] = False
        r["cuda_error"] = "TensorFlow sees no GPU" if r["is_cuda_build"] else "TensorFlow was built without CUDA"
        return
    try:
        with tf.device("/GPU:0"):
            r["cuda_works"] = float(tf.reduce_sum(tf.ones([4]) + 1).numpy()) == 8.0
    except Exception as e:
        r["cuda_works"] = False
        r["cuda_error"] = short(e)


def probe_jax(r):
    import jax

    r["version"] = jax.__version__
    try:
        from jax._src.lib import cuda_versions  # present when a CUDA plugin is installed

        if cuda_versions is not None:
            r["is_cuda_build"] = True
            v = cuda_versions.cuda_runtime_get_version()
            r["cuda_build"] = "%d.%d" % (v // 1000, (v % 1000) // 10)
            c = cuda_versions.cudnn_get_version()
            r["cudnn"] = cudnn_string(c) if c else None
        else:
            r["is_cuda_build"] = False
    except Exception:
        r["is_cuda_build"] = None
    try:
        gpus = [d for d in jax.devices() if d.platform == "gpu"]
    except Exception as e:
        gpus = []
        r["cuda_error"] = short(e)
    for d in gpus:
        r["devices"].append({"name": getattr(d, "device_kind", str(d)), "capability": getattr(d, "compute_capability", None)})
    if not gpus:
        r["cuda_works"] = False
        if not r.get("cuda_error"):
            r["cuda_error"] = "JAX sees no GPU (only %s)" % ", ".join(sorted({d.platform for d in jax.devices()}))
        return
    try:
        import jax.numpy as jnp

        x = jax.device_put(jnp.ones(4), gpus[0])
        r["cuda_works"] = float((x + 1).sum()) == 8.0
    except Exception as e:
        r["cuda_works"] = False
        r["cuda_error"] = short(e)


def probe_cupy(r):
    import cupy

    r["version"] = cupy.__version__
    rt = cupy.cuda.runtime
    r["is_cuda_build"] = not getattr(rt, "is_hip", False)
    try:
        v = rt.runtimeGetVersion()
        r["cuda_build"] = "%d.%d" % (v // 1000, (v % 1000) // 10)
    except Exception as e:
        r["cuda_error"] = short(e)
    try:
        v = rt.driverGetVersion()
        r["driver_cuda"] = "%d.%d" % (v // 1000, (v % 1000) // 10) if v else None
    except Exception:
        pass
    try:
        from cupy.cuda import nccl

        r["nccl"] = str(nccl.get_version())
    except Exception:
        pass
    try:
        n = rt.getDeviceCount()
        for i in range(n):
            p = rt.getDeviceProperties(i)
            name = p.get("name", b"")
            name = name.decode() if isinstance(name, bytes) else str(name)
            r["devices"].append({"name": name, "capability": cc_string(p["major"], p["minor"])})
        r["cuda_works"] = float((cupy.ones(4) + 1).sum().get()) == 8.0
    except Exception as e:
        r["cuda_works"] = False
        r["cuda_error"] = short(e)


def framework(name):
    r = {
        "version": None,
        "import_error": None,
        "cuda_build": None,
        "is_cuda_build": None,
        "cudnn": None,
        "nccl": None,
        "arch_list": [],
        "cuda_works": None,
        "cuda_error": None,
        "devices": [],
        "driver_cuda": None,
    }
    start = time.time()
    try:
        globals()["probe_" + name](r)
    except ImportError as e:
        r["import_error"] = short(e)
    except Exception as e:
        if r["version"] is None:
            r["import_error"] = short(e)
        else:
            r["cuda_works"] = False
            r["cuda_error"] = short(e)
    r["loaded_libraries"] = loaded_libraries()
    r["probe_ms"] = int((time.time() - start) * 1000)
    return r


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "base"
    if what == "base":
        out = base()
    elif what in FRAMEWORKS:
        out = framework(what)
    else:
        out = {"error": "unknown probe %r" % what}
    sys.stdout.write(MARK + json.dumps(out) + "\n")
    sys.stdout.flush()


main()
