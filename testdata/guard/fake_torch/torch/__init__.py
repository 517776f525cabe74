"""A stand-in for the torch functions gpu-doctor's hook calls for a memory budget, so
`gpu-doctor run --memory-limit` is tested end to end without torch or a GPU.

Like PyTorch, CUDA initialises lazily: calls queued with torch.cuda._lazy_call run at
torch.cuda.init(). set_per_process_memory_fraction records what it was given (PyTorch checks
the same range: 0 <= fraction <= 1)."""

__version__ = "0.0-fake-budget"

fractions = []


class _C:
    @staticmethod
    def _cuda_attach_out_of_memory_observer(fn):
        pass


class _Memory:
    @staticmethod
    def _record_memory_history(enabled="all", max_entries=None, stacks="all", **_):
        pass


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
        if _Cuda._initialized:
            return
        _Cuda._initialized = True
        for fn in _Cuda._queued:
            fn()

    @staticmethod
    def device_count():
        return 2

    @staticmethod
    def set_per_process_memory_fraction(fraction, device=None):
        if not isinstance(fraction, float) or not 0 <= fraction <= 1:
            raise ValueError("invalid fraction")
        fractions.append((round(fraction, 3), device))


cuda = _Cuda
