//! Tests of the in-process result cache: its bound in bytes, its LRU
//! order, expiry, results shared and kept with their strings.

use super::*;
use crate::clock::ManualClock;

#[tokio::test]
async fn cache_entries_expire_by_the_clock() {
    let clock = Arc::new(ManualClock::new());
    let cache = MemoryCache::with_clock(1 << 20, clock.clone());
    cache.put("k", "1", Duration::from_secs(60)).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some("1"));
    clock.advance(Duration::from_secs(59));
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some("1"));
    clock.advance(Duration::from_secs(1));
    assert_eq!(cache.get("k").await.unwrap(), None, "expired at its TTL");
    assert_eq!((cache.len(), cache.bytes()), (0, 0), "dropped when found");
    cache.put("k", "2", Duration::from_secs(5)).await.unwrap();
    cache.remove("k").await.unwrap();
    assert_eq!(cache.get("k").await.unwrap(), None);
    assert!(cache.put("k", "2", Duration::MAX).await.is_err(), "a TTL past the clock's range");
}

#[tokio::test]
async fn the_cache_stays_within_its_bytes() {
    let cache = MemoryCache::new(64 * 1024);
    let value = "x".repeat(1000);
    for i in 0..1000 {
        cache.put(&format!("key-{i}"), &value, Duration::from_secs(60)).await.unwrap();
    }
    assert!(cache.bytes() <= 64 * 1024, "{} bytes counted", cache.bytes());
    assert!((50..=64).contains(&cache.len()), "{} entries of ~1.2 KiB in a 64 KiB cache", cache.len());
    assert!(cache.get("key-999").await.unwrap().is_some(), "the newest stays");
    assert!(cache.get("key-0").await.unwrap().is_none(), "the oldest went");
}

#[tokio::test]
async fn small_entries_count_for_what_holding_them_costs() {
    let cache = MemoryCache::new(1024 * 1024);
    for i in 0..100_000 {
        cache.put(&format!("k{i}"), "[]", Duration::from_secs(60)).await.unwrap();
    }
    // An entry of 2-byte values and short keys costs well over 100 bytes.
    assert!(cache.len() < 1024 * 1024 / 150, "{} entries in 1 MiB", cache.len());
    assert!(cache.bytes() <= 1024 * 1024);
}

#[tokio::test]
async fn replacing_and_oversized_entries_keep_the_count() {
    let cache = MemoryCache::new(64 * 1024);
    for _ in 0..10 {
        cache.put("same", &"y".repeat(500), Duration::from_secs(60)).await.unwrap();
    }
    assert_eq!((cache.len(), cache.bytes()), (1, entry_cost("same", &"y".repeat(500))));
    cache.put("same", &"z".repeat(100_000), Duration::from_secs(60)).await.unwrap();
    assert_eq!((cache.len(), cache.bytes()), (0, 0), "too large to keep: the old value goes too");
}

fn json(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).unwrap()
}

fn current(read: ResultRead) -> Option<String> {
    match read {
        ResultRead::Current(json) => Some(json.get().to_owned()),
        ResultRead::Missing(_) => None,
    }
}

#[tokio::test]
async fn a_hit_shares_the_cached_bytes_instead_of_copying_them() {
    let cache = MemoryCache::new(1 << 20);
    let ttl = Duration::from_secs(60);
    let hit = async |key, stamp| match cache.get_result(key, stamp).await.unwrap() {
        ResultRead::Current(json) => json,
        ResultRead::Missing(_) => panic!("{key}: no hit"),
    };
    cache.put_result("r", None, &json(r#"{"a":1}"#), ttl).await.unwrap();
    let (first, second) = (hit("r", None).await, hit("r", None).await);
    assert!(first.is_shared() && first.json_string().is_none(), "no room for a string asked for");
    assert!(std::ptr::eq(first.get(), second.get()), "both hits read the one stored copy");
    cache.put_result("g", Some("0"), &json("[2]"), ttl).await.unwrap();
    let (first, second) = (hit("g", Some("gen")).await, hit("g", Some("gen")).await);
    assert_eq!(first.get(), "[2]");
    assert!(std::ptr::eq(first.get(), second.get()), "with a generation stamp too");
}

#[tokio::test]
async fn a_result_kept_with_its_string_writes_it_once_and_counts_it_from_the_start() {
    let clock = Arc::new(ManualClock::new());
    let cache = MemoryCache::with_clock(1 << 20, clock.clone());
    let ttl = Duration::from_secs(60);
    let text = r#"{"name":"a \"quoted\" \\ name","tab":"\t","é":[1,null]}"#;
    cache.put_result_with_string("k", None, &json(text), ttl).await.unwrap();
    let counted = result_cost("k", None, &json(text), true);
    assert_eq!(cache.bytes(), counted, "the string's room is counted before any hit writes it");
    assert!(counted > result_cost("k", None, &json(text), false) + text.len() as u64);
    let hit = async |key, stamp| match cache.get_result(key, stamp).await.unwrap() {
        ResultRead::Current(json) => json,
        ResultRead::Missing(_) => panic!("{key}: no hit"),
    };
    let (first, second) = (hit("k", None).await, hit("k", None).await);
    assert_eq!(first.get(), text, "the JSON as it was put");
    let string = first.json_string().expect("kept with room for its string");
    assert_eq!(string, serde_json::to_string(text).unwrap(), "what serde_json writes");
    assert!(std::ptr::eq(string, second.json_string().unwrap()), "written once, then shared");
    assert_eq!(cache.bytes(), counted, "writing it changed nothing counted");
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(text), "readable as text too");
    // With a stamp: current under its generation only, as any result.
    cache.put_result_with_string("g", Some("0"), &json("[2]"), ttl).await.unwrap();
    assert_eq!(hit("g", Some("gen")).await.json_string(), Some(r#""[2]""#));
    cache.put("gen", "s2", ttl).await.unwrap();
    assert!(matches!(cache.get_result("g", Some("gen")).await.unwrap(), ResultRead::Missing(Some(s)) if s == "s2"));
    // Put again without a string: the room goes, and so does its count.
    cache.put_result("k", None, &json(text), ttl).await.unwrap();
    assert!(hit("k", None).await.json_string().is_none());
    clock.advance(ttl);
    assert!(matches!(cache.get_result("k", None).await.unwrap(), ResultRead::Missing(None)), "expired");
}

#[tokio::test]
async fn results_kept_with_their_strings_stay_within_the_bound() {
    // Quotes double in the string: each entry counts about 2.2 times its
    // JSON, so fewer fit than without strings, and the bound holds.
    let ttl = Duration::from_secs(60);
    let text = format!("[{}]", vec![r#""x""#; 200].join(","));
    let (plain, kept) = (MemoryCache::new(256 * 1024), MemoryCache::new(256 * 1024));
    for i in 0..1_000 {
        plain.put_result(&format!("k{i}"), None, &json(&text), ttl).await.unwrap();
        kept.put_result_with_string(&format!("k{i}"), None, &json(&text), ttl).await.unwrap();
        if let ResultRead::Current(hit) = kept.get_result(&format!("k{i}"), None).await.unwrap() {
            assert_eq!(hit.json_string().map(str::len), Some(json_string_len(&text)));
        }
    }
    assert!(kept.bytes() <= 256 * 1024 && plain.bytes() <= 256 * 1024);
    let ratio = plain.len() as f64 / kept.len() as f64;
    assert!((1.8..2.6).contains(&ratio), "{} plain entries, {} kept", plain.len(), kept.len());
}

#[tokio::test]
async fn results_come_back_as_they_were_put() {
    let clock = Arc::new(ManualClock::new());
    let cache = MemoryCache::with_clock(1 << 20, clock.clone());
    let ttl = Duration::from_secs(60);
    cache.put_result("r", None, &json(r#"{"a":[1,2]}"#), ttl).await.unwrap();
    assert_eq!(current(cache.get_result("r", None).await.unwrap()).as_deref(), Some(r#"{"a":[1,2]}"#));
    assert_eq!(cache.get("r").await.unwrap().as_deref(), Some(r#"{"a":[1,2]}"#), "readable as text too");
    assert_eq!(cache.bytes(), result_cost("r", None, &json(r#"{"a":[1,2]}"#), false));
    // A result with a stamp is current under a generation only.
    assert!(matches!(cache.get_result("r", Some("gen")).await.unwrap(), ResultRead::Missing(Some(s)) if s == "0"));
    // Text put by hand is read and checked.
    cache.put("t", "[1]", ttl).await.unwrap();
    assert_eq!(current(cache.get_result("t", None).await.unwrap()).as_deref(), Some("[1]"));
    cache.put("bad", "[1", ttl).await.unwrap();
    assert!(matches!(cache.get_result("bad", None).await.unwrap(), ResultRead::Missing(None)));
    clock.advance(ttl);
    assert!(matches!(cache.get_result("r", None).await.unwrap(), ResultRead::Missing(None)), "expired");
}

#[tokio::test]
async fn stamped_results_follow_their_generation_in_any_shard() {
    // 16 shards: the generation keys fall in the entry's shard and in others.
    let cache = MemoryCache::new(32 * 1024 * 1024);
    let ttl = Duration::from_secs(60);
    for g in 0..64 {
        let (key, generation) = (format!("entry-{g}"), format!("gen-{g}"));
        cache.put_result(&key, Some("0"), &json("1"), ttl).await.unwrap();
        assert_eq!(current(cache.get_result(&key, Some(&generation)).await.unwrap()).as_deref(), Some("1"));
        cache.put(&generation, "s2", ttl).await.unwrap();
        let read = cache.get_result(&key, Some(&generation)).await.unwrap();
        assert!(matches!(read, ResultRead::Missing(Some(s)) if s == "s2"), "stale after an invalidation");
        cache.put_result(&key, Some("s2"), &json("2"), ttl).await.unwrap();
        assert_eq!(current(cache.get_result(&key, Some(&generation)).await.unwrap()).as_deref(), Some("2"));
        assert_eq!(cache.get(&key).await.unwrap().as_deref(), Some("g:s2:2"));
        // Stamped text put by hand (as a shared store holds it) is read too.
        cache.put(&key, "g:s2:[3]", ttl).await.unwrap();
        assert_eq!(current(cache.get_result(&key, Some(&generation)).await.unwrap()).as_deref(), Some("[3]"));
    }
}

#[tokio::test]
async fn prefix_removal_keeps_the_count_and_spares_longer_names() {
    // 16 shards, so the entries spread over all of them.
    let cache = MemoryCache::new(32 * 1024 * 1024);
    let ttl = Duration::from_secs(60);
    for i in 0..200 {
        cache.put_result(&format!("rpc:cache:Catalog.get:v1:j:{{\"id\":{i}}}"), None, &json("1"), ttl).await.unwrap();
        cache.put(&format!("rpc:cache:Catalog.getAll:v1:j:{{\"page\":{i}}}"), "[2]", ttl).await.unwrap();
    }
    cache.put("rpc:cache:Catalog.get:v2:j:{}", "3", ttl).await.unwrap();
    let kept: u64 =
        (0..200).map(|i| entry_cost(&format!("rpc:cache:Catalog.getAll:v1:j:{{\"page\":{i}}}"), "[2]")).sum::<u64>()
            + entry_cost("rpc:cache:Catalog.get:v2:j:{}", "3");
    assert_eq!(cache.remove_prefix("rpc:cache:Catalog.get:v1:").await.unwrap(), 200);
    assert_eq!((cache.len(), cache.bytes()), (201, kept), "the bytes of what went are given back");
    assert!(cache.get("rpc:cache:Catalog.getAll:v1:j:{\"page\":7}").await.unwrap().is_some());
    assert_eq!(cache.remove_prefix("rpc:cache:Catalog.get:v1:").await.unwrap(), 0, "nothing left to remove");
    assert_eq!(cache.remove_prefix("rpc:cache:Catalog.get:v").await.unwrap(), 1, "the other version");
    assert_eq!(cache.remove_prefix("rpc:cache:").await.unwrap(), 200);
    assert_eq!((cache.len(), cache.bytes()), (0, 0));
    // A prefix is text, not a pattern.
    cache.put("a*b", "1", ttl).await.unwrap();
    assert_eq!(cache.remove_prefix("a*").await.unwrap(), 1);
    cache.put("ab", "1", ttl).await.unwrap();
    assert_eq!(cache.remove_prefix("a*").await.unwrap(), 0);
}

#[tokio::test]
async fn a_large_prefix_removal_is_one_walk() {
    let cache = MemoryCache::new(64 * 1024 * 1024);
    let ttl = Duration::from_secs(60);
    for i in 0..100_000 {
        cache.put(&format!("rpc:cache:m:v1:j:{{\"i\":{i}}}"), "1", ttl).await.unwrap();
    }
    cache.put("rpc:cache:n:v1:j:{}", "1", ttl).await.unwrap();
    let started = std::time::Instant::now();
    assert_eq!(cache.remove_prefix("rpc:cache:m:v1:").await.unwrap(), 100_000);
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!((cache.len(), cache.bytes()), (1, entry_cost("rpc:cache:n:v1:j:{}", "1")));
}

#[test]
fn allocation_sizes() {
    assert_eq!(allocated(0), 0);
    assert_eq!(allocated(1), 32);
    assert_eq!(allocated(24), 32);
    assert_eq!(allocated(25), 48);
    assert_eq!(allocated(usize::MAX), !15);
}
