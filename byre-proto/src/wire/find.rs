//! Finding what a decoded tree does not model: the [`FindUnknown`] trait and its impls for
//! leaves and containers.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::values::{Extra, Number, RawJson, Unknown};

/// Walks a decoded tree and reports where it holds an [`Unknown`], where it holds fields that
/// are not modelled (kept in an [`Extra`]), and where a field did not fit the model (a
/// [`Misfit`](super::Misfit)).
pub trait FindUnknown {
    /// Appends to `out` the JSON path of every [`Unknown`] below `path`.
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>);

    /// Appends to `out` the JSON path of every field below `path` that a known type does not
    /// model (a field a newer CLI added). Leaves have none.
    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        let _ = (path, out);
    }

    /// Appends to `out` the JSON path of every field below `path` that did not fit the model
    /// and was kept as text (a [`Misfit`](super::Misfit)), with the reason. Leaves have none.
    fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
        let _ = (path, out);
    }

    /// The JSON paths, each followed by the reason in parentheses (like
    /// `/usage/input_tokens (invalid type: floating point `1.5`, expected u64)`), of every
    /// field in this value that did not fit the model and was kept as its JSON text (a
    /// [`Misfit`](super::Misfit)). Empty for every line the strict decode takes, which is
    /// every line the CLI writes today.
    fn misfit_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.find_misfits(&mut String::new(), &mut out);
        out
    }

    /// The JSON paths (like `/message/usage/new_counter`) of every field in this value that
    /// byre does not model, kept as received in an [`Extra`]. Fields inside an [`Unknown`] are
    /// not listed (see [`FindUnknown::unknown_paths`]).
    ///
    /// [`Extra`]: super::Extra
    fn extra_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.find_extra(&mut String::new(), &mut out);
        out
    }

    /// The JSON paths (like `/message/content/1`) of every [`Unknown`] in this value, with the
    /// unknown tag where there is one. Empty means the value is fully typed.
    fn unknown_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.find_unknown(&mut String::new(), &mut out);
        out
    }

    /// Whether this value holds no [`Unknown`] anywhere.
    fn is_fully_typed(&self) -> bool {
        self.unknown_paths().is_empty()
    }
}

impl Unknown {
    pub(crate) fn report(&self, tag: &str, path: &str, out: &mut Vec<String>) {
        let shown = if path.is_empty() { "/" } else { path };
        match self.fields.get(tag) {
            Some(Value::String(t)) => out.push(format!("{shown} ({tag} {t:?})")),
            Some(other) => out.push(format!("{shown} ({tag} {other})")),
            None => out.push(format!("{shown} (no {tag})")),
        }
    }
}

/// Appends the misfits an object keeps in its [`Extra`], each as its path and reason.
pub(crate) fn report_misfits(extra: &Extra, path: &mut String, out: &mut Vec<String>) {
    for misfit in extra.misfits() {
        with_key(path, &misfit.key, |path| {
            out.push(format!("{path} ({})", misfit.why));
        });
    }
}

macro_rules! leaf_find_unknown {
    ($($t:ty),* $(,)?) => {
        $(impl FindUnknown for $t {
            fn find_unknown(&self, _: &mut String, _: &mut Vec<String>) {}
        })*
    };
}
leaf_find_unknown!(
    String,
    crate::Text,
    crate::Names,
    bool,
    u8,
    u16,
    u32,
    u64,
    i32,
    i64,
    f64,
    Value,
    Number
);

impl<T: FindUnknown> FindUnknown for Option<T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.find_unknown(path, out);
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.find_extra(path, out);
        }
    }

    fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.find_misfits(path, out);
        }
    }
}

impl<T: FindUnknown> FindUnknown for Box<T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        (**self).find_unknown(path, out);
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        (**self).find_extra(path, out);
    }

    fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
        (**self).find_misfits(path, out);
    }
}

impl<T: FindUnknown> FindUnknown for Vec<T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        for (i, v) in self.iter().enumerate() {
            with_key(path, &i.to_string(), |path| v.find_unknown(path, out));
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        for (i, v) in self.iter().enumerate() {
            with_key(path, &i.to_string(), |path| v.find_extra(path, out));
        }
    }

    fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
        for (i, v) in self.iter().enumerate() {
            with_key(path, &i.to_string(), |path| v.find_misfits(path, out));
        }
    }
}

impl<K: fmt::Display, T: FindUnknown> FindUnknown for BTreeMap<K, T> {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        for (k, v) in self {
            with_key(path, &k.to_string(), |path| v.find_unknown(path, out));
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        for (k, v) in self {
            with_key(path, &k.to_string(), |path| v.find_extra(path, out));
        }
    }

    fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
        for (k, v) in self {
            with_key(path, &k.to_string(), |path| v.find_misfits(path, out));
        }
    }
}

impl FindUnknown for RawJson {
    fn find_unknown(&self, _: &mut String, _: &mut Vec<String>) {}
}

/// Pushes `/key` onto `path` for the duration of `f`.
pub(crate) fn with_key(path: &mut String, key: &str, f: impl FnOnce(&mut String)) {
    let len = path.len();
    path.push('/');
    path.push_str(key);
    f(path);
    path.truncate(len);
}
