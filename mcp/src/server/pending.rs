//! The server's own requests to clients that wait for an answer (the
//! handshake era and stdio): each is registered under its conversation (a
//! session, a stdio connection) and its id, and a client's response is
//! matched only within the same conversation, so one client cannot answer
//! another's questions. Bounded per conversation and in all; an entry
//! leaves when answered, when its call is dropped, or at its timeout.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rpc::RpcError;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

/// The most questions one conversation has open at once.
pub const MAX_PER_CONVERSATION: usize = 16;
/// The most questions open at once in all.
pub const MAX_OPEN: usize = 10_000;

type Answer = Result<Value, RpcError>;

/// The open questions.
#[derive(Default)]
pub(crate) struct Pending {
    open: Mutex<HashMap<(String, String), oneshot::Sender<Answer>>>,
    next: AtomicU64,
}

/// One open question: dropping it withdraws the question.
pub(crate) struct Question {
    pending: Arc<Pending>,
    key: (String, String),
    /// The id to send (a JSON string).
    pub id: String,
    /// Where the answer arrives.
    pub answer: oneshot::Receiver<Answer>,
}

impl Drop for Question {
    fn drop(&mut self) {
        self.pending.lock().remove(&self.key);
    }
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), oneshot::Sender<Answer>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a question in `conversation`, or says why not.
    pub fn open(self: &Arc<Self>, conversation: &str) -> Result<Question, RpcError> {
        let id = format!("srv-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let mut open = self.lock();
        if open.len() >= MAX_OPEN {
            return Err(RpcError::new(
                rpc::error::code::INTERNAL_ERROR,
                "the server has too many questions open to clients; retry later",
            ));
        }
        if open.keys().filter(|(c, _)| c == conversation).count() >= MAX_PER_CONVERSATION {
            return Err(RpcError::invalid_request(format!(
                "at most {MAX_PER_CONVERSATION} questions to one client are open at once"
            )));
        }
        let (tx, answer) = oneshot::channel();
        let key = (conversation.to_owned(), id.clone());
        open.insert(key.clone(), tx);
        Ok(Question { pending: Arc::clone(self), key, id, answer })
    }

    /// Delivers a client's response (`result` or `error`) to the question
    /// `id` of `conversation`; `false` when no such question is open.
    pub fn answer(
        &self,
        conversation: &str,
        id: &RawValue,
        result: Option<&RawValue>,
        error: Option<&RawValue>,
    ) -> bool {
        let Ok(id) = serde_json::from_str::<String>(id.get()) else { return false };
        let Some(tx) = self.lock().remove(&(conversation.to_owned(), id)) else { return false };
        let answer = match (result, error) {
            (Some(result), _) => {
                serde_json::from_str(result.get()).map_err(|e| RpcError::invalid_params(e.to_string()))
            }
            (None, Some(error)) => Err(client_error(error)),
            (None, None) => Err(RpcError::invalid_request("a response without `result` or `error`")),
        };
        tx.send(answer).is_ok()
    }
}

/// The client's error object as an error of the call (its code and message).
fn client_error(error: &RawValue) -> RpcError {
    #[derive(serde::Deserialize)]
    struct Object {
        code: Option<i64>,
        message: Option<String>,
    }
    match serde_json::from_str::<Object>(error.get()) {
        Ok(Object { code, message }) => {
            let code = code.and_then(|c| i32::try_from(c).ok()).unwrap_or(rpc::error::code::INTERNAL_ERROR);
            let message: String = message.unwrap_or_default().chars().take(512).collect();
            RpcError::new(code, format!("the client answered with an error: {message}"))
        }
        Err(_) => RpcError::new(rpc::error::code::INTERNAL_ERROR, "the client answered with a malformed error"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn answers_reach_their_own_conversation_only() {
        let pending = Arc::new(Pending::default());
        let mut question = pending.open("a").unwrap();
        let id = raw(&format!("\"{}\"", question.id));
        assert!(!pending.answer("b", &id, Some(&raw("{}")), None), "another conversation cannot answer");
        assert!(pending.answer("a", &id, Some(&raw(r#"{"x":1}"#)), None));
        assert_eq!((&mut question.answer).await.unwrap().unwrap(), serde_json::json!({"x": 1}));
        assert!(!pending.answer("a", &id, Some(&raw("{}")), None), "answered once");
    }

    #[tokio::test]
    async fn bounded_and_withdrawn_when_dropped() {
        let pending = Arc::new(Pending::default());
        let open: Vec<Question> = (0..MAX_PER_CONVERSATION).map(|_| pending.open("a").unwrap()).collect();
        assert!(pending.open("a").is_err());
        assert!(pending.open("b").is_ok(), "other conversations are not held up");
        drop(open);
        assert_eq!(pending.lock().len(), 0, "dropped questions leave");
        let mut q = pending.open("a").unwrap();
        let id = raw(&format!("\"{}\"", q.id));
        assert!(pending.answer("a", &id, None, Some(&raw(r#"{"code":-1,"message":"no"}"#))));
        let error = (&mut q.answer).await.unwrap().unwrap_err();
        assert_eq!(error.code(), -1);
    }
}
