//! Which tools a caller sees: a tool with `scopes(...)` is listed only to
//! identities granted all of them (identities not limited to scopes, such
//! as a static token's, see every tool). Each distinct grant, over the
//! scopes the tools name, gets its own pages, written once, as the full
//! list's are.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rpc::Identity;
use rpc::i18n::Language;
use serde_json::Value;

use crate::config::McpConfig;
use crate::pages::{ListTexts, Pages};
use crate::protocol::ProtocolVersion;

/// How many grants keep their pages; past that, a grant's page is written
/// for its request and dropped (the scopes a set's tools name are few, and
/// so are the grants seen in practice).
const KEPT_GRANTS: usize = 32;

/// A set of scopes, one bit per scope of a [`Visibility`]'s universe.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Grant(Box<[u64]>);

impl Grant {
    fn empty(len: usize) -> Grant {
        Grant(vec![0; len.div_ceil(64)].into_boxed_slice())
    }

    fn set(&mut self, bit: usize) {
        if let Some(word) = self.0.get_mut(bit / 64) {
            *word |= 1 << (bit % 64);
        }
    }

    /// Whether every scope of `self` is in `other`.
    pub fn within(&self, other: &Grant) -> bool {
        self.0.iter().zip(other.0.iter()).all(|(a, b)| a & !b == 0)
    }
}

/// The scopes a set's tools name, what each tool needs, and the pages of
/// each grant seen.
pub struct Visibility {
    /// Every scope a tool names, sorted.
    universe: Vec<&'static str>,
    /// What each listed tool needs, in list order.
    needs: Vec<Grant>,
    /// Writes the pages of the tools a grant sees (a filter of the list).
    build: Box<dyn Fn(Arc<[bool]>) -> Pages + Send + Sync>,
    kept: Mutex<Vec<(Grant, Arc<Pages>)>>,
}

impl std::fmt::Debug for Visibility {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.lock().map_or(0, |k| k.len());
        f.debug_struct("Visibility").field("universe", &self.universe).field("kept", &kept).finish_non_exhaustive()
    }
}

impl Visibility {
    /// The visibility of a list whose items need `needs` (each item's
    /// scopes, in list order); `None` when no item needs a scope (the list
    /// is the same for everyone). `build` writes the pages of the items a
    /// caller sees, given which ones (by list index).
    pub fn new(
        needs: &[&'static [&'static str]],
        build: impl Fn(Arc<[bool]>) -> Pages + Send + Sync + 'static,
    ) -> Option<Visibility> {
        let mut universe: Vec<&'static str> = needs.iter().flat_map(|n| n.iter().copied()).collect();
        if universe.is_empty() {
            return None;
        }
        universe.sort_unstable();
        universe.dedup();
        let needs = needs.iter().map(|n| grant_of(&universe, n.iter().copied())).collect();
        Some(Visibility { universe, needs, build: Box::new(build), kept: Mutex::new(Vec::new()) })
    }

    /// The pages `identity` sees; `None` when it sees every item (an
    /// identity not limited to scopes, or granted all of them).
    pub fn pages_for(&self, identity: &Identity) -> Option<Arc<Pages>> {
        if !identity.scoped {
            return None;
        }
        let grant = grant_of(&self.universe, identity.scopes.iter().map(String::as_str));
        if self.needs.iter().all(|need| need.within(&grant)) {
            return None;
        }
        let mut kept = self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, pages)) = kept.iter().find(|(g, _)| *g == grant) {
            return Some(Arc::clone(pages));
        }
        let seen: Arc<[bool]> = self.needs.iter().map(|need| need.within(&grant)).collect();
        let pages = Arc::new((self.build)(seen));
        if kept.len() < KEPT_GRANTS {
            kept.push((grant, Arc::clone(&pages)));
        }
        Some(pages)
    }
}

/// A list whose items may need scopes (tools, resources, templates,
/// prompts): its pages of every item, and, when callers may be limited to
/// scopes and an item needs one, the pages of each grant.
#[derive(Debug, Default)]
pub struct ScopedList {
    pages: Pages,
    visibility: Option<Visibility>,
}

impl ScopedList {
    /// The list of `items` under `key`, each written by `write`, each
    /// needing the scopes `needs` gives; with `scoped_callers`, a caller
    /// limited to scopes sees the items it may use, and every page of a
    /// list some item of which needs a scope is `private` to caches.
    pub fn build<T: Send + Sync + 'static>(
        key: &'static str,
        texts: &Arc<ListTexts>,
        config: &McpConfig,
        items: Vec<T>,
        needs: impl Fn(&T) -> &'static [&'static str],
        write: impl Fn(&T, &ListTexts, Language, ProtocolVersion) -> Value + Send + Sync + 'static,
        scoped_callers: bool,
    ) -> ScopedList {
        let required: Vec<&'static [&'static str]> = items.iter().map(needs).collect();
        let source = Arc::new(Source { key, items, write, texts: Arc::clone(texts), config: config.clone() });
        let visibility = match scoped_callers {
            true => {
                let source = Arc::clone(&source);
                Visibility::new(&required, move |seen| source.pages(Some(seen)).private())
            }
            false => None,
        };
        let pages = if visibility.is_some() { source.pages(None).private() } else { source.pages(None) };
        ScopedList { pages, visibility }
    }

    /// The page `identity` sees (the items its scopes allow; every item
    /// for a caller not limited to scopes) for `cursor`, or `None` for an
    /// invalid cursor.
    pub fn get(
        &self,
        identity: Option<&Identity>,
        language: Language,
        version: ProtocolVersion,
        cursor: Option<&str>,
    ) -> Option<Bytes> {
        match self.visibility.as_ref().zip(identity).and_then(|(v, identity)| v.pages_for(identity)) {
            Some(pages) => pages.get(language, version, cursor).cloned(),
            None => self.pages.get(language, version, cursor).cloned(),
        }
    }
}

/// What a [`ScopedList`]'s pages are written from.
struct Source<T, W> {
    key: &'static str,
    items: Vec<T>,
    write: W,
    texts: Arc<ListTexts>,
    config: McpConfig,
}

impl<T, W> Source<T, W>
where
    T: Send + Sync + 'static,
    W: Fn(&T, &ListTexts, Language, ProtocolVersion) -> Value + Send + Sync + 'static,
{
    /// The pages of the items `seen` marks (by index; `None`: every item).
    fn pages(self: &Arc<Self>, seen: Option<Arc<[bool]>>) -> Pages {
        let source = Arc::clone(self);
        Pages::build(self.key, &self.texts, &self.config, move |texts, language, version| {
            let seen = |i: usize| seen.as_ref().is_none_or(|seen| seen.get(i).copied().unwrap_or(false));
            let items = source.items.iter().enumerate().filter(|(i, _)| seen(*i));
            items.map(|(_, item)| (source.write)(item, texts, language, version)).collect()
        })
    }
}

/// The bits of `scopes` in `universe` (scopes outside it are irrelevant).
fn grant_of<'a>(universe: &[&str], scopes: impl Iterator<Item = &'a str>) -> Grant {
    let mut grant = Grant::empty(universe.len());
    for scope in scopes {
        if let Ok(bit) = universe.binary_search(&scope) {
            grant.set(bit);
        }
    }
    grant
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    fn names(pages: &Pages) -> Value {
        let page = pages.get(Language::DEFAULT, ProtocolVersion::V2025_11_25, None).unwrap();
        serde_json::from_slice::<Value>(page).unwrap()["tools"].clone()
    }

    #[test]
    fn each_grant_sees_the_items_it_may_use_and_its_pages_are_kept() {
        let built = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&built);
        let texts = Arc::new(ListTexts::default());
        let config = McpConfig::new(crate::server_info::ServerInfo::new("t", "1"));
        let needs: [&'static [&'static str]; 4] = [&[], &["w"], &["w", "admin"], &["r"]];
        let visibility = Visibility::new(&needs, move |seen| {
            counter.fetch_add(1, Ordering::Relaxed);
            let texts = Arc::clone(&texts);
            Pages::build("tools", &texts, &config, move |_, _, _| {
                (0..4).filter(|i| seen[*i]).map(|i| json!(i)).collect()
            })
        })
        .unwrap();
        assert!(visibility.pages_for(&Identity::new("token")).is_none(), "not limited to scopes");
        let all = Identity::new("root").with_scopes(["r", "w", "admin", "other"]);
        assert!(visibility.pages_for(&all).is_none(), "granted every scope");
        let writer = Identity::new("w").with_scopes(["w", "unrelated"]);
        assert_eq!(names(&visibility.pages_for(&writer).unwrap()), json!([0, 1]));
        assert_eq!(names(&visibility.pages_for(&Identity::new("n").with_scopes([""; 0])).unwrap()), json!([0]));
        assert_eq!(names(&visibility.pages_for(&Identity::new("r").with_scopes(["r"])).unwrap()), json!([0, 3]));
        let again = Identity::new("w2").with_scopes(["unrelated", "w"]);
        assert_eq!(names(&visibility.pages_for(&again).unwrap()), json!([0, 1]));
        assert_eq!(built.load(Ordering::Relaxed), 3, "one set of pages per grant");
        assert!(Visibility::new(&[&[], &[]], |_| Pages::default()).is_none(), "nothing needs a scope");
    }

    #[test]
    fn grants_past_the_kept_ones_are_written_per_request() {
        let scopes: Vec<&'static str> = (0..80).map(|i| &*format!("s{i}").leak()).collect();
        let needs: Vec<&'static [&'static str]> =
            scopes.iter().map(|s| -> &'static [&'static str] { Box::leak(Box::new([*s])) }).collect();
        let built = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&built);
        let visibility = Visibility::new(&needs, move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
            Pages::default()
        })
        .unwrap();
        for round in 0..2 {
            for scope in &scopes {
                assert!(visibility.pages_for(&Identity::new("x").with_scopes([*scope])).is_some(), "{round}");
            }
        }
        assert_eq!(built.load(Ordering::Relaxed), KEPT_GRANTS + 2 * (80 - KEPT_GRANTS));
        let grant = grant_of(&visibility.universe, ["s79", "s0"].into_iter());
        assert!(visibility.needs[79].within(&grant) && visibility.needs[0].within(&grant));
        assert!(!visibility.needs[64].within(&grant));
    }
}
