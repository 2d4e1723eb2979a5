//! List-change notifications for `subscriptions/listen` streams
//! (2026-07-28).
//!
//! The application keeps a [`ListChanges`] and tells it when a list changed
//! (tools reloaded, a plugin loaded); every open listen stream that asked for
//! that kind of change gets the notification. Give the same handle to the
//! endpoint with [`McpEndpointBuilder::list_changes`](crate::McpEndpointBuilder::list_changes):
//! only then does the endpoint advertise `listChanged` and serve
//! `subscriptions/listen`.
//!
//! ```
//! let changes = mcp::ListChanges::new();
//! let mut stream = changes.subscribe();
//! changes.tools_changed();
//! assert_eq!(stream.try_recv().ok(), Some(mcp::ListChange::Tools));
//! ```

use tokio::sync::{broadcast, watch};

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListChange {
    /// `tools/list` (notification `notifications/tools/list_changed`).
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
}

impl ListChange {
    /// The notification method.
    pub fn method(self) -> &'static str {
        match self {
            ListChange::Tools => "notifications/tools/list_changed",
            ListChange::Prompts => "notifications/prompts/list_changed",
            ListChange::Resources => "notifications/resources/list_changed",
        }
    }

    /// The `subscriptions/listen` filter field that asks for it.
    pub fn filter_field(self) -> &'static str {
        match self {
            ListChange::Tools => "toolsListChanged",
            ListChange::Prompts => "promptsListChanged",
            ListChange::Resources => "resourcesListChanged",
        }
    }
}

/// Broadcasts list changes to the open listen streams, and ends them on
/// [`close`](Self::close). Cheap to clone: clones share the streams.
#[derive(Debug, Clone)]
pub struct ListChanges {
    changes: broadcast::Sender<ListChange>,
    closed: watch::Sender<bool>,
}

impl Default for ListChanges {
    fn default() -> Self {
        Self::new()
    }
}

impl ListChanges {
    /// A hub with no streams yet.
    pub fn new() -> Self {
        // A stream that falls this far behind skips ahead: a list-changed
        // notification carries no data, so one stands for many.
        let (changes, _) = broadcast::channel(64);
        let (closed, _) = watch::channel(false);
        ListChanges { changes, closed }
    }

    /// The tool list changed.
    pub fn tools_changed(&self) {
        self.notify(ListChange::Tools);
    }

    /// The prompt list changed.
    pub fn prompts_changed(&self) {
        self.notify(ListChange::Prompts);
    }

    /// Tells every open stream that asked for `change`.
    pub fn notify(&self, change: ListChange) {
        // No receivers is fine: nobody is listening.
        let _ = self.changes.send(change);
    }

    /// A receiver of future changes.
    pub fn subscribe(&self) -> broadcast::Receiver<ListChange> {
        self.changes.subscribe()
    }

    /// Ends every open stream gracefully (a final `subscriptions/listen`
    /// response, then the end of the stream), e.g. at shutdown. Streams
    /// opened afterwards end at once.
    pub fn close(&self) {
        self.closed.send_replace(true);
    }

    /// Whether [`close`](Self::close) was called, and a way to wait for it.
    pub(crate) fn closed(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }
}
