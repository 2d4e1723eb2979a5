// Parameters are deserialised, so they must be owned: a reference at the
// top or inside gets one error naming the owned type; the context is taken
// by value.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Echo.
    pub fn echo(&self, text: &str) -> String {
        text.to_owned()
    }

    /// An optional borrowed text.
    pub fn maybe(&self, text: Option<&str>) -> usize {
        text.map_or(0, str::len)
    }

    /// Borrowed items.
    pub fn sum(&self, values: Vec<&[u8]>) -> usize {
        values.len()
    }

    /// The context by reference.
    pub fn with_context(&self, ctx: &rpc::Context) {
        let _ = ctx;
    }
}

fn main() {}
