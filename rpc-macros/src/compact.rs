//! A method's descriptor as one string (rpc-core's `CompactMethod`): its
//! texts and flags, which the compiler reads as one token, instead of a
//! typed constant it checks field by field (BENCHMARKS.md, run 35).
//!
//! The format is rpc-core's (`compact_method`), field by field in the same
//! order: a string is `<bytes>:<text>`, an optional string `-` or a
//! string, a flag `t` or `f`, an optional flag `-`, `t` or `f`, a count
//! (or a number of seconds) `<n>#`.

use crate::attrs::ToolArgs;
use crate::method::{Method, Output};
use crate::role::Role;

/// The text of `method` (whose Rust name is `fn_name`), or `None` when
/// the method needs its descriptor written out: an MCP role other than a
/// tool, parameter rules, or a tool attribute beyond the title and the
/// four hints.
pub fn text(method: &Method, fn_name: &str) -> Option<String> {
    // Every attribute of `#[mcp_tool]` by name: one added later must be
    // given its place here (in the text, or among those written out).
    let ToolArgs {
        title,
        read_only_hint,
        destructive_hint,
        idempotent_hint,
        open_world_hint,
        requires_client,
        task,
        starts_task,
        // Checked into the method's own fields, looked at below.
        input_schema: _,
        output_schema: _,
        meta: _,
        icon: _,
        scopes: _,
    } = &method.tool;
    let plain_tool = matches!(method.role, Role::Tool)
        && requires_client.iter().next().is_none()
        && task.is_none()
        && !starts_task.is_present()
        && method.input_schema.is_none()
        && method.output_schema.is_none()
        && method.meta.is_none()
        && method.icons.is_empty();
    if !plain_tool || method.params.iter().any(|p| !p.rules.is_empty()) {
        return None;
    }
    let mut text = Text::default();
    text.string(&method.name);
    text.string(fn_name);
    text.optional_string(method.docs.summary.as_deref());
    text.optional_string(method.docs.description.as_deref());
    text.optional_string(method.deprecated.as_deref());
    text.0.push(match method.output {
        Output::Typed(_) => 'V',
        Output::Unit => 'U',
    });
    text.optional_string(title.as_ref().map(|title| title.value()).as_deref());
    for hint in [read_only_hint, destructive_hint, idempotent_hint, open_world_hint] {
        text.optional_flag(crate::attrs::hint(*hint));
    }
    text.count(method.scopes.len());
    for scope in &method.scopes {
        text.string(scope);
    }
    text.count(method.params.len());
    for param in &method.params {
        text.string(&param.name);
        text.optional_string(param.description.as_deref());
        text.optional_string(param.header.as_ref().map(|(header, _)| header.as_str()));
        text.flag(param.default.is_none() && !param.optional);
    }
    let policies = &method.policies;
    match policies.cache() {
        Some((ttl, environments)) => {
            text.0.push('C');
            text.seconds(ttl);
            text.count(environments.len());
            for environment in environments {
                text.string(environment);
            }
        }
        None => text.0.push('-'),
    }
    match policies.lock() {
        Some((param, ttl)) => {
            text.0.push('L');
            text.optional_string(param);
            text.seconds(ttl);
        }
        None => text.0.push('-'),
    }
    text.count(policies.invalidates().len());
    for (name, warm_up) in policies.invalidates() {
        text.string(name);
        text.flag(*warm_up);
    }
    Some(text.0)
}

/// The text written so far.
#[derive(Default)]
struct Text(String);

impl Text {
    fn string(&mut self, value: &str) {
        self.0.push_str(&value.len().to_string());
        self.0.push(':');
        self.0.push_str(value);
    }

    fn optional_string(&mut self, value: Option<&str>) {
        match value {
            Some(value) => self.string(value),
            None => self.0.push('-'),
        }
    }

    fn flag(&mut self, value: bool) {
        self.0.push(if value { 't' } else { 'f' });
    }

    fn optional_flag(&mut self, value: Option<bool>) {
        match value {
            Some(value) => self.flag(value),
            None => self.0.push('-'),
        }
    }

    fn count(&mut self, count: usize) {
        self.0.push_str(&count.to_string());
        self.0.push('#');
    }

    fn seconds(&mut self, seconds: u64) {
        self.0.push_str(&seconds.to_string());
        self.0.push('#');
    }
}
