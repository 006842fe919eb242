//! [`Names`]: a list of short strings (tool names, commands, skills) kept in one buffer, the
//! type of `system/init`'s long lists of names.

use std::fmt;
use std::ops::Index;

use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

/// A list of strings held in one buffer: the type of the lists of names a `system/init` line
/// carries ([`InitMessage::tools`](crate::InitMessage::tools), its slash commands, agents,
/// skills, betas, capabilities and directories). A line carries a hundred and
/// more of them; one buffer for a list costs two allocations instead of one per name.
///
/// It reads as a list of `&str`: [`iter`](Names::iter) (also `for name in &names`),
/// [`get`](Names::get), indexing (`names[0]`), [`contains`](Names::contains),
/// [`len`](Names::len); it compares with a slice or a `Vec` of `&str` or `String`, prints as a
/// list, and is built from any iterator of strings (`collect()`, `From<Vec<String>>`,
/// `From<[&str; N]>`). On the wire it is a JSON array of strings. It is not edited in place:
/// collect a new one.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Names {
    /// Every name, one after another.
    text: Box<str>,
    /// Where each name ends in `text`.
    ends: Box<[usize]>,
}

/// A [`Names`] being built: its buffers grow, and are copied once into buffers of the exact
/// size when it is done (so a reused builder costs a list two allocations).
#[derive(Default)]
pub(crate) struct NamesBuilder {
    text: String,
    ends: Vec<usize>,
}

impl NamesBuilder {
    /// Buffers larger than this (bytes of text, or names) are not kept for the next list.
    const KEEP: usize = 64 * 1024;

    /// Adds a name at the end.
    pub(crate) fn push(&mut self, name: &str) {
        self.text.push_str(name);
        self.ends.push(self.text.len());
    }

    /// The list built so far, in buffers of its size; the builder is left empty, its buffers
    /// kept for the next list.
    pub(crate) fn take(&mut self) -> Names {
        let names = Names {
            text: self.text.as_str().into(),
            ends: self.ends.as_slice().into(),
        };
        self.text.clear();
        self.ends.clear();
        if self.text.capacity() > Self::KEEP || self.ends.capacity() > Self::KEEP {
            *self = NamesBuilder::default();
        }
        names
    }
}

impl Names {
    /// An empty list.
    pub fn new() -> Self {
        Names::default()
    }

    /// How many names the list holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the list holds no name.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The name at `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&str> {
        let end = *self.ends.get(index)?;
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        Some(&self.text[start..end])
    }

    /// Whether `name` is in the list.
    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|n| n == name)
    }

    /// The names, in order.
    pub fn iter(&self) -> NamesIter<'_> {
        NamesIter {
            names: self,
            front: 0,
            back: self.ends.len(),
        }
    }

    /// The names as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

/// The names of a [`Names`], in order (see [`Names::iter`]).
#[derive(Clone, Debug)]
pub struct NamesIter<'a> {
    names: &'a Names,
    front: usize,
    back: usize,
}

impl<'a> Iterator for NamesIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        (self.front < self.back).then(|| {
            self.front += 1;
            &self.names[self.front - 1]
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.back - self.front;
        (left, Some(left))
    }
}

impl DoubleEndedIterator for NamesIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        (self.front < self.back).then(|| {
            self.back -= 1;
            &self.names[self.back]
        })
    }
}

impl ExactSizeIterator for NamesIter<'_> {}

impl<'a> IntoIterator for &'a Names {
    type Item = &'a str;
    type IntoIter = NamesIter<'a>;

    fn into_iter(self) -> NamesIter<'a> {
        self.iter()
    }
}

impl Index<usize> for Names {
    type Output = str;

    /// The name at `index`; panics past the end, as a slice does.
    fn index(&self, index: usize) -> &str {
        match self.get(index) {
            Some(name) => name,
            None => panic!("index {index} out of range for {} names", self.len()),
        }
    }
}

impl<S: AsRef<str>> FromIterator<S> for Names {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut names = NamesBuilder::default();
        for name in iter {
            names.push(name.as_ref());
        }
        names.take()
    }
}

impl From<Vec<String>> for Names {
    fn from(names: Vec<String>) -> Self {
        names.into_iter().collect()
    }
}

impl From<&[&str]> for Names {
    fn from(names: &[&str]) -> Self {
        names.iter().collect()
    }
}

impl<const N: usize> From<[&str; N]> for Names {
    fn from(names: [&str; N]) -> Self {
        names.into_iter().collect()
    }
}

impl From<Names> for Vec<String> {
    fn from(names: Names) -> Self {
        names.to_vec()
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for Names {
    fn eq(&self, other: &[S]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for Names {
    fn eq(&self, other: &Vec<S>) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for Names {
    fn eq(&self, other: &[S; N]) -> bool {
        *self == other[..]
    }
}

impl fmt::Debug for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Names {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for name in self {
            seq.serialize_element(name)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NamesVisitor;
        impl<'de> Visitor<'de> for NamesVisitor {
            type Value = Names;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of strings")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Names, A::Error> {
                let mut names = NamesBuilder::default();
                while let Some(name) = seq.next_element::<std::borrow::Cow<'de, str>>()? {
                    names.push(&name);
                }
                Ok(names.take())
            }
        }
        deserializer.deserialize_seq(NamesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_as_a_list_of_str() {
        let names: Names = ["Bash", "", "Read"].into();
        assert_eq!(names.len(), 3);
        assert_eq!(&names[0], "Bash");
        assert_eq!(names.get(1), Some(""));
        assert_eq!(names.get(3), None);
        assert!(names.contains("Read") && !names.contains("Write"));
        assert_eq!(names.iter().rev().collect::<Vec<_>>(), ["Read", "", "Bash"]);
        assert_eq!(
            names,
            vec!["Bash".to_string(), String::new(), "Read".into()]
        );
        assert_eq!(format!("{names:?}"), r#"["Bash", "", "Read"]"#);
        assert!(Names::new().is_empty());
    }

    #[test]
    fn is_a_json_array_of_strings() {
        let names: Names = serde_json::from_str(r#"["a\"b","c"]"#).unwrap();
        assert_eq!(names, ["a\"b", "c"]);
        assert_eq!(serde_json::to_string(&names).unwrap(), r#"["a\"b","c"]"#);
        assert!(serde_json::from_str::<Names>(r#"["a",1]"#).is_err());
    }
}
