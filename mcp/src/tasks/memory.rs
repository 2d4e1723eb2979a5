//! Tasks in this process, bounded in number and bytes; expired tasks are
//! swept when room is needed.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::{StoreError, TaskStore};

/// Tasks kept in this process (the default store).
#[derive(Debug)]
pub struct MemoryTaskStore {
    max_tasks: usize,
    max_bytes: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    tasks: HashMap<String, (String, Instant)>,
    bytes: usize,
}

impl Default for MemoryTaskStore {
    /// 10,000 tasks, 64 MiB of records.
    fn default() -> Self {
        MemoryTaskStore::new(10_000, 64 << 20)
    }
}

impl MemoryTaskStore {
    /// A store of at most `max_tasks` tasks and `max_bytes` bytes of records.
    pub fn new(max_tasks: usize, max_bytes: usize) -> Self {
        MemoryTaskStore { max_tasks: max_tasks.max(1), max_bytes, state: Mutex::default() }
    }

    /// Tasks held (expired ones included until swept).
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What holding a record costs: its text, its id and the map's slot.
fn cost(id: &str, record: &str) -> usize {
    id.len() + record.len() + 96
}

impl State {
    fn sweep(&mut self, now: Instant) {
        let mut freed = 0;
        self.tasks.retain(|id, (record, expires)| {
            let keep = *expires > now;
            if !keep {
                freed += cost(id, record);
            }
            keep
        });
        self.bytes = self.bytes.saturating_sub(freed);
    }

    fn live(&mut self, id: &str, now: Instant) -> Option<&mut (String, Instant)> {
        if self.tasks.get(id).is_some_and(|(_, expires)| *expires <= now) {
            if let Some((record, _)) = self.tasks.remove(id) {
                self.bytes = self.bytes.saturating_sub(cost(id, &record));
            }
            return None;
        }
        self.tasks.get_mut(id)
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, id: &'a str, record: String, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        let now = Instant::now();
        let mut state = self.lock();
        let size = cost(id, &record);
        if state.tasks.len() >= self.max_tasks || state.bytes + size > self.max_bytes {
            state.sweep(now);
        }
        if state.tasks.len() >= self.max_tasks || state.bytes + size > self.max_bytes {
            return ready(Err(StoreError::new(format!(
                "the task store is full ({} tasks, {} bytes at most): try again when running tasks have ended",
                self.max_tasks, self.max_bytes
            ))));
        }
        if state.live(id, now).is_some() {
            return ready(Err(StoreError::new("a task with this id already exists")));
        }
        let expires = now.checked_add(ttl).unwrap_or(now + Duration::from_secs(365 * 24 * 3600));
        state.bytes += size;
        state.tasks.insert(id.to_owned(), (record, expires));
        ready(Ok(()))
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        let mut state = self.lock();
        ready(Ok(state.live(id, Instant::now()).map(|(record, _)| record.clone())))
    }

    fn replace<'a>(&'a self, id: &'a str, old: &'a str, new: String) -> BoxFuture<'a, Result<bool, StoreError>> {
        let mut state = self.lock();
        let budget = self.max_bytes;
        let used = state.bytes;
        let Some((record, _)) = state.live(id, Instant::now()) else { return ready(Ok(false)) };
        if record != old {
            return ready(Ok(false));
        }
        let (before, after) = (cost(id, record), cost(id, &new));
        if after > before && used + (after - before) > budget {
            return ready(Err(StoreError::new(format!(
                "the task store is full ({budget} bytes at most): the task's record cannot grow"
            ))));
        }
        *record = new;
        state.bytes = used - before + after;
        ready(Ok(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block<T>(future: BoxFuture<'_, T>) -> T {
        futures_util::FutureExt::now_or_never(future).expect("the memory store answers at once")
    }

    #[test]
    fn replace_is_compare_and_set() {
        let store = MemoryTaskStore::default();
        block(store.create("a", "one".into(), Duration::from_secs(60))).unwrap();
        assert!(block(store.create("a", "two".into(), Duration::from_secs(60))).is_err());
        assert!(!block(store.replace("a", "two", "three".into())).unwrap());
        assert!(block(store.replace("a", "one", "three".into())).unwrap());
        assert_eq!(block(store.load("a")).unwrap().as_deref(), Some("three"));
        assert!(!block(store.replace("missing", "one", "x".into())).unwrap());
    }

    #[test]
    fn bounded_in_number_and_bytes_expired_tasks_make_room() {
        let store = MemoryTaskStore::new(2, 10_000);
        block(store.create("a", "x".into(), Duration::ZERO)).unwrap();
        block(store.create("b", "x".into(), Duration::from_secs(60))).unwrap();
        // "a" has expired: it is swept to make room.
        block(store.create("c", "x".into(), Duration::from_secs(60))).unwrap();
        assert_eq!(block(store.load("a")).unwrap(), None);
        let full = block(store.create("d", "x".into(), Duration::from_secs(60))).unwrap_err();
        assert!(full.to_string().contains("full"), "{full}");
        let big = "x".repeat(20_000);
        assert!(block(store.replace("b", "x", big.clone())).is_err());
        assert!(block(MemoryTaskStore::new(10, 1000).create("e", big, Duration::from_secs(1))).is_err());
    }
}
