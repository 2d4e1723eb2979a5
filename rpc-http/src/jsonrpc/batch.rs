//! Running a batch whose calls take values from each other's results
//! (`"@FROM:<id>(<field>)"`, see [`rpc_core::jsonrpc::chain`]).
//!
//! The calls without references start at once, together, as in any batch.
//! A call with references starts when the last call it names has finished,
//! with its params spliced from theirs; it is refused (`-32602`) if one of
//! them failed or lacks the field, and (`-32000`) if one has not finished
//! within its wait (its `$rpc.timeout`, by default the longest one). The
//! answers come back in the order of the batch, each with its id.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use http::HeaderMap;
use rpc_core::error::RpcError;
use rpc_core::executor::Transport;
use rpc_core::jsonrpc::chain::{Outcome, Plan, Resolver, Role};
use rpc_core::jsonrpc::envelope::{Invalid, Message, Request};
use rpc_core::jsonrpc::response::error_body;
use tokio::time::Instant;

use super::service::{Answer, JsonRpcService};
use crate::security::Identity;

/// A call of the batch, running or about to be answered: its index and answer.
type Running<'f> = Pin<Box<dyn Future<Output = (usize, Answer)> + Send + 'f>>;

impl JsonRpcService {
    /// The answers of a batch's messages, in order, each call started once
    /// the calls it names in `plan` have finished.
    pub(super) async fn chained<'a>(
        &self,
        plan: Plan<'a>,
        version: u32,
        items: Vec<Result<Message<'a>, Invalid<'a>>>,
        identity: &Option<Arc<Identity>>,
        peer: Option<IpAddr>,
        headers: &HeaderMap,
    ) -> Vec<Option<Answer>> {
        let started = Instant::now();
        let count = items.len();
        let mut answers: Vec<Option<Answer>> = (0..count).map(|_| None).collect();
        // The children not started yet, and how many of their parents run.
        let mut waiting: Vec<Option<Request<'a>>> = (0..count).map(|_| None).collect();
        let mut unfinished = vec![0usize; count];
        // Each waiting child's deadline, the earliest last.
        let mut deadlines: Vec<(Instant, usize)> = Vec::new();
        let mut running: FuturesUnordered<Running<'_>> = FuturesUnordered::new();
        for (index, message) in items.into_iter().enumerate() {
            match (plan.role(index), message) {
                (Role::Child { parents, wait }, Ok(Message::Request(request))) => {
                    unfinished[index] = parents;
                    waiting[index] = Some(request);
                    deadlines.push((started + wait, index));
                }
                (Role::Refused(error), Ok(Message::Request(request))) => {
                    running.push(Box::pin(self.refuse(index, request, error.clone(), version, identity)));
                }
                (_, message) => running
                    .push(Box::pin(async move { (index, self.one(version, message, identity, peer, headers).await) })),
            }
        }
        deadlines.sort_unstable_by(|a, b| b.cmp(a));
        let mut resolver = Resolver::new(&self.inner.limits);
        let sleep = tokio::time::sleep_until(started);
        tokio::pin!(sleep);
        loop {
            while deadlines.last().is_some_and(|&(_, child)| waiting[child].is_none()) {
                deadlines.pop();
            }
            let next = deadlines.last().copied();
            let (index, answer) = match next {
                None => match running.next().await {
                    Some(done) => done,
                    None => break,
                },
                Some((_, child)) if running.is_empty() => {
                    // Cannot happen (cycles are refused): answered, never left waiting.
                    let Some(request) = waiting[child].take() else { continue };
                    let error = RpcError::internal("a call of the batch waited for no running call");
                    running.push(Box::pin(self.refuse(child, request, error, version, identity)));
                    continue;
                }
                Some((when, child)) => {
                    if sleep.deadline() != when {
                        sleep.as_mut().reset(when);
                    }
                    tokio::select! {
                        biased;
                        done = running.next() => match done {
                            Some(done) => done,
                            None => continue,
                        },
                        () = &mut sleep => {
                            if let Some(request) = waiting[child].take() {
                                let error = plan.timed_out(child, |parent| answers.get(parent).is_some_and(Option::is_some));
                                running.push(Box::pin(self.refuse(child, request, error, version, identity)));
                            }
                            continue;
                        }
                    }
                }
            };
            answers[index] = Some(answer);
            for &child in plan.children(index) {
                unfinished[child] = unfinished[child].saturating_sub(1);
                if unfinished[child] > 0 {
                    continue;
                }
                let Some(request) = waiting[child].take() else { continue };
                let outcome = |parent: usize| match answers.get(parent) {
                    Some(Some((_, _, Some(_)))) => Outcome::Asynchronous,
                    Some(Some((_, Some(execution), None))) => match &execution.result {
                        Ok(result) => Outcome::Result(result),
                        Err(_) => Outcome::Failed,
                    },
                    Some(Some(_)) => Outcome::Failed,
                    _ => Outcome::Running,
                };
                match plan.substitute(child, outcome, &mut resolver) {
                    Ok(params) => running.push(Box::pin(async move {
                        let request =
                            Request { id: request.id, method: request.method, params: Some(&*params), early: None };
                        (child, self.one(version, Ok(Message::Request(request)), identity, peer, headers).await)
                    })),
                    Err(error) => running.push(Box::pin(self.refuse(child, request, error, version, identity))),
                }
            }
        }
        answers
    }

    /// Answers a call of the batch with `error` without running it (its
    /// references could not be satisfied), reporting the refusal as any.
    async fn refuse(
        &self,
        index: usize,
        request: Request<'_>,
        error: RpcError,
        version: u32,
        identity: &Option<Arc<Identity>>,
    ) -> (usize, Answer) {
        let executor = &self.inner.executor;
        executor.report_refusal(&request.method, version, Transport::JsonRpc, identity.as_deref(), &error).await;
        (index, (request.id.map(|id| error_body(Some(id), &error, executor.environment())), None, None))
    }
}
