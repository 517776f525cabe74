"""A stand-in for torch 2.3.0+cu121 (gpu-doctor tests): a CUDA 12.1 build on a driver that
is too old for it, warning the way torch does (torch/cuda/__init__.py, _check_driver)."""

import warnings

__version__ = "2.3.0+cu121"


class version:
    cuda = "12.1"
    hip = None
    debug = False


class _C:
    @staticmethod
    def _cuda_getArchFlags():
        return "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"


class backends:
    class cudnn:
        @staticmethod
        def version():
            return 8902


class cuda:
    class nccl:
        @staticmethod
        def version():
            return (2, 20, 5)

    @staticmethod
    def is_available():
        warnings.warn(
            "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
            "Please update your GPU driver by downloading and installing a new version from the URL: "
            "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install "
            "a PyTorch version that has been compiled with your version of the CUDA driver."
        )
        return False

    @staticmethod
    def init():
        raise RuntimeError("The NVIDIA driver on your system is too old (found version 11040).")
