//! A real Redis for tests.
//!
//! `RPC_TEST_REDIS_URL` names one that is already running; otherwise a
//! `redis-server` from `PATH` is started on a free loopback port for the
//! test (no persistence) and stopped when the handle drops. Without either,
//! [`Redis::start`] returns `None` and the test says it was skipped — unless
//! `RPC_REQUIRE_REDIS=1` (CI sets it), which makes that a failure.
//!
//! Each handle has its own key prefix, so tests sharing one Redis do not
//! see each other's keys.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A Redis a test may use.
pub struct Redis {
    /// `redis://127.0.0.1:PORT/`
    pub url: String,
    /// A key prefix no other handle of this process uses (`t<pid>-<n>:`).
    pub prefix: String,
    server: Option<Child>,
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

fn unique_prefix() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    format!("t{}-{}:", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

impl Redis {
    /// Stops the server this handle started (SIGKILL); `false` when it
    /// did not start one (`RPC_TEST_REDIS_URL`).
    pub fn stop(&mut self) -> bool {
        let Some(mut server) = self.server.take() else { return false };
        let _ = server.kill();
        let _ = server.wait();
        true
    }

    /// Stops the server without ending it (SIGSTOP), as a stalled Redis:
    /// connections stay open, nothing is answered.
    ///
    /// # Panics
    ///
    /// When this handle did not start the server ([`Redis::start_private`]).
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server go on (SIGCONT).
    ///
    /// # Panics
    ///
    /// As [`Redis::pause`].
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let server = self.server.as_ref().expect("a redis-server this test started");
        let status = Command::new("kill").args([signal, &server.id().to_string()]).status().expect("kill runs");
        assert!(status.success(), "kill {signal} redis-server");
    }

    /// A Redis for this test, or `None` (skipped) when there is none.
    ///
    /// # Panics
    ///
    /// When there is none and `RPC_REQUIRE_REDIS=1`, or when `redis-server`
    /// starts but does not answer.
    pub fn start() -> Option<Redis> {
        if let Ok(url) = std::env::var("RPC_TEST_REDIS_URL") {
            return Some(Redis { url, prefix: unique_prefix(), server: None });
        }
        Redis::start_private()
    }

    /// A `redis-server` of this test's own, which it may stop, pause and
    /// resume (never the shared `RPC_TEST_REDIS_URL`); `None` (skipped)
    /// without `redis-server` on `PATH`.
    ///
    /// # Panics
    ///
    /// As [`Redis::start`].
    pub fn start_private() -> Option<Redis> {
        let port = TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let spawned = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let server = match spawned {
            Ok(server) => server,
            Err(e) => {
                assert!(
                    std::env::var("RPC_REQUIRE_REDIS").as_deref() != Ok("1"),
                    "RPC_REQUIRE_REDIS=1 but no redis-server could be started: {e}"
                );
                eprintln!("SKIPPED: no redis-server on PATH ({e}) and no RPC_TEST_REDIS_URL");
                return None;
            }
        };
        let redis = Redis { url: format!("redis://127.0.0.1:{port}/"), prefix: unique_prefix(), server: Some(server) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(redis)
    }
}
