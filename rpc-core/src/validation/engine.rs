//! The JSON Schema validator behind [`ParamValidator`](super::ParamValidator):
//! the `jsonschema` crate (feature `jsonschema`, on by default), or the
//! built-in one ([`builtin`](super::builtin)), which implements what input
//! schemas use and refuses at startup a schema it cannot validate.

use serde_json::Value;

/// A compiled schema.
#[cfg(feature = "jsonschema")]
pub(super) struct Engine(jsonschema::Validator);

#[cfg(feature = "jsonschema")]
impl Engine {
    pub(super) fn compile(schema: &Value) -> Result<Engine, String> {
        // `format` is an annotation by default in 2020-12; parameters declared
        // `email`, `uuid`, ... (`rpc::rules`) rely on it being enforced.
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(schema)
            .map(Engine)
            .map_err(|e| e.to_string())
    }

    pub(super) fn is_valid(&self, value: &Value) -> bool {
        self.0.is_valid(value)
    }

    /// The first error, described (`None`: valid).
    pub(super) fn first_error(&self, value: &Value) -> Option<String> {
        let error = self.0.validate(value).err()?;
        Some(super::describe(error.instance_path().as_str(), error.instance(), |shown| {
            error.masked_with(shown).to_string()
        }))
    }
}

/// A compiled schema.
#[cfg(not(feature = "jsonschema"))]
pub(super) struct Engine(super::builtin::Compiled);

#[cfg(not(feature = "jsonschema"))]
impl Engine {
    pub(super) fn compile(schema: &Value) -> Result<Engine, String> {
        super::builtin::Compiled::new(schema).map(Engine)
    }

    pub(super) fn is_valid(&self, value: &Value) -> bool {
        self.0.is_valid(value)
    }

    /// The first error, described (`None`: valid).
    pub(super) fn first_error(&self, value: &Value) -> Option<String> {
        let failure = self.0.first_error(value)?;
        Some(super::describe(&failure.path, failure.instance, |shown| failure.masked_with(shown)))
    }
}
