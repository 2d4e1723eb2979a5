//! Batch chaining: a call of a batch takes a value from the result of
//! another call of the same batch, named by its id.
//!
//! ```json
//! [{"jsonrpc": "2.0", "id": 1, "method": "Users.find", "params": {"email": "ann@example.com"}},
//!  {"jsonrpc": "2.0", "id": 2, "method": "Orders.list", "params": {"user": "@FROM:1(user.id)"}}]
//! ```
//!
//! * A string value anywhere in a call's params (a member's value or an
//!   array item, at any depth; never a member name) that is written
//!   `@FROM:<id>(<field>)` is a reference. The call waits until the call
//!   with that id has finished, and the string is replaced by the value of
//!   `<field>` in its result, or by the whole result when `()` is empty.
//! * `<field>` is a path: member names separated by dots (`user.id`), a
//!   decimal number selecting an array item (`items.0.sku`); a name with a
//!   dot or a parenthesis cannot be named.
//! * `<id>` is the id as written in the request: it names the call whose
//!   numeric id has exactly that text (`7`, not `7.0`), or whose string id
//!   is that text (`@FROM:abc()` names `"abc"`); a batch holding both `7`
//!   and `"7"` makes `@FROM:7(...)` ambiguous. Notifications and `null`
//!   ids cannot be named.
//! * Any string that starts with `@FROM`, as written in the JSON text, is
//!   read as a reference and must have that form; text that merely starts
//!   with `@FROM` is written with an escape (`"\u0040FROM..."`), which is
//!   never a reference. A single call (not a batch) never chains.
//!
//! The result is not serialised again: the field is found in the parent's
//! serialised result and its bytes are spliced into the child's params,
//! which are then read, validated and run like any call's.
//!
//! [`Plan::new`] reads the references and orders the batch; a call whose
//! references cannot be satisfied (bad syntax, an unknown or ambiguous id,
//! a reference to itself, a cycle) is refused with `-32602`, and so is a
//! call whose parent failed or whose parent's result lacks the field
//! ([`Plan::substitute`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{RpcError, code};
use crate::jsonrpc::envelope::{Invalid, Message};
use crate::jsonrpc::limits::JsonLimits;
use crate::jsonrpc::special::{MAX_TIMEOUT_SECS, SPECIAL};

mod field;
mod graph;

pub use field::field;

/// What a reference starts with.
pub const PREFIX: &str = "@FROM";
/// The longest reference, in bytes (a longer one is refused unread).
pub const MAX_REFERENCE_BYTES: usize = 1024;
/// The most bytes substituted into the calls of one batch, all references
/// together (each child gets its own copy of what it takes).
pub const MAX_SUBSTITUTED_BYTES: usize = 16 * 1024 * 1024;
/// The error type (`data.exception`) of a call refused for its references.
pub const KIND: &str = "rpc::BatchChain";

/// Whether any call of `items` mentions `@FROM` in its params: one byte
/// search per call, so a batch without references costs nothing more.
pub fn mentions(items: &[Result<Message<'_>, Invalid<'_>>]) -> bool {
    items.iter().any(|item| match item {
        Ok(Message::Request(request)) => request.params.is_some_and(|p| has_prefix(p.get().as_bytes())),
        _ => false,
    })
}

fn has_prefix(mut bytes: &[u8]) -> bool {
    while let Some(at) = memchr::memchr(b'@', bytes) {
        if bytes[at..].starts_with(PREFIX.as_bytes()) {
            return true;
        }
        bytes = &bytes[at + 1..];
    }
    false
}

/// One reference in a call's params.
#[derive(Debug, Clone)]
struct Reference<'a> {
    /// Where the string lies in the params text, quotes included.
    span: Range<usize>,
    /// The reference as written, without the quotes.
    text: &'a str,
    /// The index of the call it names.
    parent: usize,
    /// The field path; empty for the whole result.
    path: &'a str,
}

/// What [`Plan`] decided for one message of the batch.
#[derive(Debug)]
enum Node<'a> {
    /// No references: runs at once.
    Plain,
    /// Waits for its parents, then runs with its references replaced.
    Child {
        /// The params as sent.
        params: &'a RawValue,
        /// Its references, in the order of the text.
        refs: Vec<Reference<'a>>,
        /// The distinct calls it waits for.
        parents: Vec<usize>,
        /// The longest it waits for them.
        wait: Duration,
    },
    /// Refused without running.
    Refused(RpcError),
}

/// What a message of a batch is, for the transport running it.
#[derive(Debug)]
pub enum Role<'p> {
    /// No references: run it at once.
    Plain,
    /// It waits for `parents` calls (run it after [`Plan::children`] of
    /// each has finished), at most `wait` from the start of the batch.
    Child {
        /// How many distinct calls it waits for.
        parents: usize,
        /// The longest it waits (its `$rpc.timeout`, by default [`MAX_TIMEOUT_SECS`]).
        wait: Duration,
    },
    /// Answer it with this error without running it.
    Refused(&'p RpcError),
}

/// How a parent call ended, as [`Plan::substitute`] needs to know.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'r> {
    /// It succeeded with this (serialised) result.
    Result(&'r RawValue),
    /// It failed (or was refused).
    Failed,
    /// It was acknowledged to run later (`$rpc.callback`): no result yet.
    Asynchronous,
    /// It has not finished.
    Running,
}

/// The references of a batch and the order they impose.
#[derive(Debug)]
pub struct Plan<'a> {
    nodes: Vec<Node<'a>>,
    /// For each message, the children waiting for it.
    children: Vec<Vec<usize>>,
    /// The id of each message, as written (`None`: a notification or unreadable).
    ids: Vec<Option<&'a RawValue>>,
}

impl<'a> Plan<'a> {
    /// Reads the references of `items` (the messages of one batch) and
    /// refuses the calls whose references name no call, more than one, the
    /// call itself, or a cycle.
    pub fn new(items: &[Result<Message<'a>, Invalid<'a>>]) -> Plan<'a> {
        let ids: Vec<Option<&'a RawValue>> = items
            .iter()
            .map(|item| match item {
                Ok(Message::Request(request)) => request.id,
                Ok(Message::Response { id, .. }) => Some(*id),
                Err(invalid) => invalid.id,
            })
            .collect();
        let mut nodes: Vec<Node<'a>> = items.iter().map(|_| Node::Plain).collect();
        let mut index: Option<HashMap<Cow<'a, str>, (usize, usize)>> = None;
        for (i, item) in items.iter().enumerate() {
            let Ok(Message::Request(request)) = item else { continue };
            let Some(params) = request.params.filter(|p| has_prefix(p.get().as_bytes())) else { continue };
            let strings = strings_with_prefix(params.get());
            if strings.is_empty() {
                continue;
            }
            let index = index.get_or_insert_with(|| id_index(&ids));
            nodes[i] = match references(&ids, index, i, strings) {
                Ok(refs) => {
                    let mut parents: Vec<usize> = refs.iter().map(|r| r.parent).collect();
                    parents.sort_unstable();
                    parents.dedup();
                    Node::Child { params, refs, parents, wait: wait_limit(params) }
                }
                Err(error) => Node::Refused(error),
            };
        }
        let mut plan = Plan { children: vec![Vec::new(); nodes.len()], nodes, ids };
        if index.is_some() {
            graph::refuse_cycles(&mut plan);
            for child in 0..plan.nodes.len() {
                if let Node::Child { parents, .. } = &plan.nodes[child] {
                    for &parent in parents {
                        plan.children[parent].push(child);
                    }
                }
            }
        }
        plan
    }

    /// Whether any call has a reference (or a refused one): otherwise the
    /// batch runs as one without `@FROM`.
    pub fn chains(&self) -> bool {
        self.nodes.iter().any(|node| !matches!(node, Node::Plain))
    }

    /// How many messages the batch holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// What message `index` is (a message beyond the batch is [`Role::Plain`]).
    pub fn role(&self, index: usize) -> Role<'_> {
        match self.nodes.get(index) {
            Some(Node::Child { parents, wait, .. }) => Role::Child { parents: parents.len(), wait: *wait },
            Some(Node::Refused(error)) => Role::Refused(error),
            Some(Node::Plain) | None => Role::Plain,
        }
    }

    /// The calls waiting for message `index`, each once.
    pub fn children(&self, index: usize) -> &[usize] {
        self.children.get(index).map_or(&[], Vec::as_slice)
    }

    /// The params of child `index` with each reference replaced by the
    /// value it names, read from its parent's result (`outcome` of the
    /// parent's index); or the error the child is answered with: a parent
    /// that failed, ran asynchronously or has not finished, a missing
    /// field, the batch's [`MAX_SUBSTITUTED_BYTES`] spent, or params beyond
    /// `resolver`'s limits once substituted.
    pub fn substitute<'r>(
        &self,
        index: usize,
        outcome: impl Fn(usize) -> Outcome<'r>,
        resolver: &mut Resolver<'a>,
    ) -> Result<Box<RawValue>, RpcError> {
        let Some(Node::Child { params, refs, .. }) = self.nodes.get(index) else {
            return Err(RpcError::internal(format_args!("message {index} of the batch has no references")));
        };
        let text = params.get();
        let mut values: Vec<&'r str> = Vec::with_capacity(refs.len());
        let mut size = text.len();
        for reference in refs {
            let result = match outcome(reference.parent) {
                Outcome::Result(result) => result,
                Outcome::Failed => {
                    return Err(self.refusal(reference, format_args!("request {} failed", self.id(reference.parent))));
                }
                Outcome::Asynchronous => {
                    return Err(self.refusal(
                        reference,
                        format_args!(
                            "request {} runs asynchronously (`$rpc.callback`): its result is not in this batch",
                            self.id(reference.parent)
                        ),
                    ));
                }
                Outcome::Running => {
                    return Err(
                        self.refusal(reference, format_args!("request {} has not finished", self.id(reference.parent)))
                    );
                }
            };
            let range = resolver
                .found
                .entry((reference.parent, reference.path))
                .or_insert_with(|| field(result, reference.path).map(|value| offset_in(result.get(), value.get())))
                .clone();
            let Some(value) = range.and_then(|range| result.get().get(range)) else {
                return Err(self.refusal(
                    reference,
                    format_args!(
                        "the result of request {} has no field `{}`",
                        self.id(reference.parent),
                        shown(reference.path)
                    ),
                ));
            };
            resolver.spent = resolver.spent.saturating_add(value.len());
            if resolver.spent > MAX_SUBSTITUTED_BYTES {
                return Err(self.refusal(
                    reference,
                    format_args!("the values substituted into this batch exceed {MAX_SUBSTITUTED_BYTES} bytes"),
                ));
            }
            size = size - reference.span.len() + value.len();
            values.push(value);
        }
        let mut out = String::with_capacity(size);
        let mut at = 0;
        for (reference, value) in refs.iter().zip(values) {
            out.push_str(&text[at..reference.span.start]);
            out.push_str(value);
            at = reference.span.end;
        }
        out.push_str(&text[at..]);
        if let Err(exceeded) = resolver.limits.check(out.as_bytes()) {
            let first = &refs[0];
            return Err(self.refusal(first, format_args!("the params with the values substituted: {exceeded}")));
        }
        RawValue::from_string(out).map_err(RpcError::internal)
    }

    /// The error of child `index` whose wait ran out before every parent
    /// finished (`finished` of a parent's index): `-32000`, naming the
    /// first parent still running.
    pub fn timed_out(&self, index: usize, finished: impl Fn(usize) -> bool) -> RpcError {
        let Some(Node::Child { refs, wait, .. }) = self.nodes.get(index) else {
            return RpcError::internal(format_args!("message {index} of the batch has no references"));
        };
        let Some(reference) = refs.iter().find(|r| !finished(r.parent)).or(refs.first()) else {
            return RpcError::internal(format_args!("message {index} of the batch has no references"));
        };
        RpcError::new(
            code::TIMEOUT,
            format!(
                "`{}`: request {} did not finish within {} s (the `$rpc.timeout` of this request, by default {MAX_TIMEOUT_SECS} s)",
                shown(reference.text),
                self.id(reference.parent),
                wait.as_secs_f64()
            ),
        )
        .with_kind("rpc::Timeout")
    }

    /// The id of message `index` as written (`null` when it has none).
    fn id(&self, index: usize) -> &str {
        self.ids.get(index).copied().flatten().map_or("null", RawValue::get)
    }

    fn refusal(&self, reference: &Reference<'_>, why: fmt::Arguments<'_>) -> RpcError {
        refusal(reference.text, why)
    }
}

/// What substitutions of one batch share: the fields found (each parent's
/// result is searched once per path) and the bytes spent.
#[derive(Debug)]
pub struct Resolver<'a> {
    found: HashMap<(usize, &'a str), Option<Range<usize>>>,
    spent: usize,
    limits: JsonLimits,
}

impl Resolver<'_> {
    /// A resolver whose substituted params must stay within `limits`'
    /// nesting depth and number of values.
    pub fn new(limits: &JsonLimits) -> Self {
        Resolver { found: HashMap::new(), spent: 0, limits: limits.max_batch(usize::MAX) }
    }
}

/// A `-32602` naming the reference (cut to a readable length).
fn refusal(text: &str, why: impl fmt::Display) -> RpcError {
    RpcError::invalid_params(format!("`{}`: {why}", shown(text))).with_kind(KIND)
}

/// `text`, cut to 64 bytes at a character boundary.
fn shown(text: &str) -> Cow<'_, str> {
    const MAX: usize = 64;
    if text.len() <= MAX {
        return Cow::Borrowed(text);
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &text[..end]))
}

/// The range `inner` (a slice of `outer`) takes in `outer`.
fn offset_in(outer: &str, inner: &str) -> Range<usize> {
    let start = (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize);
    start..start + inner.len()
}

/// The string values (not member names) of the JSON text `params` whose
/// text starts with `@FROM`: each one's span, quotes included, and text.
fn strings_with_prefix(params: &str) -> Vec<(Range<usize>, &str)> {
    let bytes = params.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b'"', &bytes[i..]) {
        let start = i + offset;
        let end = super::limits::string_end(bytes, start + 1);
        if end >= bytes.len() {
            break;
        }
        i = end + 1;
        let content = &bytes[start + 1..end.min(bytes.len())];
        if !content.starts_with(PREFIX.as_bytes()) {
            continue;
        }
        let is_key = bytes.get(i..).and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace())) == Some(&b':');
        if !is_key && let Some(text) = params.get(start + 1..end) {
            found.push((start..end + 1, text));
        }
    }
    found
}

/// The message ids of a batch, by the text a reference names them with:
/// the first index and how many messages have it.
fn id_index<'a>(ids: &[Option<&'a RawValue>]) -> HashMap<Cow<'a, str>, (usize, usize)> {
    let mut index: HashMap<Cow<'a, str>, (usize, usize)> = HashMap::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let Some(id) = id else { continue };
        let text = id.get();
        let key = if text.starts_with('"') {
            match serde_json::from_str::<&'a str>(text) {
                Ok(plain) => Cow::Borrowed(plain),
                Err(_) => match serde_json::from_str::<String>(text) {
                    Ok(unescaped) => Cow::Owned(unescaped),
                    Err(_) => continue,
                },
            }
        } else if text == "null" {
            continue;
        } else {
            Cow::Borrowed(text)
        };
        index.entry(key).and_modify(|(_, count)| *count += 1).or_insert((i, 1));
    }
    index
}

/// The references of message `own` (its params `text`, the strings found
/// in it), or the error refusing it: the first bad one.
fn references<'a>(
    ids: &[Option<&'a RawValue>],
    index: &HashMap<Cow<'a, str>, (usize, usize)>,
    own: usize,
    strings: Vec<(Range<usize>, &'a str)>,
) -> Result<Vec<Reference<'a>>, RpcError> {
    let mut refs = Vec::with_capacity(strings.len());
    for (span, reference) in strings {
        let (id, path) = parse(reference).map_err(|why| {
            RpcError::invalid_params(format!(
                "Invalid `@FROM` reference `{}`: {why}; write `@FROM:<id>(<field>)`, e.g. `@FROM:1(user.id)`, or \
                 `@FROM:1()` for the whole result (text that starts with `@FROM` is written `\\u0040FROM`)",
                shown(reference)
            ))
            .with_kind(KIND)
        })?;
        let parent = match index.get(id) {
            None => return Err(refusal(reference, format_args!("no request with id {} in this batch", shown(id)))),
            Some(&(_, count)) if count > 1 => {
                return Err(refusal(reference, format_args!("{count} requests in this batch have id {}", shown(id))));
            }
            Some(&(parent, _)) if parent == own => {
                let own_id = ids.get(own).copied().flatten().map_or("null", RawValue::get);
                return Err(refusal(reference, format_args!("request {own_id} depends on itself")));
            }
            Some(&(parent, _)) => parent,
        };
        refs.push(Reference { span, text: reference, parent, path });
    }
    Ok(refs)
}

/// The id and path of a reference, or what is wrong with it.
fn parse(reference: &str) -> Result<(&str, &str), &'static str> {
    if reference.len() > MAX_REFERENCE_BYTES {
        return Err("a reference is at most 1024 bytes");
    }
    if reference.contains('\\') {
        return Err("a reference is written without escapes");
    }
    let Some(rest) = reference.strip_prefix("@FROM:") else {
        return Err("`@FROM` is followed by `:` and the id");
    };
    let Some((id, after)) = rest.split_once('(') else { return Err("the id is followed by `(`") };
    if id.is_empty() || id.contains(')') {
        return Err("the id is one or more characters other than parentheses");
    }
    let Some(path) = after.strip_suffix(')') else { return Err("the field ends with `)`, the last character") };
    if path.contains(['(', ')']) {
        return Err("a field has no parentheses");
    }
    if !path.is_empty() && path.split('.').any(str::is_empty) {
        return Err("a field path is names separated by single dots");
    }
    Ok((id, path))
}

/// The longest call `params` waits for its parents: its `$rpc.timeout`
/// when it is a valid one, or [`MAX_TIMEOUT_SECS`].
fn wait_limit(params: &RawValue) -> Duration {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "$rpc", borrow, default)]
        special: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Options {
        #[serde(default)]
        timeout: Option<f64>,
    }
    debug_assert_eq!(SPECIAL, "$rpc");
    let timeout = serde_json::from_str::<Params<'_>>(params.get())
        .ok()
        .and_then(|p| p.special)
        .and_then(|special| serde_json::from_str::<Options>(special.get()).ok())
        .and_then(|options| options.timeout)
        .filter(|t| *t > 0.0 && *t <= MAX_TIMEOUT_SECS);
    Duration::from_secs_f64(timeout.unwrap_or(MAX_TIMEOUT_SECS))
}

/// Writes the ids of a cycle (`1 → 2 → 1`), long ones cut in the middle.
fn write_cycle(out: &mut String, ids: &[&str]) {
    const SHOWN: usize = 6;
    let Some(first) = ids.first() else { return };
    if ids.len() <= SHOWN {
        for id in ids {
            let _ = write!(out, "{} → ", shown(id));
        }
    } else {
        for id in &ids[..3] {
            let _ = write!(out, "{} → ", shown(id));
        }
        out.push_str("… → ");
        for id in &ids[ids.len() - 2..] {
            let _ = write!(out, "{} → ", shown(id));
        }
    }
    let _ = write!(out, "{}", shown(first));
    if ids.len() > SHOWN {
        let _ = write!(out, " ({} requests)", ids.len());
    }
}

#[cfg(test)]
mod tests;
