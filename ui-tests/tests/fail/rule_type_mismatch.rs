// A string rule on a number, `range` on a string, `length` on a bool:
// each error is on the rule and names the parameter and its type.
pub struct Svc;

#[rpc::service]
impl Svc {
    /// Get.
    pub fn get(
        &self,
        #[rpc(pattern = "^[0-9]+$")] id: u64,
        #[rpc(range(min = 1))] name: String,
        #[rpc(email)] count: Option<i32>,
        #[rpc(length(max = 3))] flag: bool,
        #[rpc(one_of("a", "b"))] level: u8,
    ) {
        let _ = (id, name, count, flag, level);
    }
}

fn main() {}
