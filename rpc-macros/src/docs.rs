//! Doc comments → summary, description and parameter descriptions.
//!
//! The first paragraph is the summary, the rest the description. A rustdoc
//! `# Arguments` section (`* `who` - Who is pinging`) gives parameter
//! descriptions and is left out of the description.

use std::collections::BTreeMap;

use proc_macro2::Span;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// What a doc comment says.
#[derive(Debug, Default, PartialEq)]
pub struct Docs {
    pub summary: Option<String>,
    pub description: Option<String>,
    /// Parameter descriptions from `# Arguments`, by parameter name.
    pub arguments: BTreeMap<String, String>,
}

/// One line of a doc comment and where it was written.
#[derive(Debug, Clone)]
pub struct DocLine {
    pub text: String,
    pub span: Span,
}

impl PartialEq for DocLine {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// The lines of the `#[doc = "..."]` attributes, each with the span of its attribute.
pub fn doc_lines(attrs: &[Attribute]) -> Vec<DocLine> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                // The attribute's first token (what `Spanned` gives on a
                // stable compiler): a doc comment's tokens all carry its span.
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some((doc_value(s), a.pound_token.span)),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|(s, span)| {
            s.split('\n')
                .map(|l| DocLine { text: l.strip_prefix(' ').unwrap_or(l).trim_end().to_owned(), span })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A doc string's text: a plain `"..."` literal without escapes is its own
/// text between the quotes (most doc comments; syn's unescaping, character
/// by character, is most of the macro's time on documentation otherwise);
/// any other literal is unescaped by syn.
fn doc_value(literal: &syn::LitStr) -> String {
    let repr = literal.token().to_string();
    match repr.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')) {
        Some(text) if !text.as_bytes().contains(&b'\\') && !text.as_bytes().contains(&b'"') => text.to_owned(),
        _ => literal.value(),
    }
}

/// An `# Arguments` entry: the name it documents and where.
#[derive(Debug, Clone)]
pub struct ArgumentEntry {
    pub name: String,
    pub span: Span,
}

/// The entries of the `# Arguments` section, in order (to check that each
/// names a parameter).
pub fn argument_entries(lines: &[DocLine]) -> Vec<ArgumentEntry> {
    let mut entries = Vec::new();
    walk(lines, |line, in_arguments| {
        if in_arguments && let Some((name, _)) = argument_item(line.text.trim()) {
            entries.push(ArgumentEntry { name, span: line.span });
        }
    });
    entries
}

/// Calls `f` with every line that is not a heading, and whether it is
/// inside an `# Arguments` (or `# Parameters`) section.
fn walk<'a>(lines: &'a [DocLine], mut f: impl FnMut(&'a DocLine, bool)) {
    let mut in_arguments = false;
    let mut in_code = false;
    for line in lines {
        let trimmed = line.text.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && trimmed.starts_with('#') {
            let heading = trimmed.trim_start_matches('#').trim();
            in_arguments = heading.eq_ignore_ascii_case("arguments") || heading.eq_ignore_ascii_case("parameters");
            if in_arguments {
                continue;
            }
        }
        f(line, in_arguments);
    }
}

/// Parses doc lines.
pub fn parse(lines: &[DocLine]) -> Docs {
    let mut body: Vec<&str> = Vec::new();
    let mut arguments = BTreeMap::new();
    let mut current: Option<String> = None;
    walk(lines, |line, in_arguments| {
        let trimmed = line.text.trim();
        if !in_arguments {
            current = None;
            body.push(&line.text);
            return;
        }
        if let Some((name, text)) = argument_item(trimmed) {
            arguments.insert(name.clone(), text);
            current = Some(name);
        } else if !trimmed.is_empty()
            && let Some(name) = &current
            && let Some(text) = arguments.get_mut(name)
        {
            text.push(' ');
            text.push_str(trimmed);
        }
    });
    let text = body.join("\n");
    let text = text.trim();
    let (summary, rest) = match text.find("\n\n") {
        Some(i) => (&text[..i], text[i..].trim()),
        None => (text, ""),
    };
    let summary = summary.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    Docs {
        summary: (!summary.is_empty()).then_some(summary),
        description: (!rest.is_empty()).then(|| rest.to_owned()),
        arguments,
    }
}

/// `* `name` - text`, `- `name`: text`, `* name - text`.
fn argument_item(line: &str) -> Option<(String, String)> {
    let item = line.strip_prefix('*').or_else(|| line.strip_prefix('-'))?.trim_start();
    let (name, rest) = if let Some(rest) = item.strip_prefix('`') {
        let end = rest.find('`')?;
        (&rest[..end], &rest[end + 1..])
    } else {
        let end = item.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
        (&item[..end], &item[end..])
    };
    let rest = rest.trim_start();
    let text = ["-", ":", "–", "—"].iter().find_map(|sep| rest.strip_prefix(sep)).unwrap_or(rest).trim();
    let name = name.strip_prefix("r#").unwrap_or(name);
    (!name.is_empty()).then(|| (name.to_owned(), text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<DocLine> {
        s.lines().map(|l| DocLine { text: l.to_owned(), span: Span::call_site() }).collect()
    }

    #[test]
    fn summary_only() {
        let d = parse(&lines("Ping.\n\n# Arguments\n* `who` - Who is pinging"));
        assert_eq!(d.summary.as_deref(), Some("Ping."));
        assert_eq!(d.description, None);
        assert_eq!(d.arguments["who"], "Who is pinging");
    }

    #[test]
    fn description_and_continuations() {
        let d = parse(&lines(
            "Search products\nby name.\n\nReturns the most relevant first.\n\n# Arguments\n\n* `query` - Text to look for,\n  case-insensitive.\n- `limit`: At most this many\n\n# Errors\nNever.",
        ));
        assert_eq!(d.summary.as_deref(), Some("Search products by name."));
        assert_eq!(d.description.as_deref(), Some("Returns the most relevant first.\n\n# Errors\nNever."));
        assert_eq!(d.arguments["query"], "Text to look for, case-insensitive.");
        assert_eq!(d.arguments["limit"], "At most this many");
    }

    #[test]
    fn blank_doc_lines_separate_paragraphs() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " Get one."]),
            syn::parse_quote!(#[doc = ""]),
            syn::parse_quote!(#[doc = " More."]),
        ];
        let d = parse(&doc_lines(&attrs));
        assert_eq!(d.summary.as_deref(), Some("Get one."));
        assert_eq!(d.description.as_deref(), Some("More."));
    }

    #[test]
    fn entries_of_the_arguments_section_only() {
        let entries = argument_entries(&lines(
            "Text.\n\n* `x` - not an argument\n\n# Arguments\n* `a` - A\n  more\n- `b`: B\n\n# Errors\n* `c` - no",
        ));
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn empty() {
        assert_eq!(parse(&[]), Docs::default());
    }

    /// A doc string reads the same through the plain path (no escapes) as
    /// through syn's unescaping, which every other literal takes.
    #[test]
    fn doc_strings_read_as_syn_reads_them() {
        for source in [
            r#"" Looks up an item.""#,
            r#"" Ünïcode and `code`""#,
            r#"" The item's id""#,
            r#"" A \"quoted\" word""#,
            r#"" back\\slash \t tab""#,
            r##"r#" raw "quotes" and \ "#"##,
            r#""""#,
        ] {
            let literal: syn::LitStr = syn::parse_str(source).expect(source);
            assert_eq!(doc_value(&literal), literal.value(), "{source}");
        }
        let escaped: syn::LitStr = syn::parse_str(r#"" a \n b""#).expect("a literal");
        assert_eq!(doc_value(&escaped), " a \n b", "an escape is unescaped");
    }
}
