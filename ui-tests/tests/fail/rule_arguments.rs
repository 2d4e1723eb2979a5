// Rule arguments checked when the macro expands.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Get.
    pub fn get(
        &self,
        #[rpc(pattern = "^[a-z+$")] a: String,
        #[rpc(length(min = 10, max = 3))] b: String,
        #[rpc(lenght(min = 1))] c: String,
        #[rpc(one_of("a", 1, "b"))] d: String,
        #[rpc(range(min = 5.0, max = -5))] e: f64,
        #[rpc(length)] f: String,
        #[rpc(length(min = 1.5))] g: String,
        #[rpc(email, uuid)] h: String,
        #[rpc(range(minimum = 1))] i: u32,
    ) {
        let _ = (a, b, c, d, e, f, g, h, i);
    }
}

fn main() {}
