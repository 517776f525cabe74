//! Pure diagnosis: facts in, findings out, one file per rule, knowledge tables as data.
pub mod history;
