// `pattern` is ECMA-262 (what JSON Schema clients compile, with the `u`
// flag): Rust- and PCRE-only syntax is refused on the literal, with the fix.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Get.
    pub fn get(
        &self,
        #[rpc(pattern = "(?i)^[a-z]+$")] a: String,
        #[rpc(pattern = r"\A[a-z]+\z")] b: String,
        #[rpc(pattern = "^(?P<word>[a-z]+)$")] c: String,
        #[rpc(pattern = r"^\d{3}-\q$")] d: String,
    ) -> String {
        format!("{a}{b}{c}{d}")
    }
}

fn main() {}
