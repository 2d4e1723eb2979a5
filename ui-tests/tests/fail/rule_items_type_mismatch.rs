// `equals` and `items(..)` on types they do not fit: one error each, on the rule.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Get.
    pub fn get(
        &self,
        #[rpc(equals = 3)] e: String,
        #[rpc(items(length(max = 3)))] f: String,
        #[rpc(items(pattern = "^[a-z]+$"))] g: Vec<u64>,
        #[rpc(items(range(min = 1)))] h: Option<Vec<u32>>,
    ) -> usize {
        let _ = (e, f, g, h);
        0
    }
}

fn main() {}
