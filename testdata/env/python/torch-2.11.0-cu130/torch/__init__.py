"""A stand-in for torch 2.11.0+cu130 (gpu-doctor tests) on a machine where CUDA works: one
H200, and a computation that gives the right answer. Each import appends a line to the file
named by GPU_DOCTOR_TEST_IMPORT_LOG, so a test can count how often `check` imported torch."""

import os

__version__ = "2.11.0+cu130"

_log = os.environ.get("GPU_DOCTOR_TEST_IMPORT_LOG")
if _log:
    with open(_log, "a") as f:
        f.write("import\n")


class version:
    cuda = "13.0"
    hip = None
    debug = False


class _C:
    @staticmethod
    def _cuda_getArchFlags():
        return "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"


class backends:
    class cudnn:
        @staticmethod
        def version():
            return 91900


class _Scalar:
    def __init__(self, v):
        self.v = v

    def item(self):
        return self.v


class _Tensor:
    def __init__(self, values):
        self.values = values

    def __add__(self, other):
        return _Tensor([v + other for v in self.values])

    def sum(self):
        return _Scalar(float(sum(self.values)))


def ones(n, device=None):
    return _Tensor([1.0] * n)


class cuda:
    class nccl:
        @staticmethod
        def version():
            return (2, 28, 9)

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def get_device_capability(i):
        return (9, 0)

    @staticmethod
    def get_device_name(i):
        return "NVIDIA H200"
