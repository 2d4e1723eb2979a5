// An async method whose future is not `Send`: the error points at the method.
use std::rc::Rc;

pub struct Svc;

#[rpc::service]
impl Svc {
    /// Holds an `Rc` across an await.
    pub async fn hold(&self) -> u32 {
        let counter = Rc::new(1);
        std::future::ready(()).await;
        *counter
    }

    /// Fine.
    pub async fn fine(&self) -> u32 {
        2
    }
}

fn main() {}
