//! Bare line-echo loop, the stdio baseline of `bench/scale.py`.
//!
//! What a minimal hand-written stdio server must do for the benchmarked
//! call: read newline-delimited JSON from stdin, parse each line with
//! serde_json into the shape of a `tools/call` of `Catalog.get`, and write the
//! bytes the catalog answers as a line on stdout, flushing when no more input
//! is waiting. Lines of another shape are answered with an empty object, so a
//! client's handshake goes through.

use std::io::{BufRead, BufReader, BufWriter, Write};

// The 2026-07-28 `_meta` the HTTP floor reads is not read over stdio.
#[allow(dead_code)]
#[path = "../wire.rs"]
mod wire;

use wire::Call;

fn main() -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        match serde_json::from_str::<Call<'_>>(line.trim_end()) {
            Ok(call) if call.method == "tools/call" && call.params.name == "Catalog.get" => {
                let id = call.params.arguments.id;
                writeln!(
                    output,
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"{{\"id\":{id},\"name\":\"n{id}\"}}"}}],"structuredContent":{{"result":{{"id":{id},"name":"n{id}"}}}},"isError":false}}}}"#,
                    call.id.get()
                )?;
            }
            _ => output.write_all(b"{}\n")?,
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}
