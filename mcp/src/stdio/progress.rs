//! A call's stream on stdio: progress notifications held back until the
//! call has gone on for a while, so that none arrives with the response.
//!
//! A client that reads a progress notification and the response to its
//! request in one read can lose the race between them: the TypeScript SDK
//! handles a notification on a later turn of its event loop and the
//! response at once, so the progress finds its request finished and is
//! reported as carrying "an unknown token" (`onerror`); Claude Code then
//! closes the stdio connection and starts the server again. Over stdio a
//! notification and the response written close together are read together
//! whenever the client was busy in between, and a call that reports
//! progress and then ends at once always writes them together.
//!
//! So progress is written only while the call still runs: a progress
//! notification waits [`HOLD`] (`Stdio::progress_hold`); one that comes
//! meanwhile takes its place (the latest value is the one that counts), and
//! when the call ends first it is dropped, its response saying more. A call
//! reports its progress at most once per [`HOLD`] this way, and a slow
//! call's progress arrives [`HOLD`] late at most. The message that follows a
//! progress notification written (the response, most often) waits until
//! [`HOLD`] has passed since it, so that the two are read apart unless the
//! client was busy for that long. Log messages, requests to the client and the
//! response go out as they come. Streamable HTTP sends every notification
//! as it comes: a client reads each event of a stream on a turn of its own.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::lines::{Out, send};
use crate::notify::is_progress;
use crate::server::{Frame, MessageStream};

/// How long a progress notification waits before it is written (and, while
/// it waits, the call's later progress replaces it), by default.
pub(super) const HOLD: Duration = Duration::from_millis(50);

/// Writes `stream`'s messages as lines, progress held back for `hold` as
/// the module says, until the stream ends or the writer is gone (a call's
/// stream, and a session's own, which carries no progress).
pub(super) async fn forward(mut stream: MessageStream, lines: &mpsc::Sender<Out>, hold: Duration) {
    // The latest progress not written yet, and when it goes out.
    let mut held: Option<(bytes::Bytes, Instant)> = None;
    // When a progress notification was last written, until the next message
    // follows it.
    let mut written: Option<Instant> = None;
    loop {
        let frame = match &held {
            None => stream.next().await,
            Some((_, due)) => match tokio::time::timeout_at(*due, stream.next()).await {
                Ok(frame) => frame,
                Err(_) => {
                    // The call goes on: its progress is news.
                    let Some((progress, _)) = held.take() else { continue };
                    if !send(lines, Out::new(progress.to_vec(), Vec::new())).await {
                        return;
                    }
                    written = Some(Instant::now());
                    continue;
                }
            },
        };
        match frame {
            // The response came (or the call was dropped): what was held
            // is old news.
            None => return,
            Some(Frame::KeepAlive) => {}
            Some(Frame::Message(json)) if is_progress(&json) => {
                let due = held.map_or_else(|| Instant::now() + hold, |(_, due)| due);
                held = Some((json, due));
            }
            Some(Frame::Message(json)) => {
                // What follows a progress notification written comes `hold`
                // after it at the earliest: a client reads them apart.
                if let Some(at) = written.take() {
                    tokio::time::sleep_until(at + hold).await;
                }
                if !send(lines, Out::new(json.to_vec(), Vec::new())).await {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use futures_util::stream;
    use std::future::Future;
    use std::pin::Pin;

    fn progress(value: u32) -> Bytes {
        Bytes::from(format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":1,"progress":{value}}}}}"#
        ))
    }

    const LOG: &str = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    const RESPONSE: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

    /// A frame after a pause (none: at once).
    type Step = (u64, Frame);

    /// A stream of `steps`, each after its pause in milliseconds.
    fn timed(steps: Vec<Step>) -> MessageStream {
        Box::pin(stream::iter(steps).then(|(pause, frame)| async move {
            if pause > 0 {
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
            frame
        }))
    }

    /// The lines `forward` writes for `steps`, each with the milliseconds
    /// (of the paused clock) it was written at.
    async fn written(steps: Vec<Step>) -> Vec<(u64, String)> {
        written_with(steps, HOLD).await
    }

    /// [`written`] with progress held for `hold`.
    async fn written_with(steps: Vec<Step>, hold: Duration) -> Vec<(u64, String)> {
        let start = Instant::now();
        let (lines, mut queue) = mpsc::channel::<Out>(64);
        let writer = async move {
            let mut out = Vec::new();
            while let Some(line) = queue.recv().await {
                let at = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                out.push((at, String::from_utf8(line.line().to_vec()).unwrap()));
            }
            out
        };
        let forwarding: Pin<Box<dyn Future<Output = ()>>> =
            Box::pin(async move { forward(timed(steps), &lines, hold).await });
        let ((), out) = tokio::join!(forwarding, writer);
        out
    }

    fn message(json: &str) -> Frame {
        Frame::Message(Bytes::from(json.to_owned()))
    }

    fn text(frame: &Bytes) -> String {
        String::from_utf8(frame.to_vec()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn progress_then_the_response_at_once_is_only_the_response() {
        // The race a client loses: a call that reports progress and ends.
        let out =
            written(vec![(0, Frame::Message(progress(1))), (0, Frame::Message(progress(2))), (0, message(RESPONSE))])
                .await;
        assert_eq!(out, [(0, RESPONSE.to_owned())]);
        // Ending within the hold is ending at once.
        let out = written(vec![(0, Frame::Message(progress(1))), (49, message(RESPONSE))]).await;
        assert_eq!(out, [(49, RESPONSE.to_owned())]);
    }

    #[tokio::test(start_paused = true)]
    async fn progress_of_a_call_still_running_goes_out_after_the_hold() {
        let out = written(vec![
            (0, Frame::Message(progress(1))),
            (120, Frame::Message(progress(2))),
            (120, message(RESPONSE)),
        ])
        .await;
        assert_eq!(out, [(50, text(&progress(1))), (170, text(&progress(2))), (240, RESPONSE.to_owned())]);
    }

    #[tokio::test(start_paused = true)]
    async fn progress_coming_while_one_waits_replaces_it() {
        // Ten values in 45 ms: the latest goes out, once, when the first
        // one's hold ends; then the next hold starts with the next value.
        let mut steps: Vec<Step> = (1..=10).map(|i| (5, Frame::Message(progress(i)))).collect();
        steps.push((60, Frame::Message(progress(11))));
        steps.push((100, message(RESPONSE)));
        let out = written(steps).await;
        assert_eq!(out, [(55, text(&progress(10))), (160, text(&progress(11))), (210, RESPONSE.to_owned())]);
    }

    #[tokio::test(start_paused = true)]
    async fn other_messages_go_out_as_they_come_and_keep_alives_not_at_all() {
        let out = written(vec![
            (0, Frame::Message(progress(1))),
            (10, message(LOG)),
            (10, Frame::KeepAlive),
            (10, message(RESPONSE)),
        ])
        .await;
        assert_eq!(out, [(10, LOG.to_owned()), (30, RESPONSE.to_owned())], "the progress was overtaken");
    }

    #[tokio::test(start_paused = true)]
    async fn the_response_follows_a_progress_written_a_hold_after_it() {
        // Progress written at 50 ms, the response ready at 60: it waits
        // until 100. The log after it does not wait again.
        let out = written(vec![(0, Frame::Message(progress(1))), (60, message(RESPONSE)), (0, message(LOG))]).await;
        assert_eq!(out, [(50, text(&progress(1))), (100, RESPONSE.to_owned()), (100, LOG.to_owned())]);
    }

    #[tokio::test(start_paused = true)]
    async fn with_no_hold_progress_goes_out_unless_the_response_is_ready_already() {
        let out = written_with(
            vec![(0, Frame::Message(progress(1))), (10, Frame::Message(progress(2))), (0, message(RESPONSE))],
            Duration::ZERO,
        )
        .await;
        assert_eq!(out, [(0, text(&progress(1))), (10, RESPONSE.to_owned())]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_writer_gone_ends_the_forwarding() {
        let (lines, queue) = mpsc::channel(1);
        drop(queue);
        let steps = vec![(0, Frame::Message(progress(1))), (100, message(RESPONSE)), (0, message(LOG))];
        let started = Instant::now();
        forward(timed(steps), &lines, HOLD).await;
        assert_eq!(started.elapsed(), HOLD, "it stops at the first line it cannot hand on");
    }
}
