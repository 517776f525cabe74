//! Runs compute-sanitizer and condenses its reports into a few findings.
