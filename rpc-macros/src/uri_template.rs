//! The syntax of `#[mcp_resource(uri = "...")]`: a URI, or an RFC 6570
//! template of levels 1 to 3 (`{var}`, `{+var}`, `{#var}`, `{.var}`,
//! `{/var}`, `{;var}`, `{?var}`, `{&var}`, several variables separated by
//! commas). The MCP layer matches URIs against it at run time; here it is
//! checked once, at compile time.

/// A variable of the template, with the operator of its expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    pub operator: Option<char>,
}

/// The template's variables in order, or why it is not a valid template.
pub fn variables(template: &str) -> Result<Vec<Variable>, String> {
    if template.is_empty() {
        return Err("the URI is empty".into());
    }
    let Some(colon) = template.find(':') else {
        return Err(format!("`{template}` has no scheme: write `scheme://...` (e.g. `catalog://products/{{id}}`)"));
    };
    let scheme = &template[..colon];
    let scheme_ok = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(format!("`{scheme}` is not a URI scheme: letters, digits, `+`, `-`, `.`, starting with a letter"));
    }
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find(['{', '}']) {
        literal(&rest[..start])?;
        if rest[start..].starts_with('}') {
            return Err("a `}` without its `{`".into());
        }
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else {
            return Err("a `{` without its `}`".into());
        };
        expression(&after[..end], &mut out)?;
        rest = &after[end + 1..];
    }
    literal(rest)?;
    let mut seen = Vec::new();
    for v in &out {
        if seen.contains(&v.name) {
            return Err(format!("variable `{}` appears twice", v.name));
        }
        seen.push(v.name.clone());
    }
    Ok(out)
}

fn literal(text: &str) -> Result<(), String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            if hex.is_none() {
                return Err("`%` must start a percent-encoded byte (`%2F`)".into());
            }
            i += 3;
            continue;
        }
        if b <= b' ' || matches!(b, b'"' | b'\'' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'|' | 0x7f) {
            let shown = text[i..].chars().next().map_or_else(String::new, |c| c.escape_default().to_string());
            return Err(format!(
                "`{shown}` may not appear in a URI template outside an expression (percent-encode it)"
            ));
        }
        i += 1;
    }
    Ok(())
}

fn expression(inner: &str, out: &mut Vec<Variable>) -> Result<(), String> {
    let mut chars = inner.chars();
    let operator = match chars.clone().next() {
        Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => {
            chars.next();
            Some(op)
        }
        Some(op @ ('=' | ',' | '!' | '@' | '|')) => {
            return Err(format!("`{{{op}...}}`: operator `{op}` is reserved by RFC 6570 for future use"));
        }
        Some(_) => None,
        None => return Err("an empty expression `{}`: name a variable".into()),
    };
    let list = chars.as_str();
    if list.is_empty() {
        return Err("an expression without a variable name".into());
    }
    for spec in list.split(',') {
        if spec.ends_with('*') || spec.contains(':') {
            return Err(format!(
                "`{spec}`: prefix (`:n`) and explode (`*`) modifiers are RFC 6570 level 4, not supported; \
                 use levels 1 to 3"
            ));
        }
        if spec.is_empty() || !valid_name(spec) {
            return Err(format!(
                "`{spec}` is not a variable name: letters, digits, `_`, percent-encoded bytes, `.` between them"
            ));
        }
        out.push(Variable { name: spec.to_owned(), operator });
    }
    Ok(())
}

fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.first() == Some(&b'.') || bytes.last() == Some(&b'.') || name.contains("..") {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => i += 3,
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => i += 1,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &str) -> Vec<String> {
        variables(t).unwrap().into_iter().map(|v| v.name).collect()
    }

    #[test]
    fn levels_one_to_three() {
        assert_eq!(names("test://static-text"), Vec::<String>::new());
        assert_eq!(names("catalog://products/{id}"), ["id"]);
        assert_eq!(names("file:///{+path}"), ["path"]);
        assert_eq!(names("x://a{/seg,rest}{?q,limit}{&page}{#frag}"), ["seg", "rest", "q", "limit", "page", "frag"]);
        assert_eq!(variables("x://{.ext}").unwrap()[0].operator, Some('.'));
    }

    #[test]
    fn refusals() {
        for bad in [
            "",
            "no-scheme/{id}",
            "1x://a",
            "x://{id",
            "x://id}",
            "x://{}",
            "x://{+}",
            "x://{id*}",
            "x://{id:3}",
            "x://{=id}",
            "x://{a b}",
            "x://a b",
            "x://{id}/{id}",
            "x://%zz",
            "x://{.a..b}",
        ] {
            assert!(variables(bad).is_err(), "{bad}");
        }
    }
}
