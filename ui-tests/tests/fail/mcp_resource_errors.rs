// Resource mistakes, each on its token: no URI, a level-4 template, a
// variable that is not a parameter (with a suggestion), a required
// parameter the URI does not give, a MIME type that is not one, and two
// MCP kinds on one method.
use mcp::{mcp_resource, mcp_tool};

rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Docs;

#[rpc::service(groups(Mcp))]
impl Docs {
    /// No URI.
    #[mcp_resource(name = "readme")]
    pub fn readme(&self) -> String {
        String::new()
    }

    /// Explode is level 4.
    #[mcp_resource(uri = "docs://pages/{path*}")]
    pub fn page(&self, path: String) -> String {
        path
    }

    /// A typo in the variable.
    #[mcp_resource(uri = "docs://chapters/{chaptr}")]
    pub fn chapter(&self, chapter: u32) -> String {
        chapter.to_string()
    }

    /// `lang` is required but not in the URI.
    #[mcp_resource(uri = "docs://notes/{id}")]
    pub fn note(&self, id: u32, lang: String) -> String {
        format!("{id}{lang}")
    }

    /// Not a MIME type.
    #[mcp_resource(uri = "docs://logo", mime_type = "png")]
    pub fn logo(&self) -> String {
        String::new()
    }

    /// A tool and a resource at once.
    #[mcp_tool(read_only_hint = true)]
    #[mcp_resource(uri = "docs://index")]
    pub fn index(&self) -> String {
        String::new()
    }
}

fn main() {}
