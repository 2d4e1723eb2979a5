//! Validation rules declared on parameters (`#[rpc(length(min = 3), email)]`).
//!
//! Each rule becomes JSON Schema keywords of the parameter's schema, so
//! clients (and AI agents) see it in the input schema, and the
//! [`ParamValidator`](crate::validation::ParamValidator) enforces it before
//! the call with the other keywords (`-32602`, each parameter mapped to its
//! messages).

/// One validation rule on a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Rule {
    /// `length(min = .., max = ..)`: characters of a string (`minLength`/
    /// `maxLength`) or items of an array (`minItems`/`maxItems`).
    Length {
        /// The fewest allowed.
        min: Option<u64>,
        /// The most allowed.
        max: Option<u64>,
    },
    /// `range(min = .., max = ..)`: a number's bounds, inclusive
    /// (`minimum`/`maximum`).
    Range {
        /// The smallest allowed value.
        min: Option<f64>,
        /// The largest allowed value.
        max: Option<f64>,
    },
    /// `pattern = ".."`: an ECMA-262 regular expression a string must match
    /// (`pattern`; unanchored, as in JSON Schema).
    Pattern(&'static str),
    /// `email`, `uuid`, `date`, ...: a string format (`format`).
    Format(Format),
    /// `one_of(..)`: the value is one of these (`enum`); the JSON array of
    /// the choices.
    OneOf(&'static str),
    /// `not_blank`: a string with at least one non-whitespace character
    /// (`minLength: 1` and `pattern: "\\S"`).
    NotBlank,
}

/// String formats a [`Rule::Format`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// `email`.
    Email,
    /// `uuid` (RFC 9562, hyphenated).
    Uuid,
    /// `date` (RFC 3339 full-date, `2026-12-01`).
    Date,
    /// `date-time` (RFC 3339).
    DateTime,
    /// `uri`.
    Uri,
}

impl Format {
    /// The JSON Schema `format` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Email => "email",
            Format::Uuid => "uuid",
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Uri => "uri",
        }
    }
}
