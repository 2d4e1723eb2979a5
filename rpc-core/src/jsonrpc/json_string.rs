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
///
/// The literal is built in a stack buffer and appended to `out` a buffer at
/// a time, eight bytes of text at a time:
/// * with no control character among them (`control_mask`), the eight
///   are copied at once, then for each quote and backslash (found by
///   `quotes_and_backslashes`) a backslash is written at its place and the rest of
///   the eight after it;
/// * else byte by byte through the escape table.
///
/// A tool's JSON result, written on every call as `content[0].text`, is
/// short runs between quotes: through the table, a chunk that held one
/// quote cost about 14 instructions a byte; this way about 10.
pub fn write_json_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    let mut stage = [0u8; STAGE];
    stage[0] = b'"';
    let mut len = 1;
    let (chunks, rest) = bytes.as_chunks::<8>();
    for chunk in chunks {
        if len > STAGE - 6 * 8 {
            out.extend_from_slice(&stage[..len]);
            len = 0;
        }
        let word = u64::from_le_bytes(*chunk);
        if control_mask(word) != 0 {
            for &byte in chunk {
                len += escaped(byte, &mut stage[len..len + 6]);
            }
            continue;
        }
        let mut doubled = quotes_and_backslashes(word);
        // Eight bytes and up to eight backslashes, and the eight bytes a
        // shifted rest writes past the last.
        let room = &mut stage[len..len + 24];
        room[..8].copy_from_slice(chunk);
        let mut added = 0;
        while doubled != 0 {
            let at = (doubled.trailing_zeros() / 8) as usize;
            // At most 7 + 7: masked, so that the compiler sees both writes
            // within the room and checks no bound per escape.
            let to = (at + added) & 15;
            room[to] = b'\\';
            room[to + 1..to + 9].copy_from_slice(&(word >> (8 * at)).to_le_bytes());
            added += 1;
            doubled &= doubled - 1;
        }
        len += 8 + added;
    }
    for &byte in rest {
        if len > STAGE - 6 {
            out.extend_from_slice(&stage[..len]);
            len = 0;
        }
        len += escaped(byte, &mut stage[len..len + 6]);
    }
    if len == STAGE {
        out.extend_from_slice(&stage);
        len = 0;
    }
    stage[len] = b'"';
    out.extend_from_slice(&stage[..len + 1]);
}

/// `text` as a JSON string literal, quotes included, in a string of exactly
/// its size: what [`write_json_string`] writes.
pub fn to_json_string(text: &str) -> Box<str> {
    let mut out = Vec::with_capacity(json_string_len(text));
    write_json_string(&mut out, text);
    // Escapes are ASCII and the rest is `text`'s own UTF-8, copied whole:
    // the lossy branch is never taken.
    match String::from_utf8(out) {
        Ok(string) => string.into_boxed_str(),
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into(),
    }
}

/// How many bytes [`write_json_string`] writes for `text`, quotes
/// included: a buffer sized with it is filled exactly (a response body that
/// fills its buffer becomes `Bytes` without another allocation).
pub fn json_string_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    // Quotes and backslashes take one byte more; control characters are
    // rare and counted apart. Comparisons the compiler turns into vector
    // instructions, no table lookup per byte.
    let (mut doubled, mut control) = (0usize, 0usize);
    for chunk in bytes.chunks(240) {
        // Per chunk in byte-wide counters, so that the loop stays narrow: a
        // byte counts at most once in each, and 240 bytes are whole vectors
        // (a chunk of 127 left a tail of single bytes to count in each).
        let (mut d, mut c) = (0u8, 0u8);
        for &byte in chunk {
            d += u8::from(byte == b'"') + u8::from(byte == b'\\');
            c += u8::from(byte < 0x20);
        }
        doubled += usize::from(d);
        control += usize::from(c);
    }
    let len = 2 + bytes.len() + doubled;
    if control == 0 {
        return len;
    }
    len + bytes.iter().filter(|&&byte| byte < 0x20).map(|&byte| extra(byte)).sum::<usize>()
}

/// The bytes an escape adds to `byte` (see [`escaped`]).
#[inline]
fn extra(byte: u8) -> usize {
    match ESCAPE[usize::from(byte)] {
        0 => 0,
        b'u' => 5,
        _ => 1,
    }
}

/// The stack buffer of [`write_json_string`] (it is zeroed on each call:
/// small), flushed when the next chunk, escaped, might not fit.
const STAGE: usize = 256;

/// The control characters of `word` (read little-endian: its first byte
/// lowest), each flagged by its high bit: a zero byte found in `word` less
/// 0x20 each (a byte of 0x80 or more is never one). A borrow can flag a
/// byte above a flagged one too, never below: the mask is zero only when
/// there is none, and its lowest flag is exact.
#[inline]
fn control_mask(word: u64) -> u64 {
    word.wrapping_sub(ONES * 0x20) & !word & HIGH
}

/// The quotes and backslashes of `word`, each flagged by its high bit, and
/// no other byte: exact, as clearing the flags one at a time needs. Per
/// byte, its low seven bits xor a quote's (or a backslash's) plus `0x7f`
/// set the high bit unless they are equal, and no carry crosses a byte
/// (`0x7f + 0x7f` fits in one); a byte is flagged when one of the two sums
/// leaves its high bit clear and its own high bit is clear too.
#[inline]
fn quotes_and_backslashes(word: u64) -> u64 {
    let low = word & !HIGH;
    let not_quote = (low ^ (ONES * u64::from(b'"'))).wrapping_add(!HIGH);
    let not_backslash = (low ^ (ONES * u64::from(b'\\'))).wrapping_add(!HIGH);
    !((not_quote & not_backslash) | word | !HIGH)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// `\\u00XX`: how a control character without a letter of its own is
/// escaped.
#[inline]
fn unicode_escape(byte: u8) -> [u8; 6] {
    [b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]]
}

/// Writes `byte` as it is in a JSON string into `to` (six bytes of room):
/// how many bytes it took.
#[inline]
fn escaped(byte: u8, to: &mut [u8]) -> usize {
    match ESCAPE[usize::from(byte)] {
        0 => {
            to[0] = byte;
            1
        }
        b'u' => {
            to[..6].copy_from_slice(&unicode_escape(byte));
            6
        }
        escape => {
            to[0] = b'\\';
            to[1] = escape;
            2
        }
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

    /// The literal of `text` after an `x`; checks its length against
    /// [`json_string_len`] on the way.
    fn written(text: &str) -> Vec<u8> {
        let mut out = b"x".to_vec();
        write_json_string(&mut out, text);
        assert_eq!(json_string_len(text), out.len() - 1, "length of {text:?}");
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
            let string = to_json_string(text);
            assert_eq!(string.as_bytes(), &expected[1..], "{text:?}");
            assert_eq!(string.len(), json_string_len(text), "exact: {text:?}");
        }
    }

    #[test]
    fn every_length_around_the_stage_and_the_long_run() {
        // Runs of every length up to past the stack buffer, each ended by
        // an escape of each kind: every flush point and both ways of copying.
        for run in 0..300 {
            for escape in ["\"", "\n", "\u{1}", "ü"] {
                let text = format!("{}{escape}{}", "a".repeat(run), "b".repeat(run % 40));
                let mut expected = b"x".to_vec();
                serde_json::to_writer(&mut expected, &text).unwrap();
                assert_eq!(written(&text), expected, "{run} {escape:?}");
            }
        }
    }

    #[test]
    fn mixed_texts_of_every_shape() {
        // Pseudo-random texts over plain, escaped and multi-byte characters:
        // escapes at every offset of the eight-byte chunks and the buffer
        // filling up exactly (plain chunks, then one of controls).
        let alphabet = ['a', '"', '\\', '\u{1}', '\n', 'ü', '✓', ' '];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut texts: Vec<String> = (0..2000)
            .map(|n| {
                (0..n % 700)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % 8) as usize]
                    })
                    .collect()
            })
            .collect();
        for plain in 0..20 {
            texts.push(format!("{}{}", "a".repeat(plain * 8), "\u{1}".repeat(8)));
            texts.push(format!("{}{}x", "a".repeat(plain * 8), "\u{1}".repeat(8)));
        }
        // The stage exactly full at the end: 1 + 15 (a chunk of seven
        // quotes) + 24 plain chunks = 208 staged, then 48 of eight controls.
        texts.push(format!("{}a{}{}", "\"".repeat(7), "a".repeat(24 * 8), "\u{1}".repeat(8)));
        for text in texts {
            let mut expected = b"x".to_vec();
            serde_json::to_writer(&mut expected, &text).unwrap();
            assert_eq!(written(&text), expected, "{text:?}");
        }
    }

    #[test]
    fn the_masks_flag_the_bytes_to_escape() {
        // Words of bytes around every boundary (controls, 0x20, quote,
        // backslash, 0x7f, 0x80, 0xff): the control mask is zero exactly
        // when there is no control character, and its lowest flag is the
        // first; the exact mask flags every quote and backslash and nothing
        // else.
        // 0xa2 and 0xdc: a quote's and a backslash's low seven bits.
        let bytes =
            [0x00, 0x01, 0x1f, 0x20, 0x21, b'"', b'#', b'[', b'\\', b']', 0x7f, 0x80, 0xa2, 0xc3, 0xdc, 0xff, b'a'];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200_000 {
            let mut word = [0u8; 8];
            for byte in &mut word {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *byte = bytes[(seed % bytes.len() as u64) as usize];
            }
            let value = u64::from_le_bytes(word);
            let first_control = word.iter().position(|&b| b < 0x20);
            let controls = control_mask(value);
            let found = (controls != 0).then(|| (controls.trailing_zeros() / 8) as usize);
            assert_eq!(found, first_control, "{word:02x?}");
            // Every quote and backslash flagged, and nothing else.
            let doubled = quotes_and_backslashes(value);
            let expected = word
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'"' || b == b'\\')
                .fold(0u64, |mask, (i, _)| mask | 0x80 << (8 * i));
            assert_eq!(doubled, expected, "{word:02x?}");
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
