//! The machinery every wire type is built from: lossless objects, tagged unions and open strings.
//!
//! Three macros generate all of byre-proto's types:
//!
//! - `wire_struct!` declares an object with known fields (required or optional) and an `extra`
//!   map that keeps every field it does not know. An optional field received as explicit `null`
//!   decodes as `None` and its `null` is kept in `extra`, so re-encoding writes it back.
//! - `wire_enum!` declares a union tagged by one key (`type`, `subtype`, `hook_event_name`, ...).
//!   The tag may come anywhere in the object: keys before it are buffered, keys after it are
//!   decoded straight into the variant. An unknown tag becomes the `Unknown` variant holding
//!   every key of the object.
//! - `open_enum!` declares a string the CLI keeps extending: named constants plus any other
//!   string, kept as it came.
//!
//! Decoding never goes through `serde_json::Value` for the known parts of a message, which is
//! what makes typed decoding faster than decoding to `Value`.

mod direct;
mod find;
pub(crate) mod lenient;
mod object;
mod open_enum;
mod skip;
mod values;
mod wire_enum;
mod wire_struct;

pub(crate) use self::direct::{direct_line, Cursor, Direct, DirectObject, Outer};
pub use self::find::FindUnknown;
pub(crate) use self::find::{report_misfits, with_key};
pub(crate) use self::object::{
    accept_lenient, deserialize_object, feed, from_value, Held, Key, Tag, WireObject,
};
pub(crate) use self::open_enum::open_enum;
pub use self::values::{Extra, Misfit, Number, RawJson, Unknown};
pub(crate) use self::wire_enum::wire_enum;
pub(crate) use self::wire_struct::wire_struct;
