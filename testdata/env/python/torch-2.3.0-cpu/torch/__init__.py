"""A stand-in for torch 2.3.0+cpu (gpu-doctor tests): a CPU-only build."""

__version__ = "2.3.0+cpu"


class version:
    cuda = None
    hip = None
    debug = False


class cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def init():
        raise AssertionError("Torch not compiled with CUDA enabled")
