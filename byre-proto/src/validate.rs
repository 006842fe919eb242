//! Checks that a value survives decoding and encoding: whole-value comparison, the first place
//! two values differ, and the round-trip check of a control payload.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::wire::FindUnknown;

/// Whether encoding `message` gives back `original` (as values: key order does not matter).
pub fn round_trips<T: Serialize>(message: &T, original: &Value) -> bool {
    serde_json::to_value(message)
        .map(|v| &v == original)
        .unwrap_or(false)
}

/// Decodes a control payload as `T`, re-encodes it and compares (a missing payload as `{}`);
/// gives the paths of every `Unknown` and every unmodelled field (marked `(unmodelled)`).
pub(crate) fn check_payload<T>(payload: Option<&Value>) -> Result<Vec<String>, String>
where
    T: DeserializeOwned + Serialize + FindUnknown,
{
    let empty = Value::Object(Default::default());
    let original = payload.unwrap_or(&empty);
    let typed: T = T::deserialize(original).map_err(|e| format!("payload does not decode: {e}"))?;
    let again = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if &again != original {
        return Err(match first_difference(original, &again) {
            Some(path) => format!("payload does not round-trip at {path}"),
            None => "payload does not round-trip".to_owned(),
        });
    }
    let mut paths = typed.unknown_paths();
    paths.extend(
        typed
            .extra_paths()
            .into_iter()
            .map(|p| format!("{p} (unmodelled)")),
    );
    Ok(paths)
}

/// The JSON path of the first place where `a` and `b` differ, if they do.
pub fn first_difference(a: &Value, b: &Value) -> Option<String> {
    fn walk(a: &Value, b: &Value, path: &mut String) -> bool {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for (k, va) in x {
                    let len = path.len();
                    path.push('/');
                    path.push_str(k);
                    match y.get(k) {
                        None => return true,
                        Some(vb) => {
                            if walk(va, vb, path) {
                                return true;
                            }
                        }
                    }
                    path.truncate(len);
                }
                if let Some(k) = y.keys().find(|k| !x.contains_key(*k)) {
                    path.push('/');
                    path.push_str(k);
                    return true;
                }
                false
            }
            (Value::Array(x), Value::Array(y)) => {
                for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    if walk(va, vb, path) {
                        return true;
                    }
                    path.truncate(len);
                }
                x.len() != y.len()
            }
            _ => a != b,
        }
    }
    let mut path = String::new();
    walk(a, b, &mut path).then(|| {
        if path.is_empty() {
            "/".to_owned()
        } else {
            path
        }
    })
}
