//! Lines in and out: reading newline-delimited messages of at most a
//! bounded size (longer ones are skipped as they arrive, never buffered),
//! and one writer that puts each message on a line of its own.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{mpsc, oneshot};

/// A line for the writer, and who waits until it is written out.
pub(super) struct Out {
    line: Vec<u8>,
    written: oneshot::Sender<()>,
}

/// The writer: each line then `\n`, flushed whenever the queue is empty.
/// The lines waiting are written into one buffer first: a process's stdout
/// in tokio is written by a blocking thread, one hand-over per write, so a
/// write per line would cost more than the call it answers.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(output: W, mut queue: mpsc::Receiver<Out>) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(64 * 1024, output);
    let mut waiting = Vec::new();
    while let Some(first) = queue.recv().await {
        let mut next = Some(first);
        while let Some(out) = next {
            output.write_all(&out.line).await?;
            output.write_all(b"\n").await?;
            waiting.push(out.written);
            next = queue.try_recv().ok();
        }
        output.flush().await?;
        for written in waiting.drain(..) {
            let _ = written.send(());
        }
    }
    output.flush().await?;
    output.shutdown().await
}

/// Queues `line` and waits until it is written; `false` when the writer is gone.
pub(super) async fn send(lines: &mpsc::Sender<Out>, mut line: Vec<u8>) -> bool {
    // A raw newline in valid JSON can only be whitespace between tokens
    // (inside strings it is escaped): a space means the same.
    for byte in &mut line {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    let (written, done) = oneshot::channel();
    lines.send(Out { line, written }).await.is_ok() && done.await.is_ok()
}

/// One line of input.
pub(super) enum Line {
    /// A message (without its line end).
    Message(Vec<u8>),
    /// A line longer than the limit (skipped).
    TooLong,
}

/// Reads lines of at most `limit` bytes; longer ones are skipped as they arrive.
pub(super) struct Lines<R> {
    reader: BufReader<R>,
    limit: usize,
    line: Vec<u8>,
    skipping: bool,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    pub(super) fn new(input: R, limit: usize) -> Self {
        Lines { reader: BufReader::with_capacity(64 * 1024, input), limit, line: Vec::new(), skipping: false }
    }

    /// The next line; `None` at the end of input. A last line without a
    /// line end counts.
    pub(super) async fn next(&mut self) -> io::Result<Option<Line>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                self.skipping = false;
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Message(std::mem::take(&mut self.line))));
            }
            let (chunk, end) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            let consumed = chunk + usize::from(end);
            if self.skipping {
                self.reader.consume(consumed);
                self.skipping = !end;
                continue;
            }
            let mut content = chunk;
            if end && chunk > 0 && available[chunk - 1] == b'\r' {
                content -= 1;
            }
            if self.line.len() + content > self.limit {
                self.reader.consume(consumed);
                self.line = Vec::new();
                self.skipping = !end;
                return Ok(Some(Line::TooLong));
            }
            self.line.extend_from_slice(&available[..chunk]);
            self.reader.consume(consumed);
            if end {
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return Ok(Some(Line::Message(std::mem::take(&mut self.line))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_bounded() {
        let input: &[u8] = b"{\"a\":1}\r\n\n0123456789abcdef\nshort\nlast";
        let mut lines = Lines::new(input, 10);
        let mut seen = Vec::new();
        while let Some(line) = lines.next().await.unwrap() {
            seen.push(match line {
                Line::Message(m) => String::from_utf8(m).unwrap(),
                Line::TooLong => "<too long>".to_owned(),
            });
        }
        assert_eq!(seen, ["{\"a\":1}", "", "<too long>", "short", "last"]);
    }

    /// A writer that counts the writes it is handed.
    #[derive(Default)]
    struct Counting {
        bytes: Vec<u8>,
        writes: usize,
    }

    impl AsyncWrite for Counting {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<io::Result<usize>> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            std::task::Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn waiting_lines_go_out_in_one_write() {
        // A process's stdout costs a hand-over to a blocking thread per write.
        let (queue, received) = mpsc::channel(256);
        let mut done = Vec::new();
        for i in 0..200 {
            let (written, wait) = oneshot::channel();
            let line = format!("{{\"id\":{i}}}").into_bytes();
            assert!(queue.try_send(Out { line, written }).is_ok());
            done.push(wait);
        }
        drop(queue);
        let mut output = Counting::default();
        write_lines(&mut output, received).await.unwrap();
        let expected: String = (0..200).map(|i| format!("{{\"id\":{i}}}\n")).collect();
        assert_eq!(String::from_utf8(output.bytes).unwrap(), expected);
        assert_eq!(output.writes, 1, "200 lines waiting, one write");
        for wait in done {
            assert!(wait.await.is_ok(), "every sender hears its line went out");
        }
    }

    #[tokio::test]
    async fn ten_megabytes_without_a_line_end_are_skipped_not_held() {
        let input = vec![b'x'; 10 << 20];
        let mut lines = Lines::new(input.as_slice(), 4096);
        assert!(matches!(lines.next().await.unwrap(), Some(Line::TooLong)));
        assert!(lines.line.capacity() <= 4096, "the partial line is released");
        assert!(lines.next().await.unwrap().is_none(), "the rest is skipped up to the end of input");
    }
}
