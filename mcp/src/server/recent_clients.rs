//! The client views a worker thread built last for 2026-07-28 requests.
//!
//! A 2026-07-28 client sends the same `_meta` facts (`clientCapabilities`,
//! `clientInfo`) with every request, and the method's context gets a view
//! of them. Building one copies both texts and shares them behind an
//! `Arc`: three allocations, and three frees when the request is done,
//! paid by every call, cached or not, for a view most methods never read.
//! A thread keeps its last few views and hands out the one whose texts
//! are byte for byte those of the request (a view never changes once
//! built, so sharing it between requests is sharing the same facts).
//!
//! Bounded: [`KEPT`] views a thread, each of facts the caller keeps small
//! (larger ones are reduced, not kept here). A client that sends different
//! facts each time only pays the comparison with them.

use std::cell::RefCell;

use rpc::ClientView;
use serde_json::value::RawValue;

use crate::protocol::ProtocolVersion;

/// How many views a thread keeps.
pub(crate) const KEPT: usize = 4;

/// One view, with the texts it was built from.
struct Recent {
    protocol: ProtocolVersion,
    capabilities: Option<Box<str>>,
    info: Option<Box<str>>,
    view: ClientView,
}

/// A thread's views, and the slot the next new one takes.
struct Kept {
    next: usize,
    views: [Option<Recent>; KEPT],
}

thread_local! {
    static KEPT_VIEWS: RefCell<Kept> = const { RefCell::new(Kept { next: 0, views: [None, None, None, None] }) };
}

/// The view of these facts: one this thread built from the same texts
/// lately, else `build()`'s (kept for the next requests).
pub(crate) fn view_of(
    protocol: ProtocolVersion,
    capabilities: Option<&RawValue>,
    info: Option<&RawValue>,
    build: impl FnOnce() -> ClientView,
) -> ClientView {
    let (capabilities, info) = (capabilities.map(RawValue::get), info.map(RawValue::get));
    KEPT_VIEWS.with(|kept| {
        let Ok(mut kept) = kept.try_borrow_mut() else { return build() };
        let same = |r: &&Recent| {
            r.protocol == protocol && r.capabilities.as_deref() == capabilities && r.info.as_deref() == info
        };
        if let Some(recent) = kept.views.iter().flatten().find(same) {
            return recent.view.clone();
        }
        let view = build();
        let slot = kept.next;
        kept.views[slot] = Some(Recent {
            protocol,
            capabilities: capabilities.map(Into::into),
            info: info.map(Into::into),
            view: view.clone(),
        });
        kept.next = (slot + 1) % KEPT;
        view
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    fn built(counter: &std::cell::Cell<usize>, caps: &RawValue, info: Option<&RawValue>) -> ClientView {
        counter.set(counter.get() + 1);
        ClientView::from_raw(Some("2026-07-28".into()), Some(caps.to_owned()), info.map(ToOwned::to_owned))
    }

    #[test]
    fn the_same_texts_get_the_same_view_and_others_their_own() {
        let builds = std::cell::Cell::new(0);
        let (caps, info) = (raw(r#"{"sampling":{}}"#), raw(r#"{"name":"a","version":"1"}"#));
        let v = ProtocolVersion::V2026_07_28;
        let first = view_of(v, Some(&caps), Some(&info), || built(&builds, &caps, Some(&info)));
        let again = view_of(v, Some(&caps), Some(&info), || built(&builds, &caps, Some(&info)));
        assert_eq!(builds.get(), 1, "built once");
        assert_eq!(first, again);
        assert_eq!(again.info().unwrap()["name"], "a");
        assert!(again.capabilities().unwrap().get("sampling").is_some());
        // Another client's facts, or none, are never answered with this view.
        let other = raw(r#"{"name":"b","version":"1"}"#);
        let b = view_of(v, Some(&caps), Some(&other), || built(&builds, &caps, Some(&other)));
        assert_eq!(b.info().unwrap()["name"], "b");
        let none = view_of(v, Some(&caps), None, || built(&builds, &caps, None));
        assert!(none.info().is_none());
        assert_eq!(builds.get(), 3);
    }

    #[test]
    fn a_thread_keeps_only_its_last_views() {
        let builds = std::cell::Cell::new(0);
        let caps = raw("{}");
        let infos: Vec<Box<RawValue>> = (0..KEPT + 1).map(|i| raw(&format!(r#"{{"name":"c{i}"}}"#))).collect();
        let v = ProtocolVersion::V2026_07_28;
        for info in &infos {
            view_of(v, Some(&caps), Some(info), || built(&builds, &caps, Some(info)));
        }
        assert_eq!(builds.get(), KEPT + 1);
        // The first was replaced by the last; the others are still kept.
        view_of(v, Some(&caps), Some(&infos[KEPT]), || built(&builds, &caps, Some(&infos[KEPT])));
        assert_eq!(builds.get(), KEPT + 1);
        view_of(v, Some(&caps), Some(&infos[0]), || built(&builds, &caps, Some(&infos[0])));
        assert_eq!(builds.get(), KEPT + 2);
    }
}
