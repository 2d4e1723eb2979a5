//! How many `subscriptions/listen` streams may be open at once: per client
//! (its identity, else its address) and in all. A stream holds a
//! [`ListenSlot`] for as long as it is open; a client over its share is
//! refused with 429 rather than served another never-ending stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The open streams, counted per client and in all.
#[derive(Debug)]
pub(crate) struct ListenSlots {
    per_client: usize,
    total: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    by_client: HashMap<Box<str>, usize>,
    total: usize,
}

/// One open stream's place; released when dropped (the stream ended).
#[derive(Debug)]
pub(crate) struct ListenSlot {
    slots: Arc<ListenSlots>,
    client: Box<str>,
}

/// Why a stream was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// This client has `limit` streams open.
    Client(usize),
    /// The endpoint has `limit` streams open.
    Endpoint(usize),
}

impl ListenSlots {
    pub(crate) fn new(per_client: usize, total: usize) -> Arc<Self> {
        Arc::new(ListenSlots { per_client: per_client.max(1), total: total.max(1), open: Mutex::default() })
    }

    /// A place for one more stream of `client`, if it and the endpoint
    /// are under their limits.
    pub(crate) fn take(self: &Arc<Self>, client: &str) -> Result<ListenSlot, Refused> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.total >= self.total {
            return Err(Refused::Endpoint(self.total));
        }
        let count = open.by_client.get(client).copied().unwrap_or(0);
        if count >= self.per_client {
            return Err(Refused::Client(self.per_client));
        }
        open.by_client.insert(Box::from(client), count + 1);
        open.total += 1;
        Ok(ListenSlot { slots: self.clone(), client: Box::from(client) })
    }

    #[cfg(test)]
    fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).total
    }
}

impl Drop for ListenSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|e| e.into_inner());
        open.total = open.total.saturating_sub(1);
        if let Some(count) = open.by_client.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                open.by_client.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_client_and_in_all() {
        let slots = ListenSlots::new(2, 3);
        let a1 = slots.take("a").unwrap();
        let _a2 = slots.take("a").unwrap();
        assert_eq!(slots.take("a").unwrap_err(), Refused::Client(2));
        let _b1 = slots.take("b").unwrap();
        assert_eq!(slots.take("c").unwrap_err(), Refused::Endpoint(3));
        drop(a1);
        assert_eq!(slots.open(), 2);
        let _a3 = slots.take("a").unwrap();
        assert_eq!(slots.open(), 3);
    }

    #[test]
    fn closed_streams_leave_nothing_behind() {
        let slots = ListenSlots::new(1, 10);
        for i in 0..100 {
            drop(slots.take(&format!("client-{i}")).unwrap());
        }
        assert!(slots.open.lock().unwrap().by_client.is_empty());
    }
}
