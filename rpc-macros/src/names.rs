//! The MCP tool-name rule, checked at expansion time.
//!
//! Mirrors `rpc::is_valid_tool_name` (which the runtime uses): 1 to 128
//! characters from `A-Z a-z 0-9 _ - .`.

/// The longest valid tool name, in characters.
pub const MAX_LEN: usize = 128;

/// Whether `name` is a valid MCP tool name.
pub fn is_valid_tool_name(name: &str) -> bool {
    why_invalid(name).is_empty()
}

/// Whether `c` may appear in a tool name.
fn is_tool_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Whether every character of `part` (an alias or a separator) may appear
/// in a tool name.
pub fn all_tool_chars(part: &str) -> bool {
    part.chars().all(is_tool_char)
}

/// Why `name` is not a valid tool name; empty if it is valid.
pub fn why_invalid(name: &str) -> String {
    if name.is_empty() {
        return "it is empty".into();
    }
    let len = name.chars().count();
    if len > MAX_LEN {
        return format!("it is {len} characters long");
    }
    let bad: Vec<String> = name.chars().filter(|c| !is_tool_char(*c)).map(|c| format!("{c:?}")).collect();
    if bad.is_empty() { String::new() } else { format!("it contains {}", bad.join(", ")) }
}

/// An identifier as written, without its `r#`.
pub fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains() {
        assert_eq!(why_invalid("Bad:ping"), "it contains ':'");
        assert_eq!(why_invalid(""), "it is empty");
        assert!(is_valid_tool_name("Catalog.search"));
        assert_eq!(why_invalid(&"a".repeat(129)), "it is 129 characters long");
    }
}
