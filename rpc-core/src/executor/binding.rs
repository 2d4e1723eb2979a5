//! Binding a call's parameters: raw text read, positional parameters named,
//! the result validated against the method's schema.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::call::{Params, read_params};
use crate::error::RpcError;
use crate::registry::Method;

/// Named parameters given as raw text ([`Call::named_raw`](crate::call::Call::named_raw)),
/// read as a transport reads them ([`read_params`]).
pub(super) fn read_named(raw: &RawValue) -> Result<Params, RpcError> {
    read_params::<Map<String, Value>>(raw).map(Params::Named)
}

/// A failed binding or validation: the error, and the bound parameters
/// when they could be bound (for the error's log line and `on_error`).
pub(super) type Rejected = (RpcError, Option<Map<String, Value>>);

/// The named parameters of a call, validated against the method's schema.
pub(super) fn bind_and_validate(method: &Method, params: Params) -> Result<Map<String, Value>, Rejected> {
    let params = Value::Object(bind(method, params).map_err(|e| (e, None))?);
    let checked = method.validator().validate(method.name(), &params);
    let Value::Object(params) = params else {
        return Err((RpcError::internal("bound parameters are an object"), None));
    };
    match checked {
        Ok(()) => Ok(params),
        Err(e) => Err((e, Some(params))),
    }
}

/// Binds positional parameters to names; named ones pass through.
fn bind(method: &Method, params: Params) -> Result<Map<String, Value>, RpcError> {
    match params {
        Params::None => Ok(Map::new()),
        Params::Named(map) => Ok(map),
        Params::Positional(values) => {
            let declared: Vec<&str> =
                method.descriptor().params.iter().filter(|p| p.is_param).map(|p| p.name).collect();
            if values.len() > declared.len() {
                return Err(RpcError::invalid_params(format!(
                    "{} takes at most {} positional parameter(s), {} given",
                    method.name(),
                    declared.len(),
                    values.len()
                )));
            }
            Ok(declared.into_iter().map(str::to_owned).zip(values).collect())
        }
    }
}
