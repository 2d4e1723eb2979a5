//! Lines in and out: reading newline-delimited messages of at most a
//! bounded size (longer ones are skipped as they arrive, never buffered),
//! and one writer that puts each message on a line of its own.

use std::io;

use rpc::Execution;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

/// A line for the writer, and the executions whose after-response work
/// waits until it is written out.
pub(super) struct Out {
    line: Vec<u8>,
    executions: Vec<Execution>,
}

/// Bytes the writer buffers, and writes at most between two flushes.
const ROUND: usize = 64 * 1024;

/// The writer: each line then `\n`, flushed whenever the queue is empty or
/// [`ROUND`] bytes were written since the last flush; then `sent` is handed
/// the executions of the lines flushed (the server's after-response work,
/// [`McpServer::sent`](crate::server::McpServer::sent)). The lines waiting
/// are written into one buffer first: a process's stdout in tokio is
/// written by a blocking thread, one hand-over per write, so a write per
/// line would cost more than the call it answers. The bound on a round
/// keeps what waits for its after-response work bounded too, when the
/// queue never empties (a client that reads slower than it writes).
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    output: W,
    mut queue: mpsc::Receiver<Out>,
    mut sent: impl FnMut(Vec<Execution>),
) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(ROUND, output);
    let mut flushed = Vec::new();
    while let Some(first) = queue.recv().await {
        let mut next = Some(first);
        let mut round = 0;
        while let Some(out) = next {
            output.write_all(&out.line).await?;
            output.write_all(b"\n").await?;
            round += out.line.len() + 1;
            if !out.executions.is_empty() {
                flushed.push(out.executions);
            }
            next = if round < ROUND { queue.try_recv().ok() } else { None };
        }
        output.flush().await?;
        for executions in flushed.drain(..) {
            sent(executions);
        }
    }
    output.flush().await?;
    output.shutdown().await
}

impl Out {
    /// `line` (one JSON message), with the executions to report sent once
    /// it is written.
    pub(super) fn new(mut line: Vec<u8>, executions: Vec<Execution>) -> Self {
        // A raw newline in valid JSON can only be whitespace between tokens
        // (inside strings it is escaped): a space means the same.
        for byte in &mut line {
            if *byte == b'\n' || *byte == b'\r' {
                *byte = b' ';
            }
        }
        Out { line, executions }
    }

    /// The line (without its line end).
    #[cfg(test)]
    pub(super) fn line(&self) -> &[u8] {
        &self.line
    }
}

/// Queues `out` for the writer, waiting while its queue is full; `false`
/// when the writer is gone.
pub(super) async fn send(lines: &mpsc::Sender<Out>, out: Out) -> bool {
    lines.send(out).await.is_ok()
}

/// Lines gathered by the reading loop, handed to the writer as one: one
/// queue entry (and at most one wake-up of the writer) for all the
/// messages answered from one read of input.
#[derive(Default)]
pub(super) struct Batch {
    out: Option<Out>,
}

impl Batch {
    /// Bytes gathered before the batch is handed on whatever else is read.
    const FULL: usize = 64 * 1024;

    /// Adds a line.
    pub(super) fn push(&mut self, out: Out) {
        match &mut self.out {
            None => self.out = Some(out),
            Some(batch) => {
                batch.line.push(b'\n');
                batch.line.extend_from_slice(&out.line);
                batch.executions.extend(out.executions);
            }
        }
    }

    /// Whether it holds enough to be handed on now.
    pub(super) fn is_full(&self) -> bool {
        self.out.as_ref().is_some_and(|out| out.line.len() >= Self::FULL)
    }

    /// Hands the lines gathered to the writer; `false` when it is gone.
    pub(super) async fn flush(&mut self, lines: &mpsc::Sender<Out>) -> bool {
        match self.out.take() {
            Some(out) => send(lines, out).await,
            None => true,
        }
    }
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

    /// Whether a whole line was read already ([`next`](Self::next) then
    /// needs no more input).
    pub(super) fn has_line(&self) -> bool {
        memchr::memchr(b'\n', self.reader.buffer()).is_some()
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
        flushes: usize,
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
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            self.flushes += 1;
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
        for i in 0..200 {
            let line = format!("{{\"id\":{i}}}").into_bytes();
            assert!(queue.try_send(Out { line, executions: Vec::new() }).is_ok());
        }
        drop(queue);
        let mut output = Counting::default();
        let mut reported = 0;
        write_lines(&mut output, received, |_| reported += 1).await.unwrap();
        let expected: String = (0..200).map(|i| format!("{{\"id\":{i}}}\n")).collect();
        assert_eq!(String::from_utf8(output.bytes).unwrap(), expected);
        assert_eq!(output.writes, 1, "200 lines waiting, one write");
        assert_eq!(reported, 0, "lines without executions report nothing");
    }

    #[tokio::test]
    async fn a_queue_that_never_empties_is_still_flushed_every_64_kilobytes() {
        // 200 lines of 1 KB waiting: without a bound on a round, one flush
        // (and the after-response work behind it) would wait for them all.
        let (queue, received) = mpsc::channel(256);
        for _ in 0..200 {
            assert!(queue.try_send(Out { line: vec![b'x'; 1023], executions: Vec::new() }).is_ok());
        }
        drop(queue);
        let mut output = Counting::default();
        write_lines(&mut output, received, |_| {}).await.unwrap();
        assert_eq!(output.bytes.len(), 200 * 1024);
        // Four rounds of at most 64 KB, and the flush at the end.
        assert_eq!(output.flushes, 5, "a flush per 64 KB written");
    }

    #[tokio::test]
    async fn a_batch_is_one_entry_of_its_lines() {
        let (queue, mut received) = mpsc::channel(4);
        let mut batch = Batch::default();
        assert!(batch.flush(&queue).await, "an empty batch sends nothing");
        assert!(received.try_recv().is_err());
        batch.push(Out::new(b"{\"a\":\n1}".to_vec(), Vec::new()));
        batch.push(Out::new(b"{\"b\":2}".to_vec(), Vec::new()));
        assert!(!batch.is_full());
        assert!(batch.flush(&queue).await);
        let out = received.try_recv().expect("one entry");
        assert_eq!(out.line, b"{\"a\": 1}\n{\"b\":2}", "lines joined, raw newlines inside a message made spaces");
        assert!(received.try_recv().is_err(), "only one");
        batch.push(Out::new(vec![b' '; Batch::FULL], Vec::new()));
        assert!(batch.is_full());
        drop(received);
        assert!(!batch.flush(&queue).await, "the writer is gone");
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
