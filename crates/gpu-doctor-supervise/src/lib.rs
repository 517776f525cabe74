//! Runs a job, classifies its failure and decides how to bring it back (pure policy plus a thin process driver).
