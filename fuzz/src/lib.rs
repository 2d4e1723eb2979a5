//! The harnesses of the fuzz targets, as a library: the targets in
//! `fuzz_targets/` call them under libFuzzer (`scripts/fuzz.sh`, or
//! `cargo +nightly fuzz run NAME`), and the tests below replay every
//! committed input through them without libFuzzer (`cargo test -p rpc-fuzz`,
//! part of `cargo test --workspace`):
//! the seed corpus (`corpus/<target>/`) and the crashes found so far
//! (`regressions/<target>/`).
//!
//! | target | harness | input |
//! |---|---|---|
//! | `jsonrpc_message` | [`jsonrpc_message::run`] | a request body |
//! | `mcp_request` | [`app::run_mcp`] | a [`script::Script`] of requests, mostly to `/mcp` |
//! | `rpc_request` | [`app::run_rpc`] | a [`script::Script`] of requests, mostly to `/rpc` |
//! | `stdio_lines` | [`stdio_lines::run`] | what a client writes to the stdio transport |

pub mod app;
pub mod generate;
pub mod jsonrpc_message;
pub mod script;
pub mod seeds;
pub mod stdio_lines;

/// The response checker, shared with the property tests of `tests/`.
#[path = "../../tests/src/wellformed.rs"]
pub mod wellformed;

/// A harness: runs one input, panics on a finding.
pub type Harness = fn(&[u8]);

/// The harness of each target, by name.
pub const TARGETS: &[(&str, Harness)] = &[
    ("jsonrpc_message", jsonrpc_message::run),
    ("mcp_request", app::run_mcp),
    ("rpc_request", app::run_rpc),
    ("stdio_lines", stdio_lines::run),
];

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn dir(kind: &str, target: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(kind).join(target)
    }

    /// The files of a directory, sorted (none if it does not exist).
    fn files(dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut files: Vec<PathBuf> =
            entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
        files.sort();
        files
    }

    /// Runs every file of `kind/<target>/` through the target's harness; a
    /// panic names the file.
    fn replay(kind: &str) -> usize {
        let mut count = 0;
        for (target, harness) in TARGETS {
            for file in files(&dir(kind, target)) {
                let data = std::fs::read(&file).expect("a readable input");
                let outcome = std::panic::catch_unwind(|| harness(&data));
                assert!(outcome.is_ok(), "{target}: {} fails (see the panic above)", file.display());
                count += 1;
            }
        }
        count
    }

    #[test]
    fn replays_the_corpus() {
        assert!(replay("corpus") >= 60, "the seed corpus is committed");
    }

    #[test]
    fn replays_the_regressions() {
        replay("regressions");
    }

    /// The committed seeds are the ones `seeds` writes; `FUZZ_WRITE_SEEDS=1`
    /// (re)writes them.
    #[test]
    fn seeds_are_committed() {
        let write = std::env::var_os("FUZZ_WRITE_SEEDS").is_some();
        for (target, seeds) in seeds::all() {
            let dir = dir("corpus", target);
            for seed in seeds {
                let path = dir.join(seed.name);
                if write {
                    std::fs::create_dir_all(&dir).expect("the corpus directory");
                    std::fs::write(&path, &seed.bytes).expect("a written seed");
                }
                let committed = std::fs::read(&path).unwrap_or_default();
                assert!(
                    committed == seed.bytes,
                    "{} differs from its seed (FUZZ_WRITE_SEEDS=1 rewrites it)",
                    path.display()
                );
            }
        }
    }

    /// Shows what an input of an HTTP target does:
    /// `FUZZ_INPUT=path/to/crash cargo test -p rpc-fuzz show_input -- --ignored --nocapture`
    /// (`FUZZ_FOCUS=rpc` for `rpc_request`; `FUZZ_SHOW=1` to see every exchange as it runs).
    #[test]
    #[ignore = "a tool: needs FUZZ_INPUT"]
    fn show_input() {
        let path = std::env::var("FUZZ_INPUT").expect("FUZZ_INPUT names an input file");
        let data = std::fs::read(path).expect("a readable input");
        let focus =
            if std::env::var("FUZZ_FOCUS").as_deref() == Ok("rpc") { script::Focus::Rpc } else { script::Focus::Mcp };
        let script = script::Script::decode(&data, focus);
        eprintln!("handshake: {:?}", script.handshake);
        for exchange in &script.exchanges {
            let body = String::from_utf8_lossy(&exchange.body);
            let shown: String = body.chars().take(2000).collect();
            eprintln!(
                "{} {} flags {:#04x} {:?} {:?}\nbody ({} bytes): {shown}\n",
                exchange.verb,
                exchange.path,
                exchange.flags,
                exchange.delivery,
                exchange.headers,
                exchange.body.len()
            );
        }
        app::run(&data, focus);
    }

    /// Each seed of the HTTP targets is answered as its name says: the
    /// checker is not what passes them, the server is.
    #[test]
    fn seeds_reach_their_code() {
        let mut wrong = Vec::new();
        for (target, seeds) in seeds::all() {
            for seed in seeds.iter().filter(|s| s.expect.is_some()) {
                let statuses = seeds::statuses(target, &seed.bytes);
                if Some(statuses.as_slice()) != seed.expect {
                    wrong.push(format!("{target}/{}: {statuses:?}, expected {:?}", seed.name, seed.expect));
                }
            }
        }
        assert!(wrong.is_empty(), "seeds answered otherwise:\n{}", wrong.join("\n"));
    }
}
