//! Which HTTP a connection speaks, told once from its first bytes: a client
//! speaking HTTP/2 opens with the connection preface, and anything else is
//! served as HTTP/1.1. The runner then serves the connection with hyper's
//! HTTP/1 or HTTP/2 connection directly, so no per-poll dispatch on the
//! version sits between the task and the connection (`hyper_util`'s `auto`
//! connection asks at every poll, and its poll is a frame of 2 KB on every
//! request's stack).
//!
//! The bytes are looked at without being taken from the socket (`peek`):
//! the connection reads them as if nothing had looked. Only a client that
//! sends a beginning of the preface and waits is read from; what was read is
//! then given back to the connection first ([`TrackedIo::replay`]).

use std::io;

use tokio::io::AsyncReadExt;

use super::activity::TrackedIo;

/// The HTTP/2 connection preface (RFC 9113, section 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The HTTP a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpVersion {
    /// HTTP/1.0 or HTTP/1.1 (and whatever is neither: hyper's HTTP/1
    /// connection answers it with a `400`).
    Http1,
    /// HTTP/2 with prior knowledge.
    Http2,
}

/// What the first bytes tell.
enum Told {
    /// They are the version's.
    Version(HttpVersion),
    /// They begin the preface and more must be read to tell.
    NotYet,
}

/// Tells `first`, the bytes a connection has sent so far (none: the client
/// closed the connection).
fn tell(first: &[u8]) -> Told {
    let n = first.len().min(H2_PREFACE.len());
    if first[..n] != H2_PREFACE[..n] || first.is_empty() {
        Told::Version(HttpVersion::Http1)
    } else if n == H2_PREFACE.len() {
        Told::Version(HttpVersion::Http2)
    } else {
        Told::NotYet
    }
}

/// Waits for the connection's first bytes and tells its version. The
/// caller bounds the wait (the header-read timeout).
pub(crate) async fn read_version(io: &mut TrackedIo) -> io::Result<HttpVersion> {
    let mut first = [0u8; H2_PREFACE.len()];
    let peeked = io.peek(&mut first).await?;
    if let Told::Version(version) = tell(&first[..peeked]) {
        return Ok(version);
    }
    // A beginning of the preface and nothing more yet: peeking again would
    // see the same bytes at once. Read them, and give them back.
    let mut filled = 0;
    let version = loop {
        let n = io.read(&mut first[filled..]).await?;
        filled += n;
        match tell(&first[..filled]) {
            Told::Version(version) => break version,
            Told::NotYet if n == 0 => break HttpVersion::Http1,
            Told::NotYet => {}
        }
    };
    io.replay(&first[..filled]);
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn told(bytes: &[u8]) -> Option<HttpVersion> {
        match tell(bytes) {
            Told::Version(version) => Some(version),
            Told::NotYet => None,
        }
    }

    #[test]
    fn the_preface_tells_http2_and_anything_else_http1() {
        assert_eq!(told(H2_PREFACE), Some(HttpVersion::Http2));
        assert_eq!(told(&[H2_PREFACE, b"\0\0\x12\x04"].concat()), Some(HttpVersion::Http2));
        assert_eq!(told(b"POST /mcp HTTP/1.1\r\n"), Some(HttpVersion::Http1));
        assert_eq!(told(b"GET / HTTP/1.1\r\n\r\n"), Some(HttpVersion::Http1));
        assert_eq!(told(b"PRI * HTTP/1.1\r\n\r\nSM\r\n\r\n"), Some(HttpVersion::Http1));
        assert_eq!(told(b""), Some(HttpVersion::Http1), "closed at once");
        assert_eq!(told(b"P"), None);
        assert_eq!(told(&H2_PREFACE[..23]), None);
    }
}
