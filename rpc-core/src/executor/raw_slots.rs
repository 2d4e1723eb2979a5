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

/// What a text is remembered by: the method, the version, the caller's
/// subject and the text itself.
pub(super) struct TextKey<'a> {
    pub method: &'a Arc<Method>,
    pub version: u32,
    pub subject: Option<&'a str>,
    pub text: &'a str,
}

impl TextKey<'_> {
    /// Whether `entry` was remembered for this key.
    fn matches(&self, entry: &Entry) -> bool {
        Arc::ptr_eq(&entry.method, self.method)
            && entry.version == self.version
            && entry.subject.as_deref() == self.subject
            && &*entry.text == self.text
    }
}

impl RawSlots {
    /// The key's hash, or `None` for a text too long to remember.
    fn hash(&self, key: &TextKey<'_>) -> Option<u64> {
        if key.text.len() > MAX_TEXT_BYTES {
            return None;
        }
        let mut h = self.hasher.build_hasher();
        h.write(key.method.name().as_bytes());
        h.write_u32(key.version);
        match key.subject {
            Some(subject) => {
                h.write_u8(1);
                h.write(subject.as_bytes());
            }
            None => h.write_u8(0),
        }
        h.write(key.text.as_bytes());
        Some(h.finish())
    }

    /// The slot remembered for this key, if any.
    pub(super) fn get(&self, key: &TextKey<'_>) -> Option<Arc<CacheSlot>> {
        let hash = self.hash(key)?;
        let entries = self.entries.lock().ok()?;
        entries.get(&hash).filter(|entry| key.matches(entry)).map(|entry| Arc::clone(&entry.slot))
    }

    /// Remembers the slot of a call whose text was read, bound and validated.
    pub(super) fn remember(&self, key: &TextKey<'_>, slot: Arc<CacheSlot>) {
        let Some(hash) = self.hash(key) else { return };
        let Ok(mut entries) = self.entries.lock() else { return };
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&hash) {
            entries.clear();
        }
        let entry = Entry {
            method: Arc::clone(key.method),
            version: key.version,
            subject: key.subject.map(Box::from),
            text: Box::from(key.text),
            slot,
        };
        entries.insert(hash, entry);
    }

    /// How many slots are remembered.
    pub(super) fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }
}
