//! Tests of the direct decoder: on every recorded line, and on thousands of lines changed at
//! random from them, whatever it decodes equals what the serde path decodes.

use crate::decode::decode_top_level;
use crate::message::{CliMessage, HostMessage};

use super::{direct_line, Cursor};

/// Every recorded message line (`recv` and `send`).
fn corpus() -> Vec<(bool, String)> {
    let lines = super::recorded::recorded_lines();
    assert!(
        lines.len() > 1000,
        "the corpus is there: {} lines",
        lines.len()
    );
    lines
}

/// Decodes `line` both ways; true when the direct decoder took it. Panics when it made
/// something the serde path does not.
fn same(recv: bool, line: &str) -> bool {
    fn check<T: super::Direct + crate::decode::TopLevel + std::fmt::Debug + PartialEq>(
        line: &str,
    ) -> bool {
        // Both ways in: as `from_slice` does (a late `type` found by a scan first), against
        // what `from_slice`'s serde path makes; and straight from the first key (keys before a
        // late `type` buffered), against serde reading the line straight through (the two
        // serde routes differ on some repeated keys before a late `type`).
        let scanned = crate::decode::direct::<T>(line);
        if let Some(direct) = &scanned {
            match decode_top_level::<T>(line) {
                Ok(serde) => assert_eq!(direct, &serde, "decoded differently: {line}"),
                Err(e) => panic!("decoded directly, but serde fails ({e}): {line}"),
            }
        }
        if let Some(direct) = direct_line::<T>(line) {
            match serde_json::from_str::<T>(line) {
                Ok(serde) => assert_eq!(direct, serde, "decoded differently: {line}"),
                Err(e) => panic!("decoded directly, but serde fails ({e}): {line}"),
            }
        }
        scanned.is_some()
    }
    match recv {
        true => check::<CliMessage>(line),
        false => check::<HostMessage>(line),
    }
}

#[test]
fn every_recorded_line_decodes_as_through_serde() {
    let corpus = corpus();
    let direct = corpus
        .iter()
        .filter(|(recv, line)| {
            let took = same(*recv, line);
            if !took && std::env::var_os("BYRE_SHOW_SLOW").is_some() {
                eprintln!("not direct: {}", &line[..line.len().min(300)]);
            }
            took
        })
        .count();
    eprintln!(
        "{direct} of {} recorded lines decoded directly",
        corpus.len()
    );
    // Nearly every recorded line takes the direct path (a `result` line, whose `type` comes
    // last, and lines with unknown parts do not).
    assert!(
        direct * 10 >= corpus.len() * 8,
        "{direct} of {} lines decoded directly",
        corpus.len()
    );
}

/// A small deterministic generator (xorshift), so failures repeat.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `line` with one change at a random place: whitespace, an escape, another number, another
/// literal, an unknown key, a deep value, or a cut.
fn mutate(line: &str, random: &mut Random) -> String {
    let bytes = line.as_bytes();
    // A place between tokens or inside a string: any ASCII position will do.
    let mut at = random.below(bytes.len());
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    let (head, tail) = line.split_at(at);
    const PIECES: &[&str] = &[
        " ",
        "\n\t ",
        "\\n",
        "\\\"",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\ud800",
        "\\b\\f\\r\\t",
        "\\u00C9\\uFFFF",
        "\\udc00",
        "\\x",
        "é",
        "\\/",
        "1.5",
        "-1",
        "01",
        "1e3",
        "18446744073709551616",
        "null",
        "true",
        "\"x\"",
        "\"zz_unknown\":{\"a\":[1,2.5,null,\"\\n\"]},",
        "\u{1}",
        "",
    ];
    // Past serde_json's nesting limit of 128, counted from the line's start.
    let deep = format!("{}1{}", "[".repeat(125), "]".repeat(125));
    // Within it, but deep.
    let nested = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    let pick = random.below(PIECES.len() + 2);
    let piece = match pick.checked_sub(PIECES.len()) {
        None => PIECES[pick],
        Some(0) => &deep,
        Some(_) => &nested,
    };
    match random.below(5) {
        // Flip one byte to another ASCII byte.
        4 => {
            let mut bytes = line.as_bytes().to_vec();
            if bytes[at].is_ascii() {
                bytes[at] = b" \"\\{}[],:0123456789.-eEtrufalsn"[random.below(31)];
            }
            String::from_utf8(bytes).expect("ASCII replaced by ASCII")
        }
        // Insert.
        0 | 1 => format!("{head}{piece}{tail}"),
        // Replace the next few bytes.
        2 => {
            let mut cut = (at + 1 + random.below(6)).min(line.len());
            while !line.is_char_boundary(cut) {
                cut += 1;
            }
            format!("{head}{piece}{}", &line[cut..])
        }
        // Cut the line short.
        _ => head.to_owned(),
    }
}

/// Calls `each` with `BYRE_DIRECT_FUZZ` (20,000) lines of the corpus, each changed one to three
/// times at random from `seed` (`BYRE_DIRECT_SEED` changes it), and whether the CLI wrote it;
/// gives how many times `each` said yes.
fn changed_lines(
    corpus: &[(bool, String)],
    seed: u64,
    mut each: impl FnMut(bool, &str) -> bool,
) -> (usize, usize) {
    let seed = std::env::var("BYRE_DIRECT_SEED")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
        .map_or(seed, |n| n ^ seed);
    let mut random = Random(seed.max(1));
    let count = std::env::var("BYRE_DIRECT_FUZZ")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let mut yes = 0;
    for _ in 0..count {
        let (recv, line) = &corpus[random.below(corpus.len())];
        let mut changed = mutate(line, &mut random);
        // Sometimes a second and a third change.
        for _ in 0..random.below(3) {
            if !changed.is_empty() {
                changed = mutate(&changed, &mut random);
            }
        }
        yes += usize::from(each(*recv, &changed));
    }
    (yes, count)
}

#[test]
fn changed_lines_decode_as_through_serde() {
    let (direct, tried) = changed_lines(&corpus(), 0x9e37_79b9_7f4a_7c15, same);
    eprintln!("{direct} of {tried} changed lines decoded directly");
    // Many changes keep the line valid and typed (whitespace, escapes in strings, unknown keys).
    assert!(
        direct * 10 >= tried,
        "{direct} of {tried} changed lines decoded directly"
    );
}

#[test]
fn the_cursor_reads_strings_numbers_and_hands_values_to_serde_json() {
    let mut c = Cursor::new(r#" "plain" "es\"c\u00e9" 0 42 18446744073709551615 "#);
    assert_eq!(c.string().as_deref(), Some("plain"));
    assert_eq!(c.string().as_deref(), Some("es\"cé"));
    assert_eq!(c.unsigned(), Some(0));
    assert_eq!(c.unsigned(), Some(42));
    assert_eq!(c.unsigned(), Some(u64::MAX));
    assert!(c.at_end());
    // Not plain integers: given up, the cursor where it was.
    for text in ["18446744073709551616", "01", "1.5", "1e3", "-1", "x"] {
        assert_eq!(Cursor::new(text).unsigned(), None, "{text}");
    }
    // A control byte in a string is not JSON.
    assert_eq!(Cursor::new("\"a\u{1}b\"").string(), None);
    // A value left to serde_json: decoded from where the cursor is, which moves past it.
    let mut c = Cursor::new(r#"{"a":[1,"]}",{"b":null}]} , -2.5e3]"#);
    let value: serde_json::Value = c.serde().expect("a value");
    assert_eq!(value, serde_json::json!({"a": [1, "]}", {"b": null}]}));
    assert_eq!(c.peek(), Some(b','));
}

#[test]
fn numbers_read_in_place_equal_serde_json_s() {
    fn same<T: super::Direct + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
        text: &str,
    ) {
        let direct = T::direct(&mut Cursor::new(text));
        let serde = serde_json::from_str::<T>(text).ok();
        assert_eq!(direct, serde, "{text} as {}", std::any::type_name::<T>());
    }
    for text in [
        "0",
        "7",
        "255",
        "256",
        "65536",
        "2147483648",
        "4294967296",
        "9007199254740993",
        "18446744073709551615",
        "18446744073709551616",
        "-0",
        "-1",
        "1.5",
        "1e3",
        "0.1",
        "-2.5e-3",
    ] {
        same::<serde_json::Number>(text);
        same::<u8>(text);
        same::<u16>(text);
        same::<u32>(text);
        same::<i32>(text);
        same::<i64>(text);
        same::<u64>(text);
        same::<f64>(text);
        same::<serde_json::Value>(text);
    }
}

#[test]
fn unknown_tags_decode_directly_as_through_serde() {
    for line in [
        r#"{"type":"brand_new","a":{"b":[1,2.5]},"type":"again","c":null}"#,
        r#"{"type":"system","subtype":"brand_new","session_id":"s","x":[{"y":"\n"}]}"#,
        concat!(
            r#"{"type":"assistant","message":{"id":"m","type":"message","role":"assistant","#,
            r#""content":[{"type":"hologram","frames":3},{"type":"text","text":"hi"}]},"#,
            r#""session_id":"s"}"#
        ),
        concat!(
            r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"#,
            r#""delta":{"type":"smell_delta","smell":"rain"}},"session_id":"s"}"#
        ),
    ] {
        assert!(same(true, line), "not decoded directly: {line}");
    }
}

/// Whether `text` is one JSON value (with whitespace around it) as serde_json takes a value it
/// skips, and whether the skip check agrees: it may give up (on nesting past 128), never accept
/// what serde_json refuses or end somewhere else.
fn skips_as_serde_json(text: &str) -> bool {
    let serde = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    let start = text.len() - text.trim_start_matches([' ', '\n', '\t', '\r']).len();
    let ours = crate::wire::skip::value_end(text.as_bytes(), start)
        .is_some_and(|end| text[end..].trim_matches([' ', '\n', '\t', '\r']).is_empty());
    let deep = memchr::memchr2_iter(b'{', b'[', text.as_bytes())
        .nth(128)
        .is_some();
    assert!(
        ours == serde || (serde && deep),
        "the skip check says {ours}, serde_json {serde}: {text}"
    );
    serde
}

#[test]
fn the_skip_check_accepts_what_serde_json_does() {
    let cases = [
        "0",
        "-0",
        "01",
        "-",
        "1.",
        "1.5",
        "1e",
        "1e+",
        "1E-7",
        "-12.5e300",
        "1e400",
        "00",
        "2.",
        ".5",
        "+1",
        "truex",
        "true",
        "tru",
        "nul",
        "null",
        "false",
        "\"\"",
        "\"a\\\"\"",
        "\"\\u12G4\"",
        "\"\\ud800\"",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"\u{7f}é\"",
        "[]",
        "[ ]",
        "[,]",
        "[1,]",
        "[1 2]",
        "{}",
        "{ }",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "{\"a\":[{}]}",
        "[[[]]]",
        "[[]",
        "[]]",
        " [1, {\"b\": null}] ",
        "{\"a\":1}{",
        "\"unclosed",
    ];
    for case in cases {
        skips_as_serde_json(case);
    }
    // Deep: 128 levels are checked, more are left to serde_json.
    skips_as_serde_json(&format!("{}{}", "[".repeat(128), "]".repeat(128)));
    skips_as_serde_json(&format!("{}{}", "[".repeat(129), "]".repeat(129)));
    skips_as_serde_json(&format!("{}1{}", "{\"k\":".repeat(300), "}".repeat(300)));
}

#[test]
fn the_skip_check_agrees_with_serde_json_on_changed_lines() {
    let corpus = corpus();
    for (_, line) in &corpus {
        assert!(skips_as_serde_json(line), "a recorded line is JSON");
    }
    let (valid, tried) = changed_lines(&corpus, 0x2545_f491_4f6c_dd1d, |_, line| {
        skips_as_serde_json(line)
    });
    assert!(
        valid * 10 >= tried,
        "{valid} of {tried} changed lines still JSON"
    );
}

#[test]
fn free_form_values_decode_directly_as_through_serde() {
    let lines = [
        // A repeated key keeps its last value; numbers of every kind; escapes; deep lists.
        concat!(
            r#"{"type":"system","subtype":"zz","a":{"k":1,"k":[2,-3.5e2,{"k":null}]},"#,
            r#""b":[true,false,0,-0,1.0,18446744073709551616]}"#
        ),
        r#"{"type":"system","subtype":"zz","u":"\u00e9\ud83d\ude00\n","e":{},"l":[[],[[{}]]]}"#,
        concat!(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","#,
            r#""name":"Bash","input":{"command":"ls","n":-1,"x":{"y":"y","y":"z"}}}]}}"#
        ),
    ];
    for line in lines {
        assert!(same(true, line), "decoded directly: {line}");
    }
}

#[test]
fn lists_of_names_decode_directly_as_through_serde() {
    let init = |tools: &str| {
        format!(
            r#"{{"type":"system","subtype":"init","tools":{tools},"agents":[],"skills":["a"]}}"#
        )
    };
    for tools in [
        r#"[]"#,
        r#"[ ]"#,
        r#"["Bash","",  "Re\"ad"]"#,
        r#"["\u00e9"]"#,
    ] {
        assert!(same(true, &init(tools)), "decoded directly: {tools}");
    }
    let long: Vec<String> = (0..300).map(|i| format!("\"name-{i}\"")).collect();
    assert!(same(true, &init(&format!("[{}]", long.join(",")))));
    // Not a list of strings: the serde path keeps the line, its `tools` as a misfit.
    for tools in [r#"["Bash",1]"#, r#"[null]"#, r#"{}"#, r#"["a",]"#] {
        assert!(!same(true, &init(tools)), "left to serde: {tools}");
    }
}

#[test]
fn the_plain_part_of_a_string_ends_at_the_first_stop_in_any_lane() {
    // Against a byte-by-byte reading: every byte value at every offset of the first blocks and
    // of the tail after them, with plain text before it (ASCII and not).
    let reference = |bytes: &[u8], from: usize| {
        (from..bytes.len())
            .find(|&at| matches!(bytes[at], b'"' | b'\\' | 0..=0x1f))
            .unwrap_or(bytes.len())
    };
    for len in [0, 1, 15, 16, 17, 31, 32, 33, 40] {
        for from in [0, 1, 7] {
            for stop in 0..=u8::MAX {
                for at in from..len {
                    let mut bytes: Vec<u8> = b"plain text \xc3\xa9 more, and still more"
                        .iter()
                        .copied()
                        .cycle()
                        .take(len)
                        .collect();
                    bytes[at] = stop;
                    assert_eq!(
                        super::plain_end(&bytes, from),
                        reference(&bytes, from),
                        "byte {stop:#04x} at {at} of {len}, from {from}"
                    );
                }
            }
        }
    }
}
