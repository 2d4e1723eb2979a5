//! Completion providers of one API group and version: methods marked
//! `#[mcp_complete(prompt = "...", argument = "...")]` or
//! `#[mcp_complete(resource = "...", argument = "...")]`. The method takes
//! the partial value as `value` and the arguments the client already gave
//! by name; it returns the suggestions (a list of strings), of which
//! `completion/complete` sends the first [`MAX_VALUES`].

use std::collections::HashMap;
use std::sync::Arc;

use rpc::{CompletionTarget, McpRole, Method};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The most suggestions one answer holds (the specification's limit).
pub const MAX_VALUES: usize = 100;

/// What is completed: a prompt's argument or a template's variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reference {
    /// `ref/prompt`, by prompt name.
    Prompt(String),
    /// `ref/resource`, by URI template.
    Resource(String),
}

/// The completion providers of one version of a group.
#[derive(Debug, Default)]
pub struct Completions {
    providers: HashMap<(Reference, String), Arc<Method>>,
}

impl Completions {
    /// The providers among `methods`.
    pub fn build(methods: &[&Arc<Method>]) -> Completions {
        let providers = methods
            .iter()
            .filter_map(|m| {
                let McpRole::Completion(spec) = m.descriptor().mcp else { return None };
                let reference = match spec.target {
                    CompletionTarget::Prompt(name) => Reference::Prompt(name.to_owned()),
                    CompletionTarget::Resource(uri) => Reference::Resource(uri.to_owned()),
                    _ => return None,
                };
                Some(((reference, spec.argument.to_owned()), Arc::clone(m)))
            })
            .collect();
        Completions { providers }
    }

    /// Whether there is no provider.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// The provider of `argument` of `reference`.
    pub fn provider(&self, reference: &Reference, argument: &str) -> Option<&Arc<Method>> {
        self.providers.get(&(reference.clone(), argument.to_owned()))
    }
}

/// The `completion` object of a provider's result (a list of strings).
pub fn completion(result: Option<&RawValue>) -> Result<Value, String> {
    let values: Vec<String> = match result {
        None => Vec::new(),
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|e| format!("a completion method returns a list of strings ({e})"))?,
    };
    let total = values.len();
    let shown: Vec<String> = values.into_iter().take(MAX_VALUES).collect();
    Ok(json!({"values": shown, "total": total, "hasMore": total > MAX_VALUES}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_a_hundred() {
        let many: Vec<String> = (0..150).map(|i| i.to_string()).collect();
        let raw = serde_json::value::to_raw_value(&many).unwrap();
        let c = completion(Some(&raw)).unwrap();
        assert_eq!(c["values"].as_array().unwrap().len(), MAX_VALUES);
        assert_eq!((c["total"].clone(), c["hasMore"].clone()), (json!(150), json!(true)));
        assert_eq!(completion(None).unwrap(), json!({"values": [], "total": 0, "hasMore": false}));
        let wrong = serde_json::value::to_raw_value(&json!({"a": 1})).unwrap();
        assert!(completion(Some(&wrong)).is_err());
    }
}
