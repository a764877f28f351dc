//! Workspace settings from `mem7.yaml`. Every setting is optional.

use serde::Deserialize;

/// Default limit on a value's size.
pub const DEFAULT_MAX_VALUE_BYTES: usize = 64 * 1024;

/// Settings read from `mem7.yaml` (unknown fields are ignored, for forward compatibility).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Largest value accepted by `store`, in bytes (default 65536).
    pub max_value_bytes: Option<usize>,
}

impl Config {
    /// Parses `mem7.yaml`'s text.
    pub fn parse(text: &str) -> Result<Config, String> {
        crate::yaml::config(text)
    }

    /// The effective value-size limit.
    pub fn max_value_bytes(&self) -> usize {
        self.max_value_bytes.unwrap_or(DEFAULT_MAX_VALUE_BYTES)
    }
}
