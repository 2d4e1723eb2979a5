//! JSON string literals on the hot path: writing one straight into a byte
//! buffer, with the escapes `serde_json` writes (the same bytes), without
//! its `io::Write` machinery (responses embed texts this way on every call:
//! a tool's result as `content[0].text`, member names of cache keys); and
//! reading the text of a raw JSON string without a parser when it has no
//! escapes (method and tool names).

use std::borrow::Cow;

use serde_json::value::RawValue;

/// What a byte becomes inside a JSON string: `0` as it is, else the letter
/// after the backslash (`u` for `\u00XX`).
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `text` to `out` as a JSON string literal, quotes included:
/// byte for byte what `serde_json::to_writer(out, text)` writes.
pub fn write_json_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPE[usize::from(byte)];
        if escape == 0 {
            continue;
        }
        push_run(out, &bytes[start..i]);
        out.push(b'\\');
        if escape == b'u' {
            out.extend_from_slice(&[b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]]);
        } else {
            out.push(escape);
        }
        start = i + 1;
    }
    push_run(out, &bytes[start..]);
    out.push(b'"');
}

/// Appends a run of bytes that need no escape: short runs (the usual ones
/// between the quotes of a JSON text) byte by byte, long ones copied.
fn push_run(out: &mut Vec<u8>, run: &[u8]) {
    if run.len() < 16 {
        for &byte in run {
            out.push(byte);
        }
    } else {
        out.extend_from_slice(run);
    }
}

/// The text of `raw` when it is a JSON string (`None` for any other
/// value): borrowed when it has no escapes (a `RawValue` is valid JSON, so
/// its quotes enclose the text as it is), else unescaped by `serde_json`.
pub fn raw_json_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    if let Some(plain) = plain_json_str(raw) {
        return Some(Cow::Borrowed(plain));
    }
    let text = raw.get();
    text.starts_with('"').then(|| serde_json::from_str::<String>(text).ok().map(Cow::Owned))?
}

/// The text of `raw` when it is a JSON string written without escapes (its
/// quotes enclose the text as it is); `None` for any other value or a string
/// with escapes. What [`raw_json_str`] borrows, without the parser.
pub(crate) fn plain_json_str(raw: &RawValue) -> Option<&str> {
    let inner = raw.get().strip_prefix('"')?.strip_suffix('"')?;
    (!inner.as_bytes().contains(&b'\\')).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> Vec<u8> {
        let mut out = b"x".to_vec();
        write_json_string(&mut out, text);
        out
    }

    #[test]
    fn the_same_bytes_as_serde_json() {
        let mut every_byte = String::new();
        for c in 0u8..=0x7f {
            every_byte.push(char::from(c));
        }
        let samples = [
            "",
            "plain",
            r#"{"id":7,"name":"n7"}"#,
            "quote \" backslash \\ slash / tab \t newline \n return \r",
            "\u{0}\u{1}\u{1f}\u{7f}\u{8}\u{c}",
            "ünïcødé ✓ 𝄞 \u{2028}\u{2029}",
            &every_byte,
            "\"\"\"\\\\\\",
        ];
        for text in samples {
            let mut expected = b"x".to_vec();
            serde_json::to_writer(&mut expected, text).unwrap();
            assert_eq!(written(text), expected, "{text:?}");
        }
    }

    #[test]
    fn raw_strings_read_as_serde_json_reads_them() {
        for json in [r#""""#, r#""Catalog.get""#, r#""a\"b""#, r#""\u0041\n""#, r#""ü✓""#, r#""\\""#] {
            let raw: &RawValue = serde_json::from_str(json).unwrap();
            let expected: String = serde_json::from_str(json).unwrap();
            assert_eq!(raw_json_str(raw).as_deref(), Some(expected.as_str()), "{json}");
        }
        assert!(matches!(raw_json_str(serde_json::from_str(r#""plain""#).unwrap()), Some(Cow::Borrowed("plain"))));
        // Members captured raw carry no surrounding whitespace.
        let spaced: std::collections::HashMap<&str, &RawValue> =
            serde_json::from_str("{ \"a\" :\n \"x\"\t , \"b\" : \"y\" }").unwrap();
        assert_eq!(raw_json_str(spaced["a"]).as_deref(), Some("x"));
        assert_eq!(raw_json_str(spaced["b"]).as_deref(), Some("y"));
        for json in ["1", "null", "true", "[\"a\"]", "{\"a\":\"b\"}", "-0.5"] {
            let raw: &RawValue = serde_json::from_str(json).unwrap();
            assert_eq!(raw_json_str(raw), None, "{json}");
        }
    }

    #[test]
    fn long_texts_round_trip() {
        let text: String = (0..10_000).map(|i| char::from(b" \"\\a\n\x01z"[i % 7])).collect();
        let out = written(&text);
        let back: String = serde_json::from_slice(&out[1..]).unwrap();
        assert_eq!(back, text);
    }
}
