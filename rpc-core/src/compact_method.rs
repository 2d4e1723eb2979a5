//! Reading a method's entry in its service's table, as `#[rpc::service]`
//! writes it ([`MethodSlot`]): its [`MethodDescriptor`] written out, or,
//! for most methods, a [`CompactMethod`]: every text and flag of the
//! descriptor in one string, beside the functions and the parts that name
//! types, decoded into a descriptor once, when the registry first reads it.
//! The arguments' schemas and kinds are not in the entry: its invoke
//! function, the one place the method's code names their types, gives
//! them ([`Invocation::Shape`](crate::descriptor::Invocation::Shape)).
//!
//! Why: the compiler checks a descriptor written out as a typed constant
//! (nested structs, `Option`s, slices, per method and per parameter)
//! through constant evaluation, promotion and borrow checking, which cost
//! it about as much as the rest of an annotated method together; a string
//! literal costs it one token (BENCHMARKS.md, run 35). A method with an
//! MCP role other than a tool, parameter rules, or a tool attribute beyond
//! the title and the four hints is written out as before.
//!
//! The text is written by the macro of the same version as this decoder.
//! Each field in order: a string is `<bytes>:<text>`, an optional string
//! `-` or a string, a flag `t` or `f`, an optional flag `-`, `t` or `f`,
//! a count or a number of seconds `<n>#`:
//!
//! name, fn name, summary?, description?, deprecated?, output (`V` value,
//! `U` unit), title?, read-only?, destructive?, idempotent?, open-world?,
//! scopes (count, then each), parameters (count, then each: name,
//! description?, header?, required), cache (`-`, or `C`, its ttl, then the
//! count of its environments and each one's name: `Dev`, `Test`, `Prod`),
//! lock (`-`, or `L`, its parameter?, its ttl), invalidated methods
//! (count, then each: name, warm up).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use crate::descriptor::{
    CachePolicy, CompactMethod, Invocation, Invoked, LockPolicy, MethodDescriptor, MethodSlot, OutputKind,
    ParamDescriptor, Relation, ToolHints,
};
use crate::error::Environment;
use crate::mcp_role::McpRole;

impl MethodSlot {
    /// The method's descriptor (`None` when hidden); a compact method's is
    /// decoded on first use and kept for the life of the process.
    pub fn descriptor(&'static self) -> Option<&'static MethodDescriptor> {
        match self {
            MethodSlot::Hidden => None,
            MethodSlot::Described(descriptor) => Some(descriptor),
            MethodSlot::Compact(compact) => Some(compact.decoded()),
        }
    }
}

/// Compact methods decoded so far, by the address of their entry: each
/// is decoded (and its descriptor allocated) once per process however
/// many registries read it.
static DECODED: LazyLock<Mutex<HashMap<usize, &'static MethodDescriptor>>> = LazyLock::new(Default::default);

impl CompactMethod {
    fn decoded(&'static self) -> &'static MethodDescriptor {
        let key = std::ptr::from_ref(self) as usize;
        let mut decoded = DECODED.lock().unwrap_or_else(PoisonError::into_inner);
        decoded.entry(key).or_insert_with(|| match self.decode() {
            Ok(descriptor) => Box::leak(Box::new(descriptor)),
            // Written by the macro of the same version: a text it cannot
            // read is a defect of the framework, not of the application.
            Err(problem) => panic!(
                "rpc: the generated description of a method cannot be read ({problem}); rpc-macros and rpc-core \
                 must be the same version. Text: {:?}",
                self.text
            ),
        })
    }

    /// The descriptor the text and functions describe. Its parameter and
    /// scope lists are allocated for the life of the process.
    pub(crate) fn decode(&self) -> Result<MethodDescriptor, String> {
        let mut text = Text(self.text);
        let name = text.string()?;
        let fn_name = text.string()?;
        let summary = text.optional_string()?;
        let description = text.optional_string()?;
        let deprecated = text.optional_string()?;
        let output = match text.byte()? {
            b'V' => OutputKind::Value,
            b'U' => OutputKind::Unit,
            other => return Err(format!("output kind `{}`", char::from(other))),
        };
        let tool = ToolHints {
            title: text.optional_string()?,
            read_only_hint: text.optional_flag()?,
            destructive_hint: text.optional_flag()?,
            idempotent_hint: text.optional_flag()?,
            open_world_hint: text.optional_flag()?,
            ..ToolHints::NONE
        };
        let scopes = (0..text.count()?).map(|_| text.string()).collect::<Result<Vec<_>, _>>()?;
        let count = text.count()?;
        // The arguments' schemas and kinds, from the one place the
        // method's code names their types.
        let shapes = match (self.invoke)(Invocation::Shape) {
            Invoked::Shape(shapes) => shapes,
            Invoked::Ready(_) | Invoked::Pending(_) => {
                return Err("its invoke function does not describe its arguments".to_owned());
            }
        };
        if count != shapes.len() {
            return Err(format!("{count} parameters described, {} by the invoke function", shapes.len()));
        }
        if !self.param_defaults.is_empty() && self.param_defaults.len() != count {
            return Err(format!("{count} parameters described, {} defaults given", self.param_defaults.len()));
        }
        let mut params = Vec::with_capacity(count);
        for (index, shape) in shapes.iter().enumerate() {
            params.push(ParamDescriptor {
                name: text.string()?,
                is_param: shape.is_param,
                description: text.optional_string()?,
                header: text.optional_string()?,
                required: text.flag()?,
                default: self.param_defaults.get(index).copied().flatten(),
                rules: &[],
                schema: shape.schema,
            });
        }
        let cache = match text.byte()? {
            b'-' => None,
            b'C' => {
                let ttl_secs = text.seconds()?;
                let environments =
                    (0..text.count()?).map(|_| environment(text.string()?)).collect::<Result<Vec<_>, _>>()?;
                Some(CachePolicy { ttl_secs, environments: Box::leak(environments.into_boxed_slice()) })
            }
            other => return Err(format!("cache marker `{}`", char::from(other))),
        };
        let lock = match text.byte()? {
            b'-' => None,
            b'L' => Some(LockPolicy { param: text.optional_string()?, ttl_secs: text.seconds()? }),
            other => return Err(format!("lock marker `{}`", char::from(other))),
        };
        let invalidates = (0..text.count()?)
            .map(|_| Ok(Relation { method: text.string()?, warm_up: text.flag()? }))
            .collect::<Result<Vec<_>, String>>()?;
        if !text.0.is_empty() {
            return Err(format!("{} bytes left over", text.0.len()));
        }
        Ok(MethodDescriptor {
            name,
            fn_name,
            groups: self.groups,
            summary,
            description,
            deprecated,
            params: Box::leak(params.into_boxed_slice()),
            output,
            tool,
            mcp: McpRole::Tool,
            result_schema: self.result_schema,
            invoke: self.invoke,
            line: self.line,
            scopes: Box::leak(scopes.into_boxed_slice()),
            cache,
            lock,
            invalidates: if invalidates.is_empty() { &[] } else { Box::leak(invalidates.into_boxed_slice()) },
            errors: self.errors,
        })
    }
}

/// The environment a cache policy names.
fn environment(name: &str) -> Result<Environment, String> {
    match name {
        "Dev" => Ok(Environment::Dev),
        "Test" => Ok(Environment::Test),
        "Prod" => Ok(Environment::Prod),
        other => Err(format!("environment `{other}`")),
    }
}

/// What is left of a compact method's text.
struct Text(&'static str);

impl Text {
    fn byte(&mut self) -> Result<u8, String> {
        let first = *self.0.as_bytes().first().ok_or("the text ends early")?;
        // Every marker is ASCII, so one byte in is a character boundary.
        self.0 = self.0.get(1..).ok_or("a marker is not ASCII")?;
        Ok(first)
    }

    /// Digits up to `end`, as a number.
    fn number<N: std::str::FromStr>(&mut self, end: char) -> Result<N, String> {
        let (digits, rest) = self.0.split_once(end).ok_or_else(|| format!("no `{end}` after a number"))?;
        let number = digits.parse().map_err(|_| format!("`{digits}` is not a number"))?;
        self.0 = rest;
        Ok(number)
    }

    fn count(&mut self) -> Result<usize, String> {
        self.number('#')
    }

    fn seconds(&mut self) -> Result<u64, String> {
        self.number('#')
    }

    fn string(&mut self) -> Result<&'static str, String> {
        let len = self.number(':')?;
        let value = self.0.get(..len).ok_or_else(|| format!("a string of {len} bytes does not fit"))?;
        self.0 = &self.0[len..];
        Ok(value)
    }

    fn optional_string(&mut self) -> Result<Option<&'static str>, String> {
        if self.0.starts_with('-') {
            self.0 = &self.0[1..];
            return Ok(None);
        }
        self.string().map(Some)
    }

    fn flag(&mut self) -> Result<bool, String> {
        match self.byte()? {
            b't' => Ok(true),
            b'f' => Ok(false),
            other => Err(format!("flag `{}`", char::from(other))),
        }
    }

    fn optional_flag(&mut self) -> Result<Option<bool>, String> {
        match self.byte()? {
            b'-' => Ok(None),
            b't' => Ok(Some(true)),
            b'f' => Ok(Some(false)),
            other => Err(format!("optional flag `{}`", char::from(other))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::{ArgShape, Invocation, InvokeResult, Invoked};

    fn no_schema(_: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }

    /// A method of two arguments, the second not a parameter.
    fn invoke_two(invocation: Invocation<'_>) -> Invoked<'_> {
        const SHAPES: [ArgShape; 2] =
            [ArgShape { schema: no_schema, is_param: true }, ArgShape { schema: no_schema, is_param: false }];
        match invocation {
            Invocation::Shape => Invoked::Shape(&SHAPES),
            Invocation::Call { .. } => Invoked::Ready(InvokeResult::Err(crate::RpcError::internal("test"))),
        }
    }

    fn invoke_none(invocation: Invocation<'_>) -> Invoked<'_> {
        match invocation {
            Invocation::Shape => Invoked::Shape(&[]),
            Invocation::Call { .. } => Invoked::Ready(InvokeResult::Err(crate::RpcError::internal("test"))),
        }
    }

    fn compact(text: &'static str, params: usize) -> CompactMethod {
        CompactMethod {
            text,
            invoke: if params == 2 { invoke_two } else { invoke_none },
            result_schema: None,
            errors: crate::__private::no_codes,
            param_defaults: &[],
            groups: &[],
            line: 7,
        }
    }

    #[test]
    fn an_invoke_function_that_does_not_describe_its_arguments_is_an_error() {
        fn silent(_: Invocation<'_>) -> Invoked<'_> {
            Invoked::Ready(InvokeResult::Err(crate::RpcError::internal("test")))
        }
        let method = CompactMethod { invoke: silent, ..compact("1:a1:b---V-----0#0#--0#", 0) };
        let error = method.decode().expect_err("no shapes");
        assert!(error.contains("does not describe its arguments"), "{error}");
    }

    /// A string as the macro writes it.
    fn s(text: &str) -> String {
        format!("{}:{text}", text.len())
    }

    #[test]
    fn every_field_is_read_in_order() {
        // Texts holding the markers themselves: digits, `:`, `-`, `#`, and
        // characters of more than one byte.
        let text = [
            s("Svc.get"),
            s("get"),
            s("1: a-b"),
            "-".into(),
            s("Ünï"),
            "U".into(),
            "-".into(),
            "-t-f".into(),
            "1#".into(),
            s("rw"),
            "2#".into(),
            s("id"),
            "-".into(),
            s("X-Id"),
            "t".into(),
            s("limit"),
            s("#1-:"),
            "-".into(),
            "f".into(),
            "C60#2#".into(),
            s("Dev"),
            s("Prod"),
            "L".into(),
            s("id"),
            "30#".into(),
            "1#".into(),
            s("Svc.list"),
            "t".into(),
        ]
        .concat();
        let descriptor = compact(Box::leak(text.into_boxed_str()), 2).decode().expect("decodes");
        assert_eq!(descriptor.name, "Svc.get");
        assert_eq!(descriptor.fn_name, "get");
        assert_eq!(descriptor.summary, Some("1: a-b"));
        assert_eq!(descriptor.description, None);
        assert_eq!(descriptor.deprecated, Some("Ünï"));
        assert_eq!(descriptor.output, OutputKind::Unit);
        assert_eq!(descriptor.tool.title, None);
        assert_eq!(descriptor.tool.read_only_hint, None);
        assert_eq!(descriptor.tool.destructive_hint, Some(true));
        assert_eq!(descriptor.tool.idempotent_hint, None);
        assert_eq!(descriptor.tool.open_world_hint, Some(false));
        assert_eq!(descriptor.scopes, ["rw"]);
        assert_eq!(descriptor.params.len(), 2);
        let [id, limit] = descriptor.params else { panic!("two parameters") };
        assert_eq!((id.name, id.description, id.header), ("id", None, Some("X-Id")));
        assert!(id.required && id.is_param);
        assert_eq!((limit.name, limit.description, limit.header), ("limit", Some("#1-:"), None));
        assert!(!limit.required && !limit.is_param);
        assert_eq!(descriptor.line, 7);
        assert!(matches!(descriptor.mcp, McpRole::Tool));
        let cache = descriptor.cache.expect("a cache policy");
        assert_eq!((cache.ttl_secs, cache.environments), (60, &[Environment::Dev, Environment::Prod][..]));
        assert_eq!(descriptor.lock, Some(LockPolicy { param: Some("id"), ttl_secs: 30 }));
        assert_eq!(descriptor.invalidates, [Relation { method: "Svc.list", warm_up: true }]);
    }

    #[test]
    fn a_damaged_text_is_an_error_not_a_panic() {
        for (text, problem) in [
            ("", "no `:` after a number"),
            ("99:short", "does not fit"),
            ("1:Ü", "does not fit"),
            ("1:a1:b---X", "output kind `X`"),
            ("1:a1:b---V-?", "optional flag `?`"),
            ("1:a1:b---V-----0#1#", "1 parameters described, 0 by the invoke function"),
            ("1:a1:b---V-----0#0#--0#x", "1 bytes left over"),
            ("1:a1:b---V-----0#0#X", "cache marker `X`"),
            ("1:a1:b---V-----0#0#C1#1#4:Prot--0#", "environment `Prot`"),
            ("1:a1:b---V-----0#0#-L-99999999999999999999#0#", "is not a number"),
            ("1:a1:b---V-----0#0#--1#", "no `:` after a number"),
            ("x:a", "`x` is not a number"),
        ] {
            let error = compact(text, 0).decode().expect_err(text);
            assert!(error.contains(problem), "{text:?}: {error}");
        }
    }
}
