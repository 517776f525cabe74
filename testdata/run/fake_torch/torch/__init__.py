"""A stand-in for the few torch CUDA-memory functions gpu-doctor's hook uses, so the hook is
tested end to end on a machine without torch or a GPU. It behaves like PyTorch's caching
allocator in one situation only: the fragmentation OOM of testdata/h200/err-frag-oom-real.txt
(138.5 GB reserved, 81.2 GB allocated, 12 GiB asked), which expandable segments avoid.

Only what the hook touches is here: torch.cuda._lazy_call, torch.cuda.memory_stats,
torch.cuda.memory._record_memory_history / _snapshot, torch._C._cuda_attach_out_of_memory_observer,
and torch.OutOfMemoryError."""

import os

__version__ = "0.0-fake"

RESERVED = 138_512_695_296
ALLOCATED = 81_159_782_400


class OutOfMemoryError(RuntimeError):
    pass


OutOfMemoryError.__module__ = "torch"


def _expandable():
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") + os.environ.get(
        "PYTORCH_ALLOC_CONF", ""
    )
    return "expandable_segments:True" in conf


class _C:
    observers = []

    @staticmethod
    def _cuda_attach_out_of_memory_observer(fn):
        _C.observers.append(fn)


class _Memory:
    history = None

    @staticmethod
    def _record_memory_history(enabled="all", max_entries=None, stacks="all", **_):
        _Memory.history = {"max_entries": max_entries, "stacks": stacks}

    @staticmethod
    def _snapshot():
        return {
            "segments": [
                {
                    "device": 0,
                    "address": 1 << 40,
                    "total_size": 1 << 30,
                    "allocated_size": 600 << 20,
                    "active_size": 600 << 20,
                    "requested_size": 600 << 20,
                    "stream": 0,
                    "segment_type": "large",
                    "blocks": [],
                }
            ],
            "device_traces": [[]],
            "allocator_settings": {"expandable_segments": _expandable()},
        }


class _Cuda:
    memory = _Memory
    _queued = []
    _initialized = False

    @staticmethod
    def _lazy_call(fn):
        if _Cuda._initialized:
            fn()
        else:
            _Cuda._queued.append(fn)

    @staticmethod
    def init():
        if not _Cuda._initialized:
            _Cuda._initialized = True
            for fn in _Cuda._queued:
                fn()

    @staticmethod
    def memory_stats(device=None):
        return {
            "allocated_bytes.all.current": ALLOCATED,
            "reserved_bytes.all.current": RESERVED,
            "inactive_split_bytes.all.current": 2_000_000_000,
            "num_ooms": 1,
        }


cuda = _Cuda


def empty(nbytes):
    """Allocates on the (pretend) GPU: fails like the real fragmented allocator unless
    expandable segments are on."""
    cuda.init()
    if _expandable():
        return bytearray(0)
    for fn in _C.observers:
        fn(0, nbytes, ALLOCATED, 10 << 30)
    raise OutOfMemoryError(
        "CUDA out of memory. Tried to allocate %.2f GiB." % (nbytes / 2**30)
    )
