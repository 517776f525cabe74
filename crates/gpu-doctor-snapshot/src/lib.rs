//! Reader and analyses for PyTorch CUDA memory snapshots.
