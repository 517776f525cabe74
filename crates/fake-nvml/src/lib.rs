//! A stand-in libnvidia-ml.so (see Cargo.toml).
