# gpu-doctor's hook for Python jobs run under `gpu-doctor run`.
#
# `gpu-doctor run` writes this file into the run's folder and puts that folder first on
# PYTHONPATH, so Python imports it at start-up as `sitecustomize`. It:
#   1. chains to any other `sitecustomize` further down the path (Debian's, a site's own), so
#      the job starts exactly as it would without gpu-doctor;
#   2. waits, at no cost, for the job to import torch, and once CUDA is initialised records a
#      bounded allocator history and attaches an out-of-memory observer;
#   3. at an out-of-memory error, writes `memory_stats-<pid>.json` (torch.cuda.memory_stats()
#      and the failed request) and `snapshot-<pid>.pickle` (torch.cuda.memory._dump_snapshot)
#      into GPU_DOCTOR_INCIDENT_DIR, so the diagnosis sees the allocator as it was at the
#      failure and `gpu-doctor snapshot` can analyse it.
#
# It never imports torch itself, and every step is wrapped: a job that does not use torch, or
# a torch without one of these private functions, runs exactly as without the hook.
#
# Environment (set by the supervisor):
#   GPU_DOCTOR_INCIDENT_DIR      where to write (the hook does nothing without it)
#   GPU_DOCTOR_MEMORY_HISTORY    allocator history entries to keep (0 turns history off)
#   GPU_DOCTOR_MAX_SNAPSHOTS     snapshots one process may dump (default 2)
#   GPU_DOCTOR_MEMORY_FRACTION   the job's memory budget as a fraction of each GPU
#                                (`gpu-doctor run --memory-limit`): given to PyTorch's
#                                caching allocator with set_per_process_memory_fraction
#
# Kept modular on purpose: memory budgets (a later issue) register more `_on_cuda_ready`
# callbacks.

import os
import sys


def _chain_to_next_sitecustomize():
    """Imports the next `sitecustomize` on sys.path, the one this file shadows."""
    import importlib

    here = os.path.dirname(os.path.abspath(__file__))
    me = sys.modules.get(__name__)
    try:
        # This folder leaves sys.path for good (it holds nothing else); whatever the chained
        # module adds to sys.path stays.
        sys.path[:] = [
            p for p in sys.path if os.path.abspath(p or os.curdir) != here
        ]
        sys.modules.pop(__name__, None)
        try:
            importlib.import_module("sitecustomize")
        except ImportError as e:
            if getattr(e, "name", None) != "sitecustomize":
                raise
    except Exception:
        # The other sitecustomize failed; Python would print and go on, so do we.
        import traceback

        traceback.print_exc()
    finally:
        if me is not None:
            sys.modules[__name__] = me


_INCIDENT_DIR = os.environ.get("GPU_DOCTOR_INCIDENT_DIR", "")
_state = {"snapshots": 0, "stats_written": False, "torch": None}
_on_cuda_ready = []


def _int_env(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _write_json(path, obj):
    import json

    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def _dump(device=None, requested=None, device_free=None, event="oom"):
    """Writes memory_stats-<pid>.json and, within the budget, snapshot-<pid>.pickle."""
    torch = _state["torch"]
    if torch is None or not _INCIDENT_DIR:
        return
    try:
        import time

        os.makedirs(_INCIDENT_DIR, exist_ok=True)
        pid = os.getpid()
        snapshot_name = None
        snap = None
        try:
            snap = torch.cuda.memory._snapshot()
        except Exception:
            pass
        if snap is not None and _state["snapshots"] < _int_env(
            "GPU_DOCTOR_MAX_SNAPSHOTS", 2
        ):
            try:
                import pickle

                # What torch.cuda.memory._dump_snapshot writes, without taking it twice.
                name = "snapshot-%d.pickle" % pid
                tmp = os.path.join(_INCIDENT_DIR, name + ".tmp")
                with open(tmp, "wb") as f:
                    pickle.dump(snap, f)
                os.replace(tmp, os.path.join(_INCIDENT_DIR, name))
                snapshot_name = name
                _state["snapshots"] += 1
            except Exception:
                pass
        try:
            stats = dict(torch.cuda.memory_stats(device))
        except Exception:
            stats = {}
        conf = os.environ.get("PYTORCH_ALLOC_CONF") or os.environ.get(
            "PYTORCH_CUDA_ALLOC_CONF", ""
        )
        expandable = None
        try:
            settings = (snap or {}).get("allocator_settings") or {}
            if "expandable_segments" in settings:
                expandable = bool(settings["expandable_segments"])
        except Exception:
            pass
        if expandable is None:
            expandable = "expandable_segments:true" in conf.replace(" ", "").lower()
        _write_json(
            os.path.join(_INCIDENT_DIR, "memory_stats-%d.json" % pid),
            {
                "schema_version": 1,
                "event": event,
                "pid": pid,
                "device": device,
                "requested_bytes": requested,
                "device_free_bytes": device_free,
                "time_ms": int(time.time() * 1000),
                "torch_version": getattr(torch, "__version__", None),
                "alloc_conf": conf,
                "expandable_segments": expandable,
                "snapshot": snapshot_name,
                "memory_stats": stats,
            },
        )
        _state["stats_written"] = True
    except Exception:
        pass


def _oom_observer(device, alloc, device_allocated, device_free):
    # Called by the caching allocator just before it raises OutOfMemoryError.
    _dump(device=device, requested=alloc, device_free=device_free)


def _setup_cuda():
    torch = _state["torch"]
    history = _int_env("GPU_DOCTOR_MEMORY_HISTORY", 0)
    if history > 0:
        try:
            # Python stacks only: C++ stacks cost far more per allocation.
            torch.cuda.memory._record_memory_history(
                max_entries=history, stacks="python"
            )
        except TypeError:
            try:
                torch.cuda.memory._record_memory_history(max_entries=history)
            except Exception:
                pass
        except Exception:
            pass
    try:
        torch._C._cuda_attach_out_of_memory_observer(_oom_observer)
    except Exception:
        pass
    for callback in _on_cuda_ready:
        try:
            callback(torch)
        except Exception:
            pass


def _apply_memory_budget(torch):
    """Caps PyTorch's caching allocator at GPU_DOCTOR_MEMORY_FRACTION of every visible GPU,
    so a job over its budget gets an out-of-memory error in its own process instead of
    taking memory its neighbours were promised."""
    try:
        fraction = float(os.environ.get("GPU_DOCTOR_MEMORY_FRACTION", ""))
    except ValueError:
        return
    if not 0.0 < fraction <= 1.0:
        return
    for device in range(torch.cuda.device_count()):
        try:
            torch.cuda.set_per_process_memory_fraction(fraction, device)
        except Exception:
            pass


_on_cuda_ready.append(_apply_memory_budget)


def _on_torch_imported(torch):
    _state["torch"] = torch
    try:
        # Runs at CUDA's lazy initialisation (or now, if it already happened): the allocator
        # exists then, and a job that never touches CUDA pays nothing.
        torch.cuda._lazy_call(_setup_cuda)
    except Exception:
        pass


def _excepthook(previous):
    def hook(exc_type, exc, tb):
        try:
            if (
                not _state["stats_written"]
                and exc_type is not None
                and "OutOfMemoryError" in exc_type.__name__
            ):
                _dump(event="uncaught_oom")
        except Exception:
            pass
        previous(exc_type, exc, tb)

    return hook


def _watch_torch_import():
    import importlib.abc
    import importlib.util

    class _Watcher(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != "torch":
                return None
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            spec = importlib.util.find_spec("torch")
            if spec is None or spec.loader is None or not hasattr(
                spec.loader, "exec_module"
            ):
                return spec
            original = spec.loader.exec_module

            def exec_module(module):
                original(module)
                try:
                    _on_torch_imported(module)
                except Exception:
                    pass

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Watcher())


def _install():
    if not _INCIDENT_DIR:
        return
    if "torch" in sys.modules:
        _on_torch_imported(sys.modules["torch"])
    else:
        _watch_torch_import()
    sys.excepthook = _excepthook(sys.excepthook)


try:
    _install()
except Exception:
    pass
_chain_to_next_sitecustomize()
