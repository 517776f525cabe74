//! HTML report (being built).
