//! Matching URIs against the RFC 6570 templates (levels 1 to 3) of
//! resource templates: `resources/read` of `catalog://products/7` against
//! `catalog://products/{id}` gives `id = "7"`.
//!
//! The template's syntax was checked at compile time (`#[mcp_resource]`);
//! [`UriTemplate::parse`] checks it again for descriptors written by hand.
//! Values are percent-decoded; a value that does not decode to UTF-8 makes
//! the URI not match.
//!
//! ```
//! let t = mcp::uri_template::UriTemplate::parse("x://items/{id}{?lang}").unwrap();
//! assert_eq!(t.matches("x://items/7?lang=uk").unwrap(), vec![("id".into(), "7".into()), ("lang".into(), "uk".into())]);
//! assert_eq!(t.matches("x://items/7").unwrap(), vec![("id".into(), "7".into())]);
//! assert!(t.matches("x://other/7").is_none());
//! ```

use regex::Regex;

/// A compiled URI template.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    source: String,
    regex: Regex,
    variables: Vec<String>,
    /// Characters outside expressions: more literal text is a more
    /// specific template, tried first.
    literal_len: usize,
}

/// The longest URI matched (longer ones are not resources of this server).
pub const MAX_URI_BYTES: usize = 8 * 1024;

impl UriTemplate {
    /// Compiles `template`.
    pub fn parse(template: &str) -> Result<UriTemplate, String> {
        let mut pattern = String::from("^");
        let mut variables = Vec::new();
        let mut literal_len = 0;
        let mut rest = template;
        while let Some(start) = rest.find('{') {
            literal_len += start;
            pattern.push_str(&regex::escape(&rest[..start]));
            let after = &rest[start + 1..];
            let end = after.find('}').ok_or_else(|| format!("`{template}`: a `{{` without its `}}`"))?;
            expression(&after[..end], &mut pattern, &mut variables).map_err(|e| format!("`{template}`: {e}"))?;
            rest = &after[end + 1..];
        }
        if rest.contains('}') {
            return Err(format!("`{template}`: a `}}` without its `{{`"));
        }
        literal_len += rest.len();
        pattern.push_str(&regex::escape(rest));
        pattern.push('$');
        let regex = regex::RegexBuilder::new(&pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("`{template}` does not compile: {e}"))?;
        Ok(UriTemplate { source: template.to_owned(), regex, variables, literal_len })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variables, in order.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// Whether the template has no variable.
    pub fn is_literal(&self) -> bool {
        self.variables.is_empty()
    }

    /// Characters of literal text (a specificity for ordering).
    pub fn literal_len(&self) -> usize {
        self.literal_len
    }

    /// The variables' decoded values if `uri` matches (variables absent
    /// from the URI are left out).
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        if uri.len() > MAX_URI_BYTES {
            return None;
        }
        let captures = self.regex.captures(uri)?;
        let mut out = Vec::with_capacity(self.variables.len());
        for (i, name) in self.variables.iter().enumerate() {
            if let Some(m) = captures.name(&format!("v{i}")) {
                out.push((name.clone(), decode(m.as_str())?));
            }
        }
        Some(out)
    }
}

/// Appends the pattern of one expression (`inner` is between the braces).
fn expression(inner: &str, pattern: &mut String, variables: &mut Vec<String>) -> Result<(), String> {
    let (operator, list) = match inner.chars().next() {
        Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(op), &inner[1..]),
        Some('=' | ',' | '!' | '@' | '|') => return Err("a reserved operator".into()),
        Some(_) => (None, inner),
        None => return Err("an empty expression".into()),
    };
    for (n, name) in list.split(',').enumerate() {
        let valid = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%'))
            && !name.starts_with('.');
        if !valid {
            return Err(format!("`{name}` is not a variable name (levels 1 to 3: no `*` or `:n`)"));
        }
        let group = format!("(?P<v{}>", variables.len());
        let escaped = regex::escape(name);
        let piece = match operator {
            // Simple and reserved expansion: values separated by commas.
            None => format!("{}{group}[^/?#&,]*)", if n > 0 { "," } else { "" }),
            Some('+') => format!("{}{group}[^?#,]*?)", if n > 0 { "," } else { "" }),
            Some('#') if n == 0 => format!("(?:#{group}[^,]*))"),
            Some('#') => format!("(?:,{group}[^,]*))?"),
            Some('.') => format!("(?:\\.{group}[^/?#.]*))?"),
            Some('/') => format!("(?:/{group}[^/?#]*))?"),
            Some(';') => format!("(?:;{escaped}(?:={group}[^;/?#]*))?)?"),
            Some('?' | '&') => format!("(?:[?&]{escaped}={group}[^&#]*))?"),
            Some(_) => unreachable!("operators are matched above"),
        };
        pattern.push_str(&piece);
        if operator == Some('#') && n == 0 {
            // The fragment as a whole is optional.
            pattern.push('?');
        }
        variables.push(name.to_owned());
    }
    Ok(())
}

/// Percent-decodes `text`; `None` when it is not UTF-8 once decoded.
fn decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t).unwrap().matches(uri)
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect())
    }

    #[test]
    fn simple_and_literal() {
        assert_eq!(vars("test://static-text", "test://static-text"), pairs(&[]));
        assert_eq!(vars("test://static-text", "test://static-text2"), None);
        assert_eq!(vars("test://template/{id}/data", "test://template/123/data"), pairs(&[("id", "123")]));
        assert_eq!(vars("test://template/{id}/data", "test://template/1/2/data"), None, "no `/` in a simple value");
        assert_eq!(vars("x://{a},{b}", "x://1,2"), pairs(&[("a", "1"), ("b", "2")]));
        assert_eq!(vars("x://{name}", "x://caf%C3%A9"), pairs(&[("name", "café")]));
        assert_eq!(vars("x://{name}", "x://%FF"), None, "not UTF-8");
        assert_eq!(vars("x://a.b/{id}", "x://aXb/1"), None, "literals are literal");
    }

    #[test]
    fn operators() {
        assert_eq!(vars("file:///{+path}", "file:///a/b/c.txt"), pairs(&[("path", "a/b/c.txt")]));
        assert_eq!(vars("x://a{/seg}", "x://a/one"), pairs(&[("seg", "one")]));
        assert_eq!(vars("x://a{/seg}", "x://a"), pairs(&[]));
        assert_eq!(vars("x://f{.ext}", "x://f.json"), pairs(&[("ext", "json")]));
        assert_eq!(vars("x://m{;v}", "x://m;v=2"), pairs(&[("v", "2")]));
        assert_eq!(vars("x://s{?q,page}", "x://s?q=lamp&page=2"), pairs(&[("q", "lamp"), ("page", "2")]));
        assert_eq!(vars("x://s{?q}{&page}", "x://s?q=a%20b&page=3"), pairs(&[("q", "a b"), ("page", "3")]));
        assert_eq!(vars("x://d{#frag}", "x://d#top"), pairs(&[("frag", "top")]));
    }

    #[test]
    fn hostile_input() {
        let t = UriTemplate::parse("x://{a}{/b}{?c}").unwrap();
        assert!(t.matches(&format!("x://{}", "a".repeat(MAX_URI_BYTES))).is_none());
        assert!(t.matches("x://%").is_some(), "a lone `%` stays as it is");
        for bad in ["x://{", "x://}", "x://{}", "x://{a*}", "x://{a:3}", "x://{=a}", "x://{a b}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
