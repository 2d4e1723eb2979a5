//! API groups.
//!
//! A group is a type that implements [`ApiGroup`]; services name group types in
//! `#[rpc::service(groups(Mcp, Admin))]`. Because a group's properties are
//! associated constants, the service macro can check at compile time the names
//! of methods in groups that are published over MCP ([`ApiGroup::MCP`]).
//!
//! ```
//! # extern crate rpc_core as rpc;
//! rpc::api_group! {
//!     /// Tools for AI agents.
//!     pub struct Mcp => "mcp", mcp = true;
//! }
//! rpc::api_group! {
//!     /// Back-office methods, never published over MCP.
//!     pub struct Admin => "admin";
//! }
//! use rpc::ApiGroup;
//! assert_eq!(Mcp::NAME, "mcp");
//! assert!(Mcp::MCP && !Admin::MCP);
//! // The crate that declared the group: what servers call themselves by default.
//! assert_eq!(Mcp::PACKAGE, rpc::Package::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")));
//! ```

/// An API group: a named set of methods that an endpoint serves.
pub trait ApiGroup: 'static {
    /// The group's name, e.g. `"mcp"`. Unique within an application.
    const NAME: &'static str;
    /// Whether the group is published over MCP. Method names of such groups
    /// must be valid MCP tool names; the check happens at compile time.
    const MCP: bool = false;
    /// The crate that declared the group ([`api_group!`](crate::api_group!) records it): the
    /// name and version a server publishing the group gives by default.
    const PACKAGE: Package = Package::UNKNOWN;
    /// Where the group was declared (`Mcp at src/groups.rs:3`, recorded by
    /// [`api_group!`](crate::api_group!)): two groups of one name in one registry are an
    /// error naming both.
    const DECLARED_AT: &'static str = "";
}

/// A group published over MCP: [`api_group!`](crate::api_group!) implements it for groups
/// declared `mcp = true` (whose method names were checked as MCP tool names
/// at compile time). MCP endpoints take only such groups
/// (`McpEndpoint::builder::<G>`), so serving a back-office group to AI
/// agents is a type error on the builder call.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not published over MCP: an MCP endpoint serves a group declared with `mcp = true`",
    label = "not an MCP group",
    note = "declare it `api_group!(pub struct {Self} => \"...\", mcp = true)`: its method names are then checked as MCP tool names at compile time"
)]
pub trait McpGroup: ApiGroup {}

/// A crate's name and version, as Cargo gives them (`CARGO_PKG_NAME`,
/// `CARGO_PKG_VERSION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Package {
    /// The crate's name.
    pub name: &'static str,
    /// Its version.
    pub version: &'static str,
}

impl Package {
    /// Nothing recorded (a group implemented by hand).
    pub const UNKNOWN: Package = Package { name: "", version: "" };

    /// `name` at `version`.
    pub const fn new(name: &'static str, version: &'static str) -> Package {
        Package { name, version }
    }

    /// Whether a name is recorded.
    pub const fn is_known(&self) -> bool {
        !self.name.is_empty()
    }
}

/// A group as stored in method metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupRef {
    /// The group's name.
    pub name: &'static str,
    /// Whether the group is published over MCP.
    pub mcp: bool,
    /// The crate that declared the group.
    pub package: Package,
    /// Where the group type was declared ([`ApiGroup::DECLARED_AT`]).
    pub declared_at: &'static str,
}

impl GroupRef {
    /// The metadata of group type `G`.
    pub const fn of<G: ApiGroup>() -> GroupRef {
        GroupRef { name: G::NAME, mcp: G::MCP, package: G::PACKAGE, declared_at: G::DECLARED_AT }
    }
}

/// Declares an API group type.
///
/// `api_group!(pub struct Mcp => "mcp", mcp = true;)` declares a unit struct
/// `Mcp` implementing [`ApiGroup`] with name `"mcp"`, published over MCP.
/// Without `mcp = true` the group is not published over MCP. The group
/// records the crate it is declared in ([`ApiGroup::PACKAGE`]).
#[macro_export]
macro_rules! api_group {
    ($(#[$m:meta])* $vis:vis struct $name:ident => $group:literal, mcp = true $(;)?) => {
        $crate::api_group!($(#[$m])* $vis struct $name => $group, mcp = (true));
        impl $crate::McpGroup for $name {}
    };
    ($(#[$m:meta])* $vis:vis struct $name:ident => $group:literal, mcp = ($mcp:literal)) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default)]
        $vis struct $name;
        impl $crate::ApiGroup for $name {
            const NAME: &'static str = $group;
            const MCP: bool = $mcp;
            const PACKAGE: $crate::Package =
                $crate::Package::new(::core::env!("CARGO_PKG_NAME"), ::core::env!("CARGO_PKG_VERSION"));
            const DECLARED_AT: &'static str =
                ::core::concat!(::core::stringify!($name), " at ", ::core::file!(), ":", ::core::line!());
        }
    };
    ($(#[$m:meta])* $vis:vis struct $name:ident => $group:literal $(, mcp = $mcp:literal)? $(;)?) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default)]
        $vis struct $name;
        impl $crate::ApiGroup for $name {
            const NAME: &'static str = $group;
            $(const MCP: bool = $mcp;)?
            const PACKAGE: $crate::Package =
                $crate::Package::new(::core::env!("CARGO_PKG_NAME"), ::core::env!("CARGO_PKG_VERSION"));
            const DECLARED_AT: &'static str =
                ::core::concat!(::core::stringify!($name), " at ", ::core::file!(), ":", ::core::line!());
        }
    };
}

/// Whether `name` is a valid MCP tool name: 1 to 128 characters from
/// `A-Z a-z 0-9 _ - .` (the rule the MCP specification gives for tool names).
pub const fn is_valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 128 {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.') {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::is_valid_tool_name;

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("Catalog.search"));
        assert!(is_valid_tool_name("a-b_c.D9"));
        assert!(is_valid_tool_name(&"x".repeat(128)));
        assert!(!is_valid_tool_name(&"x".repeat(129)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("Bad:ping"));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name("ünï"));
    }
}
