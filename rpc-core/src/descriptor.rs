//! Compile-time method metadata.
//!
//! `#[rpc::service]` turns every exposed method of an impl block into a
//! [`MethodSlot`] (most often a [`CompactMethod`], its texts and flags in
//! one string, read into a [`MethodDescriptor`] when the registry first
//! reads it) and every impl block into a [`ServiceDescriptor`], and
//! submits the service descriptor to [`inventory`]. Everything here is
//! `'static` data plus function pointers; nothing is computed until the
//! [`Registry`](crate::Registry) is built at startup.

use std::any::{Any, TypeId};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::{Schema, SchemaGenerator};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::context::Context;
use crate::error::{Environment, RpcError};
use crate::error_codes::ErrorCode;
use crate::group::GroupRef;
pub use crate::rules::{Format, Rule};

/// A registered service instance, shared by every call of its methods.
pub type ServiceInstance = Arc<dyn Any + Send + Sync>;

/// What a method invocation produces: the result serialised once, or an error.
pub type InvokeResult = Result<Box<RawValue>, RpcError>;

/// What calling a method's invoke function returns: a sync method has
/// already run (no future is allocated); an async one gives its future,
/// which borrows the service for `'a` (the invocation's borrow of it).
pub enum Invoked<'a> {
    /// The method ran to completion (sync methods, and calls refused while binding).
    Ready(InvokeResult),
    /// The method's future, still to be polled.
    Pending(BoxFuture<'a, InvokeResult>),
    /// Its arguments as their types describe them, in order (the answer
    /// to [`Invocation::Shape`]).
    Shape(&'static [ArgShape]),
}

impl std::fmt::Debug for Invoked<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invoked::Ready(result) => f.debug_tuple("Ready").field(result).finish(),
            Invoked::Pending(_) => f.write_str("Pending(..)"),
            Invoked::Shape(shape) => f.debug_tuple("Shape").field(shape).finish(),
        }
    }
}

/// What a method's invoke function is asked to do.
pub enum Invocation<'a> {
    /// Call the method on `instance` with named parameters that have
    /// already been validated against its input schema, the call's request
    /// context and the method's own descriptor (where the generated code
    /// reads the method's and its arguments' names, instead of carrying
    /// them as constants of its own).
    Call {
        /// The service.
        instance: &'a ServiceInstance,
        /// The arguments, by name.
        params: serde_json::Map<String, Value>,
        /// The call's request context.
        context: &'a Context,
        /// The method's descriptor.
        method: &'a MethodDescriptor,
    },
    /// Describe the method's arguments ([`Invoked::Shape`]): how a
    /// [`CompactMethod`] learns its arguments' schemas and kinds, once, from
    /// the one place its code names their types.
    Shape,
}

/// One argument as its type describes it.
#[derive(Clone, Copy, Debug)]
pub struct ArgShape {
    /// Its schema (`None`: not a parameter).
    pub schema: ParamSchemaFn,
    /// Whether it is a parameter (not a [`Context`]).
    pub is_param: bool,
}

/// A method's code: calls it, or describes its arguments.
pub type InvokeFn = for<'a> fn(Invocation<'a>) -> Invoked<'a>;

/// Builds the schema of a parameter (`None` for an argument that is not
/// one) with a caller-chosen generator, so that the caller decides where
/// referenced definitions go (`$defs` of one tool, or
/// `components.schemas` of an OpenRPC document). One function per type,
/// shared by every method with a parameter of that type.
pub type ParamSchemaFn = fn(&mut SchemaGenerator) -> Option<Schema>;

/// Builds the schema of a method's result, as [`ParamSchemaFn`] does a
/// parameter's.
pub type ResultSchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// One `impl` block annotated with `#[rpc::service]`.
#[derive(Debug)]
pub struct ServiceDescriptor {
    /// `TypeId` of the service type (the `Self` type of the impl block).
    pub type_id: fn() -> TypeId,
    /// Rust type name of the service, for messages.
    pub type_name: &'static str,
    /// Method-name alias (by default the type name; may be empty).
    pub alias: &'static str,
    /// The doc comment of the impl block: the description of the OpenRPC
    /// tag its methods carry.
    pub description: Option<&'static str>,
    /// API version the block belongs to (1, 2, ...).
    pub version: u32,
    /// Full method names this version removes from the previous version.
    pub removed: &'static [&'static str],
    /// The methods of the block, in declaration order (a method that a
    /// renamed `#[info(skip)]` hid after the block was expanded is
    /// [`MethodSlot::Hidden`]).
    pub method_slots: &'static [MethodSlot],
    /// Source file of the impl block.
    pub file: &'static str,
    /// Source line of the impl block.
    pub line: u32,
}

/// One entry of a service's method table.
#[derive(Debug)]
pub enum MethodSlot {
    /// A method hidden after its block was expanded (a renamed
    /// `#[info(skip)]`).
    Hidden,
    /// A method written out as its descriptor.
    Described(&'static MethodDescriptor),
    /// A method written as one string and its functions.
    Compact(CompactMethod),
}

/// A method's descriptor as one string (its texts and flags: see the
/// `compact_method` module's documentation) beside the parts that are
/// functions or name types.
#[derive(Debug)]
pub struct CompactMethod {
    /// The texts and flags, encoded.
    pub text: &'static str,
    /// Calls the method, and describes its arguments: their schemas and
    /// kinds are read from it ([`Invocation::Shape`]).
    pub invoke: InvokeFn,
    /// Builds the result's schema (`None`: the method returns `()`).
    pub result_schema: Option<ResultSchemaFn>,
    /// The application errors the method can answer with.
    pub errors: fn() -> &'static [ErrorCode],
    /// Each argument's default, serialised; empty when none has one.
    pub param_defaults: &'static [Option<fn() -> Value>],
    /// API groups the method belongs to.
    pub groups: &'static [GroupRef],
    /// Source line of the method.
    pub line: u32,
}

/// One exposed method.
#[derive(Debug)]
pub struct MethodDescriptor {
    /// Full method name (`alias + separator + fn name`, or the `#[rpc::info(name)]` override).
    pub name: &'static str,
    /// The Rust function name.
    pub fn_name: &'static str,
    /// API groups the method belongs to.
    pub groups: &'static [GroupRef],
    /// First paragraph of the doc comment.
    pub summary: Option<&'static str>,
    /// The rest of the doc comment (without the `# Arguments` section).
    pub description: Option<&'static str>,
    /// Deprecation note from `#[deprecated]`, `Some("")` when deprecated without a note.
    pub deprecated: Option<&'static str>,
    /// Parameters in declaration order.
    pub params: &'static [ParamDescriptor],
    /// What kind of value the method returns.
    pub output: OutputKind,
    /// MCP tool hints from `#[mcp_tool(...)]`.
    pub tool: ToolHints,
    /// What the method is to MCP (`#[mcp_resource]`, `#[mcp_prompt]`,
    /// `#[mcp_complete]`; a tool by default).
    pub mcp: crate::mcp_role::McpRole,
    /// Builds the result's schema (`None`: the method returns `()`).
    pub result_schema: Option<ResultSchemaFn>,
    /// Calls the method.
    pub invoke: InvokeFn,
    /// Source line of the method.
    pub line: u32,
    /// OAuth scopes a caller needs, all of them, to see and call the
    /// method (`scopes(...)` of `#[rpc::info]` or `#[mcp_tool]`). Checked
    /// against identities that carry scopes (OAuth); empty: anyone the
    /// access policy lets in.
    pub scopes: &'static [&'static str],
    /// Result caching, from `#[rpc::cache(...)]`.
    pub cache: Option<CachePolicy>,
    /// Mutual exclusion of concurrent calls, from `#[rpc::lock(...)]`.
    pub lock: Option<LockPolicy>,
    /// Methods whose cached results this one invalidates (and optionally
    /// warms up again) after its response was sent, from
    /// `#[rpc::invalidates(...)]`.
    pub invalidates: &'static [Relation],
    /// The application errors the method can answer with: the
    /// [`ErrorCodes`](crate::ErrorCodes) of its `Result`'s error type, or
    /// none when that type does not list them.
    pub errors: fn() -> &'static [ErrorCode],
}

impl MethodDescriptor {
    /// The schemas of the parameters and the result, built with one
    /// generator (see [`ParamSchemaFn`]).
    pub fn schemas(&self, generator: &mut SchemaGenerator) -> MethodSchemas {
        MethodSchemas {
            params: self.params.iter().map(|param| (param.schema)(generator)).collect(),
            result: self.result_schema.map(|schema| schema(generator)),
        }
    }
}

/// `#[rpc::cache(ttl = 60, env(prod))]`: results are stored for `ttl_secs`
/// and served without calling the method, in the listed environments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    /// How long a result is served from the cache, in seconds (at least 1).
    pub ttl_secs: u64,
    /// The environments caching applies in (default: production only).
    pub environments: &'static [Environment],
}

impl CachePolicy {
    /// Whether results are cached when the server runs in `env`.
    pub fn applies_in(&self, env: Environment) -> bool {
        self.environments.contains(&env)
    }
}

/// `#[rpc::lock(param = "id", ttl = 30)]`: a second call with the same key
/// while one runs fails fast with `-32400` ("Method 'X' is locked").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockPolicy {
    /// The parameter whose value keys the lock (`None`: one lock per method).
    pub param: Option<&'static str>,
    /// How long the lock holds at most, in seconds: it expires after this
    /// even if the process holding it died.
    pub ttl_secs: u64,
}

/// One method named by `#[rpc::invalidates(...)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relation {
    /// The full name of the related method (same API version).
    pub method: &'static str,
    /// Whether its entry is computed again (warmed up) after invalidation.
    pub warm_up: bool,
}

/// One method argument: a parameter, or a value the transport provides.
#[derive(Debug)]
pub struct ParamDescriptor {
    /// JSON name of the parameter (the Rust identifier).
    pub name: &'static str,
    /// Whether it comes from the request's parameters and is part of the
    /// input schema (false for a [`Context`]).
    pub is_param: bool,
    /// The `Mcp-Param-{name}` header it is mirrored into (`#[rpc(header)]`).
    pub header: Option<&'static str>,
    /// Description from `#[rpc(description = ...)]` or the rustdoc `# Arguments` list.
    pub description: Option<&'static str>,
    /// Whether the caller must pass it (no default, not an `Option`).
    pub required: bool,
    /// The default value, serialised, when the parameter has one.
    pub default: Option<fn() -> Value>,
    /// Validation rules from `#[rpc(length(..), pattern = "..", ...)]`:
    /// JSON Schema keywords of the parameter, enforced before the call.
    pub rules: &'static [Rule],
    /// Builds the parameter's schema.
    pub schema: ParamSchemaFn,
}

/// How a method's return value is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputKind {
    /// The method returns a value with a schema.
    Value,
    /// The method returns `()` (or `Result<(), E>`): no result schema.
    Unit,
}

/// MCP `ToolAnnotations` hints and title, set with `#[mcp_tool(...)]`.
///
/// Unset fields are `None` and left out of the output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    /// Human-readable title.
    pub title: Option<&'static str>,
    /// The tool does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive_hint: Option<bool>,
    /// Calling the tool again with the same arguments has no further effect.
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: Option<bool>,
    /// Client capabilities the tool needs (`#[mcp_tool(requires_client(sampling))]`);
    /// a client that did not declare one gets `-32021` instead of a call.
    pub requires_client: &'static [&'static str],
    /// Whether the tool runs as a task of the MCP tasks extension
    /// (`#[mcp_tool(task = optional)]`).
    pub task: TaskSupport,
    /// The method starts its task itself ([`Context::start_task`](crate::Context::start_task)),
    /// after asking what it needs in input-required rounds
    /// (`#[mcp_tool(task = required, starts_task)]`); otherwise the task
    /// starts before the method runs.
    pub starts_task: bool,
    /// A hand-written input schema (JSON, checked at compile time:
    /// `#[mcp_tool(input_schema = "schemas/x.json")]`) that replaces the
    /// one built from the parameters: published as written (MCP
    /// `inputSchema`) and enforced before the call, over MCP and `/rpc`.
    pub input_schema: Option<&'static str>,
    /// A hand-written schema of the result (JSON, checked at compile time:
    /// `#[mcp_tool(output_schema = "schemas/y.json")]`) in place of the one
    /// from the result type: MCP's `outputSchema` is
    /// `{"type": "object", "properties": {"result": <it>}}`, as
    /// `structuredContent` is `{"result": ...}`. Published, not enforced.
    pub output_schema: Option<&'static str>,
    /// The tool's `_meta` (a JSON object, `#[mcp_tool(meta = r#"{...}"#)]`).
    pub meta: Option<&'static str>,
    /// The tool's icons (`#[mcp_tool(icon = "https://...")]`, repeatable).
    pub icons: &'static [&'static str],
}

/// Whether a tool runs as a task (the MCP extension
/// `io.modelcontextprotocol/tasks`): the call is answered at once with a
/// task id, and the client polls the task for its status, the questions it
/// asks and finally its result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task for clients that declare the extension, a plain call for others.
    Optional,
    /// Only as a task: a client that does not declare the extension gets
    /// `-32021` (missing client capability).
    Required,
}

impl TaskSupport {
    /// The wire name (`forbidden`, `optional`, `required`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

impl ToolHints {
    /// No hints set.
    pub const NONE: ToolHints = ToolHints {
        title: None,
        read_only_hint: None,
        destructive_hint: None,
        idempotent_hint: None,
        open_world_hint: None,
        requires_client: &[],
        task: TaskSupport::Forbidden,
        starts_task: false,
        input_schema: None,
        output_schema: None,
        meta: None,
        icons: &[],
    };
}

/// Schemas of one method, built with one generator.
#[derive(Debug, Clone)]
pub struct MethodSchemas {
    /// One schema per argument, in declaration order (`None` for arguments
    /// that are not parameters).
    pub params: Vec<Option<Schema>>,
    /// Schema of the result, `None` for `()`.
    pub result: Option<Schema>,
}

impl ServiceDescriptor {
    /// The exposed methods of the block, in declaration order.
    pub fn methods(&self) -> impl Iterator<Item = &'static MethodDescriptor> + use<> {
        self.method_slots.iter().filter_map(MethodSlot::descriptor)
    }
}

inventory::collect!(ServiceDescriptor);

/// Every service descriptor linked into this binary.
pub fn all_services() -> impl Iterator<Item = &'static ServiceDescriptor> {
    inventory::iter::<ServiceDescriptor>.into_iter()
}
