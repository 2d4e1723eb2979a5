// Prompt and completion mistakes, each on its token: a prompt name that is
// not one, a completion without its target, with two targets, without the
// argument, for a variable the template does not have, and a completion
// method without its `value` parameter.
use mcp::{mcp_complete, mcp_prompt};

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Prompts;

#[rpc::service(groups(Mcp))]
impl Prompts {
    /// A name with a space.
    #[mcp_prompt(name = "code review")]
    pub fn review(&self, language: String) -> String {
        language
    }

    /// Completes nothing in particular.
    #[mcp_complete(argument = "language")]
    pub fn languages(&self, value: String) -> Vec<String> {
        vec![value]
    }

    /// Two targets.
    #[mcp_complete(prompt = "review", resource = "docs://{id}", argument = "language")]
    pub fn both(&self, value: String) -> Vec<String> {
        vec![value]
    }

    /// Which argument?
    #[mcp_complete(prompt = "review")]
    pub fn which(&self, value: String) -> Vec<String> {
        vec![value]
    }

    /// `ids` is not a variable of the template.
    #[mcp_complete(resource = "docs://notes/{id}", argument = "ids")]
    pub fn note_ids(&self, value: String) -> Vec<String> {
        vec![value]
    }

    /// No `value` parameter.
    #[mcp_complete(prompt = "review", argument = "language")]
    pub fn guess(&self, typed: String) -> Vec<String> {
        vec![typed]
    }
}

fn main() {}
