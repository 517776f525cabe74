//! Streaming scanner for job output, tracebacks and kernel logs.
