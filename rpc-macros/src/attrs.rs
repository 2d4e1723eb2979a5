//! The attribute arguments the macros accept, parsed with darling (which
//! also gives "did you mean" suggestions for unknown keys). Values are
//! typed: a value of the wrong kind says which kind the key takes.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, PreservedStrExpr};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Lit, LitStr, Meta};

use crate::rules::{ItemsArg, RuleArgs, RuleFields};

use crate::values::key_of;
pub use crate::values::{Str, kind_of, literal_of};

/// A whole number from 1 (`version = 2`).
#[derive(Debug, Clone)]
pub struct Version {
    pub value: u32,
}

impl FromMeta for Version {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let key = key_of(meta);
        match literal_of(meta)? {
            Lit::Int(i) => match i.base10_parse::<u32>() {
                Ok(value) if value >= 1 => Ok(Version { value }),
                _ => Err(darling::Error::custom(format!("`{key}` is a whole number from 1")).with_span(i)),
            },
            Lit::Str(s) if s.value().parse::<u32>().is_ok() => Err(darling::Error::custom(format!(
                "expected an integer for `{key}`, found a string: write `{key} = {}` without quotes",
                s.value()
            ))
            .with_span(s)),
            other => Err(darling::Error::custom(format!(
                "expected an integer for `{key}`, found {}: write e.g. `{key} = 2`",
                kind_of(other)
            ))
            .with_span(other)),
        }
    }
}

/// A boolean hint: `key = true`, `key = false`, or the bare `key` (true).
#[derive(Debug, Clone, Copy)]
pub struct Hint {
    pub value: bool,
    pub span: Span,
}

impl FromMeta for Hint {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        if let Meta::Path(path) = meta {
            return Ok(Hint { value: true, span: path.span() });
        }
        let key = key_of(meta);
        match literal_of(meta)? {
            Lit::Bool(b) => Ok(Hint { value: b.value, span: meta.span() }),
            Lit::Str(s) if matches!(s.value().as_str(), "true" | "false") => Err(darling::Error::custom(format!(
                "expected a boolean for `{key}`, found a string: write `{key} = {}` without quotes",
                s.value()
            ))
            .with_span(s)),
            other => Err(darling::Error::custom(format!(
                "expected a boolean for `{key}`, found {}: write `{key} = true` or `{key} = false`",
                kind_of(other)
            ))
            .with_span(other)),
        }
    }
}

/// A path given as a string (`crate = "my_framework::rpc"`), as serde's
/// `#[serde(crate = "...")]`.
#[derive(Debug, Clone)]
pub struct CratePath(pub syn::Path);

impl FromMeta for CratePath {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let Str(lit) = Str::from_meta(meta)?;
        lit.parse::<syn::Path>().map(CratePath).map_err(|e| {
            darling::Error::custom(format!("`crate` takes the path of the rpc crate, e.g. \"my_framework::rpc\": {e}"))
                .with_span(&lit)
        })
    }
}

/// Paths in a list (`groups(Mcp, Admin)`), each item checked by `item`:
/// a string gets `on_string`'s message instead of darling's "unexpected
/// type".
fn paths(meta: &Meta, key: &str, on_string: impl Fn(&str) -> String) -> darling::Result<Vec<syn::Path>> {
    let Meta::List(list) = meta else {
        return Err(darling::Error::custom(format!("`{key}` takes a list: `{key}(...)`")).with_span(meta));
    };
    let items = NestedMeta::parse_meta_list(list.tokens.clone())?;
    let mut errors = darling::Error::accumulator();
    let mut out = Vec::new();
    for item in &items {
        match item {
            NestedMeta::Meta(Meta::Path(path)) => out.push(path.clone()),
            NestedMeta::Lit(Lit::Str(s)) => errors.push(darling::Error::custom(on_string(&s.value())).with_span(s)),
            NestedMeta::Lit(other) => errors.push(
                darling::Error::custom(format!("`{key}(...)` lists names, not {}", kind_of(other))).with_span(other),
            ),
            other => errors.push(
                darling::Error::custom(format!("`{key}(...)` lists names, not `key = value` or lists"))
                    .with_span(other),
            ),
        }
    }
    errors.finish_with(out)
}

/// `groups(Mcp, Admin)`: group types.
#[derive(Debug, Clone, Default)]
pub struct Groups(pub Vec<syn::Path>);

impl std::ops::Deref for Groups {
    type Target = Vec<syn::Path>;
    fn deref(&self) -> &Vec<syn::Path> {
        &self.0
    }
}

impl FromMeta for Groups {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        paths(meta, "groups", |name| {
            format!(
                "groups are types, not names: write the type `api_group!` declared for \"{name}\" \
                 (e.g. `groups(Mcp)` for `api_group!(pub struct Mcp => \"{name}\", mcp = true)`)"
            )
        })
        .map(Groups)
    }
}

/// `requires_client(sampling, elicitation)`: client capability names.
#[derive(Debug, Clone, Default)]
pub struct Capabilities(pub Vec<syn::Path>);

impl std::ops::Deref for Capabilities {
    type Target = Vec<syn::Path>;
    fn deref(&self) -> &Vec<syn::Path> {
        &self.0
    }
}

impl FromMeta for Capabilities {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        paths(meta, "requires_client", |name| {
            format!("client capabilities are written bare: `requires_client({name})`, without quotes")
        })
        .map(Capabilities)
    }
}

/// `default = expr`: the bare `default` gets a message, not darling's
/// "unexpected meta-item format".
#[derive(Debug, Clone)]
pub struct DefaultExpr(pub PreservedStrExpr);

impl FromMeta for DefaultExpr {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        if let Meta::Path(path) = meta {
            return Err(darling::Error::custom(
                "`default` needs a value: `#[rpc(default = 10)]` (an expression of the parameter's type; \
                 `Option` parameters default to `None` without it)",
            )
            .with_span(path));
        }
        PreservedStrExpr::from_meta(meta).map(DefaultExpr)
    }
}

/// `#[rpc::service(...)]` on an impl block.
#[derive(Debug, Default, FromMeta)]
pub struct ServiceArgs {
    /// Method-name prefix; default: the type name. Empty: bare fn names.
    #[darling(default)]
    pub alias: Option<Str>,
    /// Between alias and fn name; default `.`.
    #[darling(default)]
    pub separator: Option<Str>,
    /// API version; default 1.
    #[darling(default)]
    pub version: Option<Version>,
    /// API group types the methods belong to.
    #[darling(default)]
    pub groups: Groups,
    /// Full method names this version removes from the previous one.
    #[darling(default)]
    pub removed: Vec<LitStr>,
    /// No "has no description" warning for the block's methods.
    #[darling(default)]
    pub undocumented: Flag,
    /// OAuth scopes every method of the block needs (a method's own
    /// `scopes(...)` add to them).
    #[darling(default)]
    pub scopes: Vec<LitStr>,
    /// Path of the `rpc` crate, for frameworks that re-export it.
    #[darling(default, rename = "crate")]
    pub krate: Option<CratePath>,
}

/// `#[rpc::info(...)]` on a method.
#[derive(Debug, Default, FromMeta)]
pub struct InfoArgs {
    /// Full method name, replacing `alias + separator + fn name`.
    #[darling(default)]
    pub name: Option<Str>,
    /// Groups replacing the service's groups for this method.
    #[darling(default)]
    pub groups: Option<Groups>,
    /// Hides the method from the API.
    #[darling(default)]
    pub skip: Flag,
    /// No "has no description" warning for this method.
    #[darling(default)]
    pub undocumented: Flag,
    /// OAuth scopes a caller needs to see and call the method
    /// (`scopes("catalog:write")`; all of them).
    #[darling(default)]
    pub scopes: Vec<LitStr>,
}

/// `#[mcp_tool(...)]` on a method.
#[derive(Debug, Default, FromMeta)]
pub struct ToolArgs {
    /// Human-readable title.
    #[darling(default)]
    pub title: Option<Str>,
    /// `readOnlyHint`.
    #[darling(default)]
    pub read_only_hint: Option<Hint>,
    /// `destructiveHint`.
    #[darling(default)]
    pub destructive_hint: Option<Hint>,
    /// `idempotentHint`.
    #[darling(default)]
    pub idempotent_hint: Option<Hint>,
    /// `openWorldHint`.
    #[darling(default)]
    pub open_world_hint: Option<Hint>,
    /// Client capabilities the tool needs (`requires_client(sampling)`).
    #[darling(default)]
    pub requires_client: Capabilities,
    /// Runs as a task of the MCP tasks extension: `task = optional` or
    /// `task = required` (`forbidden`, the default, never).
    #[darling(default)]
    pub task: Option<syn::Expr>,
    /// The method starts its task itself (`ctx.start_task()`), after its
    /// questions (needs `task`).
    #[darling(default)]
    pub starts_task: Flag,
    /// A hand-written input schema (a JSON file relative to the crate's
    /// manifest, or inline JSON): published and enforced unmodified.
    #[darling(default)]
    pub input_schema: Option<Str>,
    /// The schema of the result (a JSON file or inline JSON), published
    /// as the tool's `outputSchema` in place of the one from the type.
    #[darling(default)]
    pub output_schema: Option<Str>,
    /// The tool's `_meta` (inline JSON object).
    #[darling(default)]
    pub meta: Option<Str>,
    /// An icon of the tool (repeatable): `icon = "https://..."`.
    #[darling(multiple)]
    pub icon: Vec<Str>,
    /// OAuth scopes a caller needs to see and call the tool (as
    /// `#[rpc::info(scopes(...))]`).
    #[darling(default)]
    pub scopes: Vec<LitStr>,
}

/// `#[mcp_resource(...)]` on a method: a resource, or a resource template
/// when its URI has variables.
#[derive(Debug, Default, FromMeta)]
pub struct ResourceArgs {
    /// The URI or RFC 6570 template (levels 1 to 3).
    #[darling(default)]
    pub uri: Option<Str>,
    /// The resource's name (default: the method's name).
    #[darling(default)]
    pub name: Option<Str>,
    /// Human-readable title.
    #[darling(default)]
    pub title: Option<Str>,
    /// The MIME type of the contents.
    #[darling(default)]
    pub mime_type: Option<Str>,
    /// OAuth scopes a caller needs to see and read the resource.
    #[darling(default)]
    pub scopes: Vec<LitStr>,
}

/// `#[mcp_prompt(...)]` on a method: its parameters are the prompt's arguments.
#[derive(Debug, Default, FromMeta)]
pub struct PromptArgs {
    /// The prompt's name (default: the method's name).
    #[darling(default)]
    pub name: Option<Str>,
    /// Human-readable title.
    #[darling(default)]
    pub title: Option<Str>,
    /// OAuth scopes a caller needs to see and get the prompt.
    #[darling(default)]
    pub scopes: Vec<LitStr>,
}

/// `#[mcp_complete(prompt = "...", argument = "...")]` or
/// `#[mcp_complete(resource = "...", argument = "...")]` on a method.
#[derive(Debug, Default, FromMeta)]
pub struct CompleteArgs {
    /// The prompt whose argument is completed.
    #[darling(default)]
    pub prompt: Option<Str>,
    /// The resource template whose variable is completed.
    #[darling(default)]
    pub resource: Option<Str>,
    /// The argument (or template variable).
    #[darling(default)]
    pub argument: Option<Str>,
}

/// `header` / `header = "Name"` on a parameter: the `Mcp-Param-{Name}`
/// header (MCP SEP-2243) it is mirrored into; the bare key uses the
/// parameter's name.
#[derive(Debug, Clone)]
pub struct HeaderArg {
    /// The explicit name, if given.
    pub name: Option<LitStr>,
    pub span: Span,
}

/// Whether `name` is an RFC 9110 token (`1*tchar`).
pub fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl FromMeta for HeaderArg {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        if let Meta::Path(path) = meta {
            return Ok(HeaderArg { name: None, span: path.span() });
        }
        let Str(lit) = Str::from_meta(meta)?;
        if !is_token(&lit.value()) {
            return Err(darling::Error::custom(format!(
                "`{}` is not a valid header name part: use letters, digits and !#$%&'*+-.^_`|~ (an HTTP token)",
                lit.value()
            ))
            .with_span(&lit));
        }
        Ok(HeaderArg { span: lit.span(), name: Some(lit) })
    }
}

/// `#[rpc(...)]` on a parameter.
#[derive(Debug, Default, FromMeta)]
pub struct ParamArgs {
    /// Default value expression (of the parameter's type; a string literal
    /// converts with `Into`). It is an expression of the impl block:
    /// `Self::CONST` and associated functions work.
    #[darling(default)]
    pub default: Option<DefaultExpr>,
    /// Parameter description (overrides the `# Arguments` entry).
    #[darling(default)]
    pub description: Option<Str>,
    /// Mirrors the parameter into an `Mcp-Param-{Name}` header (SEP-2243).
    #[darling(default)]
    pub header: Option<HeaderArg>,
    /// The validation rules (`length(..)`, `range(..)`, `pattern`, formats, ...).
    #[darling(flatten)]
    pub rules: RuleFields,
    /// `items(length(max = 20), pattern = "..")`: rules for each item of a
    /// collection parameter.
    #[darling(default)]
    pub items: Option<ItemsArg>,
}

impl ParamArgs {
    /// The validation rules, as written.
    pub fn rules(&self) -> RuleArgs<'_> {
        self.rules.rules(self.items.as_ref())
    }
}

/// The `#[mcp_tool]` hints as plain values.
pub fn hint(h: Option<Hint>) -> Option<bool> {
    h.map(|h| h.value)
}
