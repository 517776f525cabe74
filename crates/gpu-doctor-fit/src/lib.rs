//! Predicts the peak GPU memory of training and inference, and picks GPUs that fit.
