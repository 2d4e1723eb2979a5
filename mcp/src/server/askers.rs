//! The two ways a call asks its client (see [`ask`](crate::ask)):
//! [`StreamAsker`] sends a request on the call's response stream and waits
//! for the client's response (the handshake era, stdio); [`RoundAsker`]
//! answers from the request's `inputResponses` and `requestState`, and
//! records what is not answered yet for the `InputRequiredResult` (2026-07-28).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rpc::RpcError;
use rpc::ask::ClientAsker;
use serde_json::{Map, Value, json};

use super::pending::Pending;
use crate::notify::NotificationSink;

/// The most questions one call asks in a round.
pub const MAX_QUESTIONS: usize = 16;
/// The longest question key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

/// Asks on the call's response stream.
pub(crate) struct StreamAsker {
    pub sink: Arc<NotificationSink>,
    pub pending: Arc<Pending>,
    /// The session or connection whose client answers.
    pub conversation: String,
    /// How long an answer is awaited.
    pub timeout: Duration,
}

impl ClientAsker for StreamAsker {
    fn ask(&self, _key: &str, method: &str, params: Value) -> BoxFuture<'static, Result<Value, RpcError>> {
        let mut question = match self.pending.open(&self.conversation) {
            Ok(question) => question,
            Err(error) => return Box::pin(std::future::ready(Err(error))),
        };
        let request = json!({"jsonrpc": "2.0", "id": question.id, "method": method, "params": params});
        if !self.sink.request(serde_json::to_vec(&request).unwrap_or_default()) {
            let error = RpcError::new(
                rpc::error::code::INTERNAL_ERROR,
                "the client reads the response stream too slowly to be asked anything",
            );
            return Box::pin(std::future::ready(Err(error)));
        }
        let (timeout, method) = (self.timeout, method.to_owned());
        Box::pin(async move {
            match tokio::time::timeout(timeout, &mut question.answer).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(_)) => Err(RpcError::new(rpc::error::code::INTERNAL_ERROR, "the question was withdrawn")),
                Err(_) => Err(RpcError::new(
                    rpc::error::code::TIMEOUT,
                    format!("the client did not answer {method} within {} s", timeout.as_secs()),
                )),
            }
        })
    }
}

/// Answers from an input-required round's responses; records the rest.
pub(crate) struct RoundAsker {
    /// `inputResponses` over the answers carried by `requestState`.
    answers: Map<String, Value>,
    /// The questions not answered yet: key → `{"method", "params"}`.
    asked: Mutex<Map<String, Value>>,
}

/// The error an unanswered question gives the method (its call is then
/// answered with the `InputRequiredResult`, whatever the method does).
fn input_required(key: &str) -> RpcError {
    RpcError::new(rpc::ask::INPUT_REQUIRED, format!("input `{key}` is required from the client"))
}

impl RoundAsker {
    /// An asker that knows `answers`.
    pub fn new(answers: Map<String, Value>) -> Self {
        RoundAsker { answers, asked: Mutex::new(Map::new()) }
    }

    /// The answers it knows.
    pub fn answers(&self) -> &Map<String, Value> {
        &self.answers
    }

    /// Whether questions were asked that have no answer yet.
    pub fn has_unanswered(&self) -> bool {
        !self.asked.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    /// The questions asked and not answered (empty: the call is complete).
    pub fn take_asked(&self) -> Map<String, Value> {
        std::mem::take(&mut *self.asked.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl ClientAsker for RoundAsker {
    fn ask(&self, key: &str, method: &str, params: Value) -> BoxFuture<'static, Result<Value, RpcError>> {
        if let Some(answer) = self.answers.get(key) {
            return Box::pin(std::future::ready(Ok(answer.clone())));
        }
        let outcome = if key.is_empty() || key.len() > MAX_KEY_BYTES {
            Err(RpcError::invalid_params(format!("a question's key is 1 to {MAX_KEY_BYTES} bytes")))
        } else {
            let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
            if asked.len() >= MAX_QUESTIONS && !asked.contains_key(key) {
                Err(RpcError::invalid_params(format!("a call asks at most {MAX_QUESTIONS} questions at once")))
            } else {
                asked.insert(key.to_owned(), json!({"method": method, "params": params}));
                Err(input_required(key))
            }
        };
        Box::pin(std::future::ready(outcome))
    }
}

/// An input-required round of 2026-07-28: the asker of one request and
/// what its `requestState` is bound to.
pub(crate) struct Round {
    pub asker: Arc<RoundAsker>,
    binding: String,
}

impl Round {
    /// The round of a request of `method` on `name` with `arguments`: the
    /// answers are those `request_state` carries (checked) with
    /// `input_responses` over them. Extra responses are kept, not used.
    pub fn open(
        config: &crate::config::McpConfig,
        method: &str,
        name: &str,
        arguments: &Map<String, Value>,
        input_responses: Option<Value>,
        request_state: Option<&str>,
    ) -> Result<Round, RpcError> {
        let binding = super::request_state::binding(method, name, arguments);
        let mut answers = match request_state {
            Some(state) => {
                super::request_state::open(&config.request_state_key, &binding, state, super::request_state::now())?
            }
            None => Map::new(),
        };
        match input_responses {
            None | Some(Value::Null) => {}
            Some(Value::Object(responses)) => {
                for (key, value) in responses {
                    if key.len() > MAX_KEY_BYTES {
                        return Err(RpcError::invalid_params(format!(
                            "an inputResponses key is at most {MAX_KEY_BYTES} bytes"
                        )));
                    }
                    if !value.is_object() {
                        let shown: String = key.chars().take(64).collect();
                        return Err(RpcError::invalid_params(format!(
                            "inputResponses.{shown} must be an object: the client's result for that input request"
                        )));
                    }
                    answers.insert(key, value);
                }
            }
            Some(_) => return Err(RpcError::invalid_params("`inputResponses` must be an object")),
        }
        if answers.len() > 4 * MAX_QUESTIONS {
            return Err(RpcError::invalid_params(format!("at most {} input responses", 4 * MAX_QUESTIONS)));
        }
        Ok(Round { asker: Arc::new(RoundAsker::new(answers)), binding })
    }

    /// The `InputRequiredResult` (without its closing `}`) when the call
    /// asked questions it has no answer to.
    pub fn input_required(&self, config: &crate::config::McpConfig, server_info_meta: &Value) -> Option<Vec<u8>> {
        let asked = self.asker.take_asked();
        if asked.is_empty() {
            return None;
        }
        let state = super::request_state::seal(
            &config.request_state_key,
            &self.binding,
            self.asker.answers(),
            config.request_state_ttl,
            super::request_state::now(),
        );
        let body = json!({
            "resultType": "input_required",
            "inputRequests": asked,
            "requestState": state,
            "_meta": server_info_meta,
        });
        let mut out = serde_json::to_vec(&body).unwrap_or_default();
        out.pop();
        Some(out)
    }
}
