//! Environment probes behind a Probe trait, producing EnvFacts.
