//! Every use of `serde_yaml` lives here, so the YAML library can be replaced without
//! touching the entry format's canonical bytes (which never come from a serializer).

use std::collections::BTreeMap;

use super::FieldValueExport as FieldValue;

/// Reads a hand-written envelope as a YAML mapping of scalars and lists of scalars.
pub(crate) fn envelope_pairs(text: &str) -> Result<Vec<(String, FieldValue)>, String> {
    let map: BTreeMap<String, serde_yaml::Value> =
        serde_yaml::from_str(text).map_err(|e| format!("the envelope is not valid YAML: {e}"))?;
    let mut out = Vec::with_capacity(map.len());
    for (name, value) in map {
        let value = match value {
            serde_yaml::Value::Sequence(items) => {
                FieldValue::List(items.iter().filter_map(scalar).collect())
            }
            other => match scalar(&other) {
                Some(s) => FieldValue::Scalar(s),
                None => {
                    return Err(format!(
                        "the envelope field `{name}` must be a single value or a list"
                    ));
                }
            },
        };
        out.push((name, value));
    }
    Ok(out)
}

fn scalar(value: &serde_yaml::Value) -> Option<String> {
    match value {
        serde_yaml::Value::String(s) => Some(s.clone()),
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        serde_yaml::Value::Bool(b) => Some(b.to_string()),
        serde_yaml::Value::Null => Some(String::new()),
        _ => None,
    }
}

/// Parses `mem7.yaml` into settings.
pub(crate) fn config<T: serde::de::DeserializeOwned + Default>(text: &str) -> Result<T, String> {
    if text.trim().is_empty() {
        return Ok(T::default());
    }
    serde_yaml::from_str(text).map_err(|e| e.to_string())
}

/// What is wrong with a frontmatter, and the 1-based line within it when known.
pub(crate) type FrontmatterError = (String, Option<usize>);

/// Reads a note's YAML frontmatter: a mapping whose scalar and list-of-scalar values are
/// returned (other values, such as nested mappings, are left out). The error says what
/// is wrong and, when known, the 1-based line within `text`.
pub(crate) fn frontmatter(text: &str) -> Result<Vec<(String, FieldValue)>, FrontmatterError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let line = e.location().map(|l| l.line());
        let message = e.to_string();
        // The location is given separately; keep the message short.
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_string();
        (
            format!("the frontmatter is not valid YAML: {message}"),
            line,
        )
    })?;
    let serde_yaml::Value::Mapping(map) = value else {
        return Err((
            "the frontmatter is not a YAML mapping of `name: value` lines".into(),
            Some(1),
        ));
    };
    let mut out = Vec::with_capacity(map.len());
    for (name, value) in map {
        let Some(name) = scalar(&name) else { continue };
        let value = match value {
            serde_yaml::Value::Sequence(items) => {
                FieldValue::List(items.iter().filter_map(scalar).collect())
            }
            other => match scalar(&other) {
                Some(s) => FieldValue::Scalar(s),
                None => continue,
            },
        };
        out.push((name, value));
    }
    Ok(out)
}
