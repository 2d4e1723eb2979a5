//! Support for the code `#[rpc::service]` generates, re-exported as
//! `rpc::__private`. Not public API: names and signatures change freely.
//!
//! The generated code reaches everything through this module, under
//! whatever name the application gave the `rpc-core` dependency, so no
//! other crate (serde, schemars, inventory) has to be a direct dependency
//! of the application.
//!
//! Return types are classified by meaning, not by spelling: the macro
//! cannot see through `type Outcome<T> = Result<T, E>`, but the code it
//! generates can. `(&Probe::<R>::new()).__rpc_kind()` resolves, by
//! autoref-based method lookup, to `ResultKind` when `R` is a `Result`
//! (whatever it is called) and to `ValueKind` otherwise.

use std::any::Any;
use std::marker::PhantomData;
use std::panic::Location;

pub use futures_util::future::BoxFuture;
pub use inventory;
pub use rpc_macros::__rpc_method;
pub use schemars;
use schemars::{JsonSchema, Schema, SchemaGenerator};
pub use serde;
use serde::Serialize;
use serde::de::DeserializeOwned;
pub use serde_json;
use serde_json::{Map, Value};

pub use crate::binders::{
    Args, AsyncMethod, Bound, Outcome, bind_defaults0, bind_defaults1, bind_defaults2, bind_defaults3, bind_defaults4,
    bind_defaults5, bind_defaults6, bind_defaults7, bind_defaults8, bind0, bind1, bind2, bind3, bind4, bind5, bind6,
    bind7, bind8, call_async, call_defaults0, call_defaults1, call_defaults2, call_defaults3, call_defaults4,
    call_defaults5, call_defaults6, call_defaults7, call_defaults8, call0, call1, call2, call3, call4, call5, call6,
    call7, call8, downcast,
};
pub use crate::context::Context;
pub use crate::descriptor::{
    ArgShape, CachePolicy, CompactMethod, Invocation, InvokeResult, Invoked, LockPolicy, MethodDescriptor,
    MethodSchemas, MethodSlot, OutputKind, ParamDescriptor, Relation, ServiceDescriptor, ServiceInstance, TaskSupport,
    ToolHints,
};
pub use crate::error::Environment;
use crate::error::RpcError;
pub use crate::group::{ApiGroup, GroupRef, is_valid_tool_name};
pub use crate::mcp_role::{CompletionSpec, CompletionTarget, McpRole, PromptSpec, ResourceSpec};
pub use crate::rules::{Format, Rule};

/// The base of every generated method descriptor: the fields a method
/// leaves at their defaults come from here (`..METHOD`), so the code
/// generated per method names only what it sets. The macro always sets
/// `name`, `fn_name`, `groups`, `invoke` and `line`.
pub const METHOD: MethodDescriptor = MethodDescriptor {
    name: "",
    fn_name: "",
    groups: &[],
    summary: None,
    description: None,
    deprecated: None,
    params: &[],
    output: OutputKind::Value,
    tool: ToolHints::NONE,
    mcp: McpRole::Tool,
    result_schema: None,
    invoke: not_generated,
    line: 0,
    scopes: &[],
    cache: None,
    lock: None,
    invalidates: &[],
    errors: no_codes,
};

/// The base of every generated parameter descriptor (`..PARAM`): no
/// header, description, default or rules. The macro always sets `name`,
/// `is_param`, `required` and `schema`.
pub const PARAM: ParamDescriptor = ParamDescriptor {
    name: "",
    is_param: true,
    header: None,
    description: None,
    required: true,
    default: None,
    rules: &[],
    schema: no_schema,
};

/// `METHOD`'s invoke function, which every generated descriptor replaces.
fn not_generated(_: Invocation<'_>) -> Invoked<'_> {
    Invoked::Ready(Err(RpcError::internal("a method descriptor without its invoke function")))
}

/// `PARAM`'s schema function, which every generated descriptor replaces.
fn no_schema(_: &mut SchemaGenerator) -> Option<Schema> {
    None
}

/// A type a method argument can have: a parameter (it comes from JSON and
/// has a schema), or something the transport fills in ([`Context`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the type of an RPC parameter",
    label = "parameters are deserialised from JSON and described by a JSON Schema",
    note = "derive `serde::Deserialize` and `schemars::JsonSchema` for `{Self}`"
)]
pub trait Arg: Sized {
    /// Whether the argument comes from the request's parameters (and is
    /// part of the input schema).
    const IS_PARAM: bool;

    /// The argument's value: parameter `name` taken out of the validated
    /// arguments and deserialised (a missing one gets its default, or
    /// `None` for an `Option`), or what the context provides.
    fn bind(
        method: &str,
        params: &mut Map<String, Value>,
        name: &str,
        default: Option<fn() -> Self>,
        context: &Context,
    ) -> Result<Self, RpcError>;

    /// The parameter's schema; `None` for arguments that are not parameters.
    fn schema(generator: &mut SchemaGenerator) -> Option<Schema>;
}

impl ArgShape {
    /// How `T` describes itself as an argument.
    pub const fn of<T: Arg>() -> ArgShape {
        ArgShape { schema: T::schema, is_param: T::IS_PARAM }
    }
}

impl<T: DeserializeOwned + JsonSchema> Arg for T {
    const IS_PARAM: bool = true;

    fn bind(
        method: &str,
        params: &mut Map<String, Value>,
        name: &str,
        default: Option<fn() -> Self>,
        _context: &Context,
    ) -> Result<Self, RpcError> {
        let (value, problem) = match (params.remove(name), default) {
            (Some(value), _) => (value, None),
            (None, Some(default)) => return Ok(default()),
            (None, None) => (Value::Null, Some("required parameter is missing")),
        };
        serde_json::from_value(value).map_err(|e| {
            let reason = problem.map_or_else(|| e.to_string(), str::to_owned);
            let mut violations = Map::new();
            violations.insert(name.to_owned(), Value::Array(vec![Value::String(reason)]));
            RpcError::invalid_param_list(method, violations)
        })
    }

    fn schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(generator.subschema_for::<T>())
    }
}

impl Arg for Context {
    const IS_PARAM: bool = false;

    fn bind(
        _method: &str,
        _params: &mut Map<String, Value>,
        _name: &str,
        _default: Option<fn() -> Self>,
        context: &Context,
    ) -> Result<Self, RpcError> {
        Ok(context.clone())
    }

    fn schema(_generator: &mut SchemaGenerator) -> Option<Schema> {
        None
    }
}

/// A parameter type that can be mirrored into an HTTP header
/// (`#[rpc(header)]`, MCP SEP-2243): strings, integers and booleans.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be mirrored into an HTTP header",
    label = "`#[rpc(header)]` takes string, integer and boolean parameters only",
    note = "MCP's `x-mcp-header` is limited to `string`, `integer` and `boolean` schemas"
)]
pub trait HeaderParam {}

macro_rules! header_params {
    ($($t:ty),*) => { $(impl HeaderParam for $t {})* };
}
header_params!(String, bool, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);
impl<T: HeaderParam> HeaderParam for Option<T> {}

/// Compile-time check helper for `#[rpc(header)]`.
pub fn assert_header<T: HeaderParam>() {}

/// A type a method can return (the success type of a `Result`, or the
/// value itself): it goes to JSON and has a schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the result of an RPC method",
    label = "results are serialised to JSON and described by a JSON Schema",
    note = "derive `serde::Serialize` and `schemars::JsonSchema` for `{Self}`"
)]
pub trait ResultType {
    /// Serialises the result once.
    fn to_raw(&self) -> InvokeResult;
    /// The result's schema.
    fn schema(generator: &mut SchemaGenerator) -> Schema;
}

impl<T: Serialize + JsonSchema> ResultType for T {
    fn to_raw(&self) -> InvokeResult {
        serde_json::value::to_raw_value(self).map_err(|e| RpcError::internal(format!("result does not serialise: {e}")))
    }

    fn schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
    }
}

/// An error type a method's `Result` can carry.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned as an RPC error",
    label = "the error type of this method",
    note = "return `rpc::RpcError`, or implement `rpc::ApplicationError` for `{Self}` if it is a type of \
            this crate (it gives the JSON-RPC error code); another crate's type (`String`, `Box<dyn Error>`, \
            `anyhow::Error`) cannot implement it: map it, `.map_err(|e| rpc::RpcError::new(code, e.to_string()))?`"
)]
pub trait IntoRpcError {
    /// Converts the error.
    fn into_rpc(self) -> RpcError;
}

impl<E> IntoRpcError for E
where
    RpcError: From<E>,
{
    #[track_caller]
    fn into_rpc(self) -> RpcError {
        RpcError::from(self)
    }
}

/// `error` converted, and where the conversion was made: an error it
/// creates is recorded there (`#[track_caller]` passes the caller's
/// location on to `RpcError`'s constructors).
#[track_caller]
fn converted<E: IntoRpcError>(error: E) -> (RpcError, &'static Location<'static>) {
    (error.into_rpc(), Location::caller())
}

/// Stands for a method's return type `R` during kind selection.
pub struct Probe<R>(PhantomData<fn() -> R>);

impl<R> Probe<R> {
    /// A probe for `R`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Probe(PhantomData)
    }
}

/// Selected for `Result<T, E>`, however it is spelt.
pub trait ResultKind {
    /// The success type.
    type Ok;
    /// The tag that turns the return value into an outcome.
    fn __rpc_kind(&self) -> ResultTag<Self::Ok>;
}

impl<T, E> ResultKind for Probe<Result<T, E>> {
    type Ok = T;
    fn __rpc_kind(&self) -> ResultTag<T> {
        ResultTag(PhantomData)
    }
}

/// Selected for every other return type (one more autoref than [`ResultKind`]).
pub trait ValueKind {
    /// The returned type.
    type Value;
    /// The tag that turns the return value into an outcome.
    fn __rpc_kind(&self) -> ValueTag<Self::Value>;
}

impl<R> ValueKind for &Probe<R> {
    type Value = R;
    fn __rpc_kind(&self) -> ValueTag<R> {
        ValueTag(PhantomData)
    }
}

/// How to serialise and describe a result of type `T`.
pub struct Ops<T> {
    to_raw: fn(&T) -> InvokeResult,
    schema: fn(&mut SchemaGenerator) -> Schema,
}

impl<T> Ops<T> {
    /// The result's schema.
    pub fn schema(&self, generator: &mut SchemaGenerator) -> Schema {
        (self.schema)(generator)
    }

    /// The outcome, serialised once.
    pub fn finish(&self, outcome: Result<T, RpcError>) -> InvokeResult {
        outcome.and_then(|value| (self.to_raw)(&value))
    }
}

/// A method returning `Result<T, E>`: errors become RPC errors.
pub struct ResultTag<T>(PhantomData<fn() -> T>);

impl<T> ResultTag<T> {
    /// Converts the error; an error the conversion creates is recorded as
    /// created `at` the method's return type (an error the method made
    /// itself, an `RpcError`, keeps its own location).
    pub fn outcome<E: IntoRpcError>(&self, value: Result<T, E>, at: &'static Location<'static>) -> Result<T, RpcError> {
        match value {
            Ok(value) => Ok(value),
            Err(error) => {
                // Both recorded at this line: the conversion's location, if it
                // created the error, is `here`.
                let (error, here) = converted(error);
                Err(error.relocated(here, at))
            }
        }
    }

    /// Serialisation and schema of the success type.
    pub fn ops(&self) -> Ops<T>
    where
        T: ResultType,
    {
        Ops { to_raw: T::to_raw, schema: T::schema }
    }
}

/// A method returning a plain value.
pub struct ValueTag<T>(PhantomData<fn() -> T>);

impl<T> ValueTag<T> {
    /// A value is always a success.
    pub fn outcome(&self, value: T, _at: &'static Location<'static>) -> Result<T, RpcError> {
        Ok(value)
    }

    /// Serialisation and schema of the value.
    pub fn ops(&self) -> Ops<T>
    where
        T: ResultType,
    {
        Ops { to_raw: T::to_raw, schema: T::schema }
    }
}

/// The result of a method returning `()`.
pub fn unit_result() -> InvokeResult {
    serde_json::value::RawValue::from_string("null".to_owned())
        .map_err(|e| RpcError::internal(format!("null does not serialise: {e}")))
}

/// The outcome of a call to a method returning `()`.
pub fn unit_outcome(outcome: Outcome<()>, _at: &'static Location<'static>) -> InvokeResult {
    outcome.and_then(|()| unit_result())
}

/// Serialises a default parameter value for the schema.
pub fn default_value<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Selects, by a group's `MCP` flag, whether an undocumented method warns.
pub struct McpPublished<const PUBLISHED: bool>;

impl McpPublished<true> {
    /// Warns (the `deprecated` lint is the one warning a macro can raise on
    /// stable Rust), at the method the generated call is spanned to.
    #[deprecated(note = "this method is published over MCP without a description, so AI agents see only its name: \
                add a doc comment to it, or mark it `#[rpc::info(undocumented)]` \
                (`#[rpc::service(undocumented)]` for the whole block) when its texts come from elsewhere")]
    pub const fn method_without_description() {}
}

impl McpPublished<false> {
    /// A method of groups not published over MCP needs no description.
    pub const fn method_without_description() {}
}

/// Compile-time check helper: the service type can be shared across threads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an RPC service: its instance is shared by concurrent calls",
    label = "services must be `Send + Sync + 'static`",
    note = "keep mutable state behind `Mutex`, `RwLock` or atomics"
)]
pub trait Service: Any + Send + Sync {}

impl<T: Any + Send + Sync> Service for T {}

/// Compile-time check helper: the service type can be shared across threads.
pub const fn assert_service<T: Service>() {}

pub use crate::error::ApplicationError;
pub use crate::error_codes::{ErrorCode, ErrorCodes};

/// Selected for `Result<T, E>` whose `E` lists its codes ([`ErrorCodes`]).
pub trait CodesKind {
    /// The codes of the error type.
    fn __rpc_codes(&self) -> &'static [ErrorCode];
}

impl<T, E: ErrorCodes> CodesKind for Probe<Result<T, E>> {
    fn __rpc_codes(&self) -> &'static [ErrorCode] {
        E::CODES
    }
}

/// Selected for every other return type (one more autoref than
/// [`CodesKind`]): no codes are known.
pub trait NoCodesKind {
    /// No codes.
    fn __rpc_codes(&self) -> &'static [ErrorCode];
}

impl<R> NoCodesKind for &Probe<R> {
    fn __rpc_codes(&self) -> &'static [ErrorCode] {
        &[]
    }
}

/// The defaults of a compact method none of whose parameters has one: a
/// constant, cheaper for the compiler than an empty slice per method.
pub const NO_DEFAULTS: &[Option<fn() -> Value>] = &[];

/// The codes of a method returning `()`: none.
pub fn no_codes() -> &'static [ErrorCode] {
    &[]
}

/// A type an error variant can expose as data (`#[rpc(data)]` on a field
/// of `#[derive(rpc::ApplicationError)]`): it goes to JSON and has a schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be exposed as error data",
    label = "`#[rpc(data)]` fields are serialised into `data.extra` and described in the OpenRPC document",
    note = "derive `serde::Serialize` and `schemars::JsonSchema` for `{Self}`, or drop `#[rpc(data)]` from the field"
)]
pub trait ErrorData {
    /// The value, as JSON (`null` if it does not serialise).
    fn to_data(&self) -> Value;
    /// Its schema.
    fn data_schema(generator: &mut SchemaGenerator) -> Schema;
}

impl<T: Serialize + JsonSchema> ErrorData for T {
    fn to_data(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn data_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
    }
}

/// The schema of an error's `data.extra`: an object with the exposed
/// fields (`(name, schema)`), all present.
pub fn error_data_schema(fields: Vec<(&'static str, Schema)>) -> Schema {
    let required: Vec<Value> = fields.iter().map(|(name, _)| Value::String((*name).to_owned())).collect();
    let properties: Map<String, Value> =
        fields.into_iter().map(|(name, schema)| (name.to_owned(), schema.to_value())).collect();
    let mut object = Map::new();
    object.insert("type".into(), Value::String("object".into()));
    object.insert("properties".into(), Value::Object(properties));
    object.insert("required".into(), Value::Array(required));
    Schema::from(object)
}
