//! Text that came from outside (a method name, a `rayId`, a URL, a header
//! value, an error message quoting the request), made safe to write into a
//! log line: [`logged`] quotes it, escapes every character that could end
//! the line, move the cursor or reorder what a terminal shows, and cuts it
//! after a bound, saying how long it was.
//!
//! ```
//! # extern crate rpc_core as rpc;
//! use rpc::logged::logged;
//!
//! let forged = "Catalog.get\n2026-12-02T00:00:00Z  WARN admin logged in\u{1b}[2K";
//! assert_eq!(
//!     logged(forged).to_string(),
//!     r#""Catalog.get\n2026-12-02T00:00:00Z  WARN admin logged in\u{1b}[2K""#
//! );
//! let long = "x".repeat(10_000);
//! assert!(logged(&long).to_string().ends_with(r#"…" (10000 bytes)"#));
//! ```
//!
//! Record it as a display field: `tracing::warn!(method = %logged(name), ...)`.

use std::fmt::{self, Write as _};

/// How much of a text [`logged`] shows, in bytes of the original.
pub const LOGGED_TEXT_BYTES: usize = 160;

/// A text quoted and escaped for a log line, cut after a bound.
#[derive(Clone, Copy)]
pub struct Logged<'a> {
    text: &'a str,
    limit: usize,
}

/// `text` for a log line, showing at most [`LOGGED_TEXT_BYTES`] of it.
pub fn logged(text: &str) -> Logged<'_> {
    Logged { text, limit: LOGGED_TEXT_BYTES }
}

/// `text` for a log line, showing at most `limit` bytes of it.
pub fn logged_up_to(text: &str, limit: usize) -> Logged<'_> {
    Logged { text, limit }
}

/// Bytes of a text that may not be valid UTF-8 (a header value), for a
/// log line: invalid sequences are shown as U+FFFD.
pub fn logged_bytes(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(LOGGED_TEXT_BYTES)];
    let shown = String::from_utf8_lossy(cut);
    let mut out = logged_up_to(&shown, usize::MAX).to_string();
    if cut.len() < bytes.len() {
        out.pop();
        let _ = write!(out, "…\" ({} bytes)", bytes.len());
    }
    out
}

/// Whether `c` must not reach a log line as it is: control characters (C0,
/// DEL, C1: newlines, escape sequences), line and paragraph separators,
/// and the invisible formatting characters that reorder or hide text
/// (bidirectional overrides and isolates, zero-width characters).
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{2028}' | '\u{2029}'                      // line / paragraph separator
            | '\u{200B}'..='\u{200F}'                    // zero-width, LRM, RLM
            | '\u{202A}'..='\u{202E}'                    // bidi embeddings and overrides
            | '\u{2060}'..='\u{2069}'                    // word joiner .. bidi isolates
            | '\u{061C}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

impl fmt::Display for Logged<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        let mut shown = 0;
        for c in self.text.chars() {
            if shown + c.len_utf8() > self.limit {
                return write!(f, "…\" ({} bytes)", self.text.len());
            }
            shown += c.len_utf8();
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if unsafe_char(c) => write!(f, "\\u{{{:x}}}", u32::from(c))?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}

impl fmt::Debug for Logged<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_ends_a_line_or_moves_the_cursor() {
        for bad in ["\n", "\r", "\u{1b}", "\u{7f}", "\u{85}", "\u{9b}", "\u{2028}", "\u{202e}", "\u{2066}", "\0"] {
            let shown = logged(&format!("a{bad}b")).to_string();
            assert!(shown.chars().all(|c| !unsafe_char(c)), "{bad:?} -> {shown:?}");
        }
        assert_eq!(logged(r#"say "hi" \ bye"#).to_string(), r#""say \"hi\" \\ bye""#);
        assert_eq!(logged("naïve Київ").to_string(), "\"naïve Київ\"", "printable text stays readable");
    }

    #[test]
    fn long_texts_are_cut_on_a_character_boundary() {
        let text = "é".repeat(1000);
        let shown = logged(&text).to_string();
        assert!(shown.len() < LOGGED_TEXT_BYTES + 32, "{}", shown.len());
        assert!(shown.ends_with("…\" (2000 bytes)"), "{shown}");
        assert_eq!(logged_up_to("abcdef", 3).to_string(), "\"abc…\" (6 bytes)");
        assert_eq!(logged_up_to("abc", 3).to_string(), "\"abc\"");
    }

    #[test]
    fn bytes_that_are_not_utf8() {
        assert_eq!(logged_bytes(b"a\xffb\n"), "\"a\u{fffd}b\\n\"");
        let long = vec![b'x'; 1000];
        assert!(logged_bytes(&long).ends_with("…\" (1000 bytes)"));
    }
}
