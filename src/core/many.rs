//! Keys of many values (`many:` in mem7.yaml): every value a key holds at a read is an
//! answer, and reads show a key's values newest first. A ranked list (a search, the
//! context block for a query) keeps its ranking between keys; only the places one key's
//! values take are refilled newest first.

use super::Version;

/// Reorders `items` so that the values of each key, in the places they already hold,
/// run newest first (later valid start, then later recorded). Items of keys with one
/// value do not move.
pub fn newest_first_within_keys<T>(items: &mut [T], version: impl Fn(&T) -> &Version) {
    let mut done: Vec<String> = Vec::new();
    for i in 0..items.len() {
        let key = version(&items[i]).key.clone();
        if done.contains(&key) {
            continue;
        }
        let places: Vec<usize> = (i..items.len())
            .filter(|&j| version(&items[j]).key == key)
            .collect();
        if places.len() > 1 {
            // Selection by swaps keeps it in place without cloning the items.
            for (n, &at) in places.iter().enumerate() {
                let newest = places[n..]
                    .iter()
                    .copied()
                    .max_by_key(|&j| {
                        let v = version(&items[j]);
                        (v.valid_from, v.tx_from)
                    })
                    .unwrap_or(at);
                items.swap(at, newest);
            }
        }
        done.push(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::{TxTime, ValidTime};

    fn v(key: &str, value: &str, from: i64) -> Version {
        Version {
            key: key.into(),
            value: value.into(),
            tags: vec![],
            agent: "t".into(),
            valid_from: ValidTime::from_micros(from),
            valid_to: ValidTime::INFINITY,
            tx_from: TxTime::from_micros(from),
            tx_to: TxTime::INFINITY,
            tier: None,
            source: Default::default(),
        }
    }

    #[test]
    fn a_keys_values_take_its_places_newest_first() {
        let mut items = vec![
            v("event:deploy", "v2.3", 3),
            v("ci", "Buildkite", 1),
            v("event:deploy", "v2.4", 4),
            v("event:deploy", "v2.2", 2),
            v("cache", "Map", 9),
        ];
        newest_first_within_keys(&mut items, |x| x);
        let order: Vec<&str> = items.iter().map(|x| x.value.as_str()).collect();
        assert_eq!(order, ["v2.4", "Buildkite", "v2.3", "v2.2", "Map"]);
    }
}
