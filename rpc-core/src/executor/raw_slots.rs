//! Cache slots remembered by the raw text of a call's named parameters.
//!
//! A transport that hands the executor its parameters as raw JSON text
//! ([`Call::named_raw`](crate::call::Call::named_raw)) lets a repeated call
//! of a cached method skip reading them: binding, validation and the cache
//! key are functions of the method, the version, the caller's subject and
//! that text, so the slot computed for the text the first time is the slot
//! of every call with the same bytes. Only texts that were read, bound and
//! validated are remembered; the cache lookup itself (entry, stamp, expiry)
//! runs on every call as before, so what a call gets is unchanged.
//!
//! Bounded: texts up to [`MAX_TEXT_BYTES`], at most [`MAX_ENTRIES`] slots;
//! a full table is emptied (a client cycling through distinct texts only
//! makes its own calls read their parameters, as without the table).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};

use super::cache::CacheSlot;
use crate::registry::Method;

/// The longest raw text remembered, in bytes.
pub(crate) const MAX_TEXT_BYTES: usize = 512;
/// The most slots remembered.
pub(crate) const MAX_ENTRIES: usize = 2048;

/// The table: by a hash of (method, version, subject, text), each entry
/// holding those to compare on a hit (a hash collision is a miss).
#[derive(Default)]
pub(super) struct RawSlots {
    entries: Mutex<HashMap<u64, Entry, foldhash::fast::FixedState>>,
    hasher: foldhash::fast::RandomState,
}

struct Entry {
    method: Arc<Method>,
    version: u32,
    subject: Option<Box<str>>,
    text: Box<str>,
    slot: Arc<CacheSlot>,
}

impl RawSlots {
    fn hash(&self, method: &Method, version: u32, subject: Option<&str>, text: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write(method.name().as_bytes());
        h.write_u32(version);
        match subject {
            Some(subject) => {
                h.write_u8(1);
                h.write(subject.as_bytes());
            }
            None => h.write_u8(0),
        }
        h.write(text.as_bytes());
        h.finish()
    }

    /// The slot remembered for this call's text, if any.
    pub(super) fn get(
        &self,
        method: &Arc<Method>,
        version: u32,
        subject: Option<&str>,
        text: &str,
    ) -> Option<Arc<CacheSlot>> {
        if text.len() > MAX_TEXT_BYTES {
            return None;
        }
        let hash = self.hash(method, version, subject, text);
        let entries = self.entries.lock().ok()?;
        let entry = entries.get(&hash)?;
        let same = Arc::ptr_eq(&entry.method, method)
            && entry.version == version
            && entry.subject.as_deref() == subject
            && &*entry.text == text;
        same.then(|| Arc::clone(&entry.slot))
    }

    /// Remembers the slot of a call whose text was read, bound and validated.
    pub(super) fn remember(
        &self,
        method: &Arc<Method>,
        version: u32,
        subject: Option<&str>,
        text: &str,
        slot: Arc<CacheSlot>,
    ) {
        if text.len() > MAX_TEXT_BYTES {
            return;
        }
        let hash = self.hash(method, version, subject, text);
        let Ok(mut entries) = self.entries.lock() else { return };
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&hash) {
            entries.clear();
        }
        let entry =
            Entry { method: Arc::clone(method), version, subject: subject.map(Box::from), text: Box::from(text), slot };
        entries.insert(hash, entry);
    }

    /// How many slots are remembered.
    pub(super) fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }
}
