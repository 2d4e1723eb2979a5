//! Limits on the shape of a JSON body, checked in one pass over its bytes
//! before anything is parsed.
//!
//! The body-size limit bounds the bytes, not what they cost once parsed: a
//! 4 MiB array of zeros is two million values, about 64 MiB as
//! `serde_json::Value`s. [`JsonLimits`] bounds the nesting depth, the number
//! of values and the length of a batch, so what a request can make the
//! server allocate stays proportional to what a legitimate one needs. The
//! scan skips string contents with `memchr` and costs about a millisecond
//! per megabyte.

use std::fmt;

/// What a body may contain. `JsonLimits::default()`: 64 levels of nesting,
/// 100,000 values, batches of 100 messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonLimits {
    /// Deepest nesting of arrays and objects (a batch counts one level).
    pub max_depth: usize,
    /// Most values: every array item, object member and the root count one.
    pub max_values: usize,
    /// Most messages in a batch (a top-level array).
    pub max_batch: usize,
}

impl Default for JsonLimits {
    fn default() -> Self {
        JsonLimits { max_depth: 64, max_values: 100_000, max_batch: 100 }
    }
}

impl JsonLimits {
    /// The default limits with nesting depth `depth`.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth.max(1);
        self
    }

    /// The limits with at most `values` values.
    pub fn max_values(mut self, values: usize) -> Self {
        self.max_values = values.max(1);
        self
    }

    /// The limits with batches of at most `messages` messages.
    pub fn max_batch(mut self, messages: usize) -> Self {
        self.max_batch = messages.max(1);
        self
    }

    /// Scans `bytes`; the first limit exceeded, if any. Malformed JSON is
    /// not reported here (the parser reports it precisely).
    pub fn check(&self, bytes: &[u8]) -> Result<(), Exceeded> {
        // A batch has its commas counted by the scan (they are its
        // messages): counting first would not spare the scan.
        let batch = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        if !batch && self.within_by_count(bytes) { Ok(()) } else { self.scan(bytes, batch) }
    }

    /// Whether counting bytes alone shows `bytes`, a single message, within
    /// the limits, the case of every one but the largest: the scan's depth
    /// never passes the number of `[` and `{` bytes, and its count of values
    /// never passes one more than the number of `,` bytes, strings included.
    /// A loop the compiler turns into vector instructions, several times
    /// faster than the scan.
    fn within_by_count(&self, bytes: &[u8]) -> bool {
        let (mut opens, mut commas) = (0usize, 0usize);
        for chunk in bytes.chunks(255) {
            // Per chunk in bytes-wide counters, so that the loop stays narrow.
            let (mut o, mut c) = (0u8, 0u8);
            for &byte in chunk {
                o += u8::from(byte == b'[') + u8::from(byte == b'{');
                c += u8::from(byte == b',');
            }
            opens += usize::from(o);
            commas += usize::from(c);
        }
        opens <= self.max_depth && commas < self.max_values
    }

    /// The scan: depth, values and (`batch`: a top-level array) a batch's
    /// messages, strings skipped.
    fn scan(&self, bytes: &[u8], batch: bool) -> Result<(), Exceeded> {
        let mut depth = 0usize;
        let mut values = 1usize;
        // Items of a batch: its top-level commas plus one.
        let mut messages = 1usize;
        // One table lookup per byte outside strings; strings are skipped.
        let mut i = 0;
        while let Some(&byte) = bytes.get(i) {
            i += 1;
            match CLASS[usize::from(byte)] {
                PLAIN => {}
                // Past the closing quote (beyond the end when there is none).
                QUOTE => i = string_end(bytes, i) + 1,
                OPEN => {
                    depth += 1;
                    if depth > self.max_depth {
                        return Err(Exceeded::Depth(self.max_depth));
                    }
                }
                CLOSE => depth = depth.saturating_sub(1),
                _ => {
                    values += 1;
                    if values > self.max_values {
                        return Err(Exceeded::Values(self.max_values));
                    }
                    if batch && depth == 1 {
                        messages += 1;
                        if messages > self.max_batch {
                            return Err(Exceeded::Batch(self.max_batch));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

const PLAIN: u8 = 0;
const QUOTE: u8 = 1;
const OPEN: u8 = 2;
const CLOSE: u8 = 3;
const COMMA: u8 = 4;

/// What each byte means to the scan; most mean nothing.
static CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    class[b'"' as usize] = QUOTE;
    class[b'[' as usize] = OPEN;
    class[b'{' as usize] = OPEN;
    class[b']' as usize] = CLOSE;
    class[b'}' as usize] = CLOSE;
    class[b',' as usize] = COMMA;
    class
};

/// The index of the `"` that closes the string whose text starts at
/// `start` (the byte after its opening quote), skipping escaped bytes;
/// `bytes.len()` when the string is not closed. Eight bytes at a time: a
/// word without `"` or `\\` is passed over at once (JSON-RPC bodies are
/// mostly member names and short strings); past 64 bytes the rest is left
/// to `memchr2`.
pub(crate) fn string_end(bytes: &[u8], start: usize) -> usize {
    const WORDS_UP_TO: usize = 64;
    let mut i = start;
    let words_end = bytes.len().min(start.saturating_add(WORDS_UP_TO));
    while let Some(word) = bytes.get(i..i + 8).filter(|_| i + 8 <= words_end) {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let word = u64::from_le_bytes(eight);
        let found = has_byte(word, b'"') | has_byte(word, b'\\');
        if found == 0 {
            i += 8;
            continue;
        }
        // The lowest flagged byte is a real match (see `has_byte`).
        i += (found.trailing_zeros() / 8) as usize;
        match bytes[i] {
            b'"' => return i,
            _ => i += 2,
        }
    }
    while i < words_end {
        match bytes[i] {
            b'"' => return i,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    while i < bytes.len() {
        match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
            None => return bytes.len(),
            Some(offset) if bytes[i + offset] == b'\\' => i += offset + 2,
            Some(offset) => return i + offset,
        }
    }
    bytes.len()
}

/// The high bit of each byte of `word` that equals `byte`, read little-end
/// first. Only the lowest flagged byte is certain: a borrow can flag a byte
/// above a match, never one below it, so `trailing_zeros` finds the first.
fn has_byte(word: u64, byte: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zeroed = word ^ (ONES * u64::from(byte));
    zeroed.wrapping_sub(ONES) & !zeroed & HIGHS
}

/// A limit a body exceeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exceeded {
    /// Nested deeper than this many levels.
    Depth(usize),
    /// More than this many values.
    Values(usize),
    /// A batch of more than this many messages.
    Batch(usize),
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exceeded::Depth(max) => write!(f, "the JSON is nested deeper than {max} levels"),
            Exceeded::Values(max) => write!(f, "the JSON holds more than {max} values"),
            Exceeded::Batch(max) => write!(f, "a batch holds at most {max} messages"),
        }
    }
}

impl std::error::Error for Exceeded {}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(limits: JsonLimits, body: &str) -> Result<(), Exceeded> {
        limits.check(body.as_bytes())
    }

    #[test]
    fn depth() {
        let limits = JsonLimits::default().max_depth(3);
        assert_eq!(check(limits, r#"{"a":[{"b":1}]}"#), Ok(()));
        assert_eq!(check(limits, r#"{"a":[{"b":[1]}]}"#), Err(Exceeded::Depth(3)));
        assert_eq!(check(limits, r#"{"a":"[[[[[[{{{{"}"#), Ok(()), "brackets inside strings do not count");
        assert_eq!(check(limits, r#"{"a":"\"[[[[","b":"\\"}"#), Ok(()), "escaped quotes and backslashes");
        assert_eq!(check(limits, &"[".repeat(10_000)), Err(Exceeded::Depth(3)));
    }

    #[test]
    fn values() {
        let limits = JsonLimits::default().max_values(5);
        assert_eq!(check(limits, "[1,2,3,4,5]"), Ok(()));
        assert_eq!(check(limits, "[1,2,3,4,5,6]"), Err(Exceeded::Values(5)));
        assert_eq!(check(limits, r#"{"a":"1,2,3,4,5,6,7"}"#), Ok(()), "commas inside strings do not count");
        let zeros = format!(r#"{{"a":[{}0]}}"#, "0,".repeat(2_000_000));
        assert_eq!(JsonLimits::default().check(zeros.as_bytes()), Err(Exceeded::Values(100_000)));
    }

    #[test]
    fn batches() {
        let limits = JsonLimits::default().max_batch(2);
        let call = r#"{"jsonrpc":"2.0","method":"a","params":[1,2,3],"id":1}"#;
        assert_eq!(check(limits, &format!("[{call},{call}]")), Ok(()));
        assert_eq!(check(limits, &format!(" [{call},{call},{call}]")), Err(Exceeded::Batch(2)));
        assert_eq!(check(limits, "[1, 2, 3]"), Err(Exceeded::Batch(2)), "scalar items are messages too");
        assert_eq!(check(limits, r#"["a,b,c", "d"]"#), Ok(()));
        assert_eq!(check(limits, r#"["a,b,c", "d", "e"]"#), Err(Exceeded::Batch(2)));
        assert_eq!(check(limits, "[]"), Ok(()));
        assert_eq!(check(limits, call), Ok(()), "a single message is not a batch");
        let many = format!("[{}]", vec![call; 1000].join(","));
        let started = std::time::Instant::now();
        assert_eq!(check(limits, &many), Err(Exceeded::Batch(2)));
        assert!(started.elapsed() < std::time::Duration::from_millis(50), "stops at the first excess");
    }

    /// The next of a xorshift sequence: test bodies that are the same on every run.
    fn xorshift(mut seed: u64) -> u64 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^ (seed << 17)
    }

    /// `string_end` byte by byte, as the definition.
    fn string_end_by_bytes(bytes: &[u8], start: usize) -> usize {
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => return i,
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        bytes.len()
    }

    #[test]
    fn string_end_matches_its_definition() {
        // Quotes and backslashes at every offset of the words, in runs, at
        // the end, unclosed, past the 64-byte switch to `memchr2`.
        let alphabet: &[u8] = &[b'a', b'"', b'\\', b'x', 0xC3, 0xA9, b' ', b'\\', b'"'];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            seed = xorshift(seed);
            let len = (seed % 150) as usize;
            let quiet = (seed >> 8).is_multiple_of(4);
            let bytes: Vec<u8> = (0..len)
                .map(|k| {
                    let pick = (seed.rotate_left(k as u32 % 64) ^ (k as u64 * 0x2545_F491)) % 97;
                    if quiet && pick > 3 { b'a' } else { alphabet[(pick % alphabet.len() as u64) as usize] }
                })
                .collect();
            for start in [0, 1, 7, 8, 9].into_iter().filter(|s| *s <= bytes.len()) {
                assert_eq!(string_end(&bytes, start), string_end_by_bytes(&bytes, start), "{bytes:?} from {start}");
            }
        }
        let long = format!("{}\\\"{}\"tail", "a".repeat(70), "b".repeat(100));
        assert_eq!(string_end(long.as_bytes(), 0), string_end_by_bytes(long.as_bytes(), 0));
        assert_eq!(string_end(b"abcdefgh\\", 0), 9, "an escape at the very end: unclosed");
    }

    #[test]
    fn counting_never_passes_what_the_scan_refuses() {
        // Bodies of structural bytes, strings and escapes, against small
        // limits on both sides of their counts.
        let alphabet: &[u8] = b"[]{},,\"\\a1 :";
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..20_000 {
            seed = xorshift(seed);
            let len = (seed % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|k| alphabet[((seed.rotate_left(k as u32 * 5 % 64) >> 3) % alphabet.len() as u64) as usize])
                .collect();
            let limits = JsonLimits::default()
                .max_depth((seed >> 20) as usize % 6 + 1)
                .max_values((seed >> 30) as usize % 8 + 1)
                .max_batch((seed >> 40) as usize % 8 + 1);
            let checked = limits.check(&bytes);
            let batch = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
            assert_eq!(checked, limits.scan(&bytes, batch), "{:?} under {limits:?}", String::from_utf8_lossy(&bytes));
        }
        // The counts over 255 bytes (the per-chunk counters' width) and far past it.
        for n in [254, 255, 256, 300, 100_000] {
            let deep = "[".repeat(n);
            assert_eq!(JsonLimits::default().max_depth(n).check(deep.as_bytes()), Ok(()), "{n}");
            assert_eq!(JsonLimits::default().max_depth(n - 1).check(deep.as_bytes()), Err(Exceeded::Depth(n - 1)));
            let commas = format!("[{}]", "1,".repeat(n));
            let limits = JsonLimits::default().max_values(n).max_batch(n + 1);
            assert_eq!(limits.check(commas.as_bytes()), Err(Exceeded::Values(n)), "{n}");
            let object = format!("{{\"a\":[{}1]}}", "1,".repeat(n - 1));
            assert_eq!(limits.check(object.as_bytes()), Ok(()), "{n} values");
            assert!(limits.within_by_count(object.as_bytes()), "counted, not scanned");
            let object = format!("{{\"a\":[{}1]}}", "1,".repeat(n));
            assert_eq!(limits.check(object.as_bytes()), Err(Exceeded::Values(n)), "{n} + 1 values");
        }
        let typical = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1}}}"#;
        assert!(JsonLimits::default().within_by_count(typical), "a typical call needs no scan");
    }

    #[test]
    fn malformed_input_never_panics() {
        for body in ["\"", "\"\\", "[\"\\", "{\"a\\\"", "[[[", "]]]}}}", ",,,", "", "[1,", "[\"a\" \"b\"]"] {
            let _ = JsonLimits::default().check(body.as_bytes());
        }
    }
}
