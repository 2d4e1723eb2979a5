// Exclusive bounds, `equals` and `items(..)`: their mistakes, each on its token.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Get.
    #[allow(clippy::too_many_arguments)]
    pub fn get(
        &self,
        #[rpc(range(min = 0, exclusive_min = 0))] a: f64,
        #[rpc(range(exclusive_min = 1, exclusive_max = 1))] b: f64,
        #[rpc(range(exclusive_mni = 1))] c: f64,
        #[rpc(equals = "yes", one_of("yes", "no"))] d: String,
        #[rpc(items())] h: Vec<String>,
        #[rpc(items(default = 1))] i: Vec<String>,
        #[rpc(length(exclusive_min = 1))] j: String,
    ) -> usize {
        let _ = (a, b, c, d, h, i, j);
        0
    }
}

fn main() {}
