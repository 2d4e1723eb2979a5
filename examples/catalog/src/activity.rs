//! The catalog's event listener: per method, how many calls were answered
//! with a result (`after_response`) and how many failed (`on_error`), read
//! back through the back-office method `Activity.summary`. Results served
//! from the cache are not counted: a cache hit has no execution events.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rpc::{CallInfo, ErrorEvent, Listener, MaybeReady, Stage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::services::Admin;

/// The key under which calls refused before a method was found are counted
/// (unknown methods, unreadable requests): client-chosen names are never keys.
pub const UNRESOLVED: &str = "(no such method)";

/// What the listener saw of one method.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MethodActivity {
    /// Calls answered with a result, counted after the response was sent.
    pub answered: u64,
    /// Calls that ended in an error (invalid parameters, locked, failed).
    pub failed: u64,
}

/// The counts, shared by the listener and the `Activity` service.
#[derive(Debug, Default)]
pub struct ActivityLog {
    counts: Mutex<BTreeMap<String, MethodActivity>>,
}

impl ActivityLog {
    fn count(&self, method: &str, update: impl FnOnce(&mut MethodActivity)) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        match counts.get_mut(method) {
            Some(activity) => update(activity),
            None => update(counts.entry(method.to_owned()).or_default()),
        }
    }
}

/// The listener the catalog's executor runs.
#[derive(Debug, Clone)]
pub struct ActivityListener(pub Arc<ActivityLog>);

impl Listener for ActivityListener {
    fn watches_requests(&self) -> bool {
        false
    }

    fn after_response<'a>(&'a self, call: &'a CallInfo, _result: &'a RawValue) -> MaybeReady<'a, ()> {
        self.0.count(call.method.name(), |a| a.answered += 1);
        MaybeReady::ready(())
    }

    fn on_error<'a>(&'a self, event: &'a ErrorEvent<'a>) -> MaybeReady<'a, ()> {
        // Only names the registry resolved become keys, so the map stays as
        // small as the API whatever clients send.
        let method = match event.stage {
            Stage::Request | Stage::Lookup | Stage::RateLimit => UNRESOLVED,
            _ => event.method,
        };
        self.0.count(method, |a| a.failed += 1);
        MaybeReady::ready(())
    }
}

/// The back-office view of the listener's counts.
#[derive(Debug, Clone)]
pub struct Activity(pub Arc<ActivityLog>);

/// Back-office figures: calls and failures per method.
#[rpc::service(groups(Admin))]
impl Activity {
    /// Calls answered and failed, per method, since the server started.
    ///
    /// Counted by the catalog's event listener: a call is answered once its
    /// response was sent; results served from the cache are not counted.
    pub fn summary(&self) -> BTreeMap<String, MethodActivity> {
        self.0.counts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
