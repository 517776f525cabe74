//! [`Reading`]: a metric that may be absent, and why.
//!
//! Monitoring tools that write an unsupported metric as `0` or `-1` make a healthy GPU look
//! broken and a broken one look healthy. A `Reading` keeps the reason instead. In JSON a
//! value is written as itself, and an absent one as `{"absent": "unsupported"}`,
//! `{"absent": "no_permission"}` or `{"absent": "failed", "error": "..."}`, so a script can
//! never mistake absence for a number.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A metric that may be absent. Absence is never written as 0 or -1.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Reading<T> {
    Value(T),
    /// The driver or the device does not have this metric.
    #[default]
    Unsupported,
    /// The metric exists but this user may not read it.
    NoPermission,
    /// Reading it failed; the driver's words are kept.
    Failed(String),
}

impl<T> Reading<T> {
    /// The value, if there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Reading::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The value by copy, if there is one.
    pub fn get(&self) -> Option<T>
    where
        T: Copy,
    {
        self.value().copied()
    }

    pub fn is_value(&self) -> bool {
        matches!(self, Reading::Value(_))
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reading<U> {
        match self {
            Reading::Value(v) => Reading::Value(f(v)),
            Reading::Unsupported => Reading::Unsupported,
            Reading::NoPermission => Reading::NoPermission,
            Reading::Failed(e) => Reading::Failed(e),
        }
    }

    pub fn as_ref(&self) -> Reading<&T> {
        match self {
            Reading::Value(v) => Reading::Value(v),
            Reading::Unsupported => Reading::Unsupported,
            Reading::NoPermission => Reading::NoPermission,
            Reading::Failed(e) => Reading::Failed(e.clone()),
        }
    }

    /// Why the value is absent, in a word (`None` when present).
    pub fn absence(&self) -> Option<&str> {
        match self {
            Reading::Value(_) => None,
            Reading::Unsupported => Some("unsupported"),
            Reading::NoPermission => Some("no permission"),
            Reading::Failed(e) => Some(e),
        }
    }
}

impl<T> From<Option<T>> for Reading<T> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Reading::Unsupported, Reading::Value)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "absent", rename_all = "snake_case", deny_unknown_fields)]
enum Absent {
    Unsupported,
    NoPermission,
    Failed { error: String },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Wire<T> {
    Absent(Absent),
    Value(T),
}

impl<T: Serialize> Serialize for Reading<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Reading::Value(v) => v.serialize(serializer),
            Reading::Unsupported => Absent::Unsupported.serialize(serializer),
            Reading::NoPermission => Absent::NoPermission.serialize(serializer),
            Reading::Failed(error) => Absent::Failed {
                error: error.clone(),
            }
            .serialize(serializer),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Reading<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Wire::<T>::deserialize(deserializer)? {
            Wire::Value(v) => Reading::Value(v),
            Wire::Absent(Absent::Unsupported) => Reading::Unsupported,
            Wire::Absent(Absent::NoPermission) => Reading::NoPermission,
            Wire::Absent(Absent::Failed { error }) => Reading::Failed(error),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_variant() {
        for r in [
            Reading::Value(42u64),
            Reading::Unsupported,
            Reading::NoPermission,
            Reading::Failed("GPU is lost".into()),
        ] {
            let json = serde_json::to_string(&r).unwrap();
            let back: Reading<u64> = serde_json::from_str(&json).unwrap();
            assert_eq!(back, r, "{json}");
        }
    }

    #[test]
    fn absence_is_never_a_number() {
        let json = serde_json::to_string(&Reading::<u64>::Unsupported).unwrap();
        assert_eq!(json, r#"{"absent":"unsupported"}"#);
        assert_eq!(serde_json::to_string(&Reading::Value(0u64)).unwrap(), "0");
    }
}
