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
        let batch = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
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

/// The index of the quote that closes the string starting at `start` (just
/// after its opening quote), skipping escaped characters; `bytes.len()`
/// when it is not closed. Short strings (keys, method names) are walked
/// byte by byte; long ones searched with `memchr`.
pub(crate) fn string_end(bytes: &[u8], start: usize) -> usize {
    const SHORT: usize = 32;
    let mut i = start;
    let short_end = bytes.len().min(start + SHORT);
    while i < short_end {
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

    #[test]
    fn malformed_input_never_panics() {
        for body in ["\"", "\"\\", "[\"\\", "{\"a\\\"", "[[[", "]]]}}}", ",,,", "", "[1,", "[\"a\" \"b\"]"] {
            let _ = JsonLimits::default().check(body.as_bytes());
        }
    }
}
