//! The attribute arguments the macros accept, parsed with darling (which
//! also gives "did you mean" suggestions for unknown keys).

use darling::FromMeta;
use darling::util::{Flag, PathList, PreservedStrExpr};
use syn::{LitInt, LitStr};

/// `#[rpc::service(...)]` on an impl block.
#[derive(Debug, Default, FromMeta)]
pub struct ServiceArgs {
    /// Method-name prefix; default: the type name. Empty: bare fn names.
    #[darling(default)]
    pub alias: Option<LitStr>,
    /// Between alias and fn name; default `.`.
    #[darling(default)]
    pub separator: Option<LitStr>,
    /// API version; default 1.
    #[darling(default)]
    pub version: Option<LitInt>,
    /// API group types the methods belong to.
    #[darling(default)]
    pub groups: PathList,
    /// Full method names this version removes from the previous one.
    #[darling(default)]
    pub removed: Vec<LitStr>,
}

/// `#[rpc::info(...)]` on a method.
#[derive(Debug, Default, FromMeta)]
pub struct InfoArgs {
    /// Full method name, replacing `alias + separator + fn name`.
    #[darling(default)]
    pub name: Option<LitStr>,
    /// Groups replacing the service's groups for this method.
    #[darling(default)]
    pub groups: Option<PathList>,
    /// Hides the method from the API.
    #[darling(default)]
    pub skip: Flag,
}

/// `#[mcp_tool(...)]` on a method.
#[derive(Debug, Default, FromMeta)]
pub struct ToolArgs {
    /// Human-readable title.
    #[darling(default)]
    pub title: Option<LitStr>,
    /// `readOnlyHint`.
    #[darling(default)]
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`.
    #[darling(default)]
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`.
    #[darling(default)]
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`.
    #[darling(default)]
    pub open_world_hint: Option<bool>,
}

/// `#[rpc(...)]` on a parameter.
#[derive(Debug, Default, FromMeta)]
pub struct ParamArgs {
    /// Default value expression (of the parameter's type; a string literal
    /// converts with `Into`).
    #[darling(default)]
    pub default: Option<PreservedStrExpr>,
    /// Parameter description (overrides the `# Arguments` entry).
    #[darling(default)]
    pub description: Option<LitStr>,
}
