// A method returning `Result<T, E>` lists `E`'s codes when `E` derives
// `rpc::ApplicationError`, and nothing when `E` implements it by hand or is
// `rpc::RpcError`; a struct derives one code.
use std::fmt;

use serde_json::json;

rpc::api_group!(pub struct Api => "api");

/// Errors of the shop.
#[derive(Debug, rpc::ApplicationError)]
pub enum ShopError {
    /// Product not found.
    #[rpc(code = 404)]
    NotFound {
        #[rpc(data)]
        id: u64,
        reason: String,
    },
    #[rpc(code = -31999, message = "Out of stock")]
    OutOfStock(#[rpc(data = "sku")] String, u32),
    /// Closed.
    #[rpc(code = 503)]
    Closed,
}

impl fmt::Display for ShopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShopError::NotFound { id, reason } => write!(f, "product {id}: {reason}"),
            ShopError::OutOfStock(sku, left) => write!(f, "{sku}: {left} left"),
            ShopError::Closed => f.write_str("closed"),
        }
    }
}

impl std::error::Error for ShopError {}

/// Payment refused.
#[derive(Debug, rpc::ApplicationError)]
#[rpc(code = 402)]
pub struct Refused {
    #[rpc(data)]
    amount: u32,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} refused", self.amount)
    }
}

impl std::error::Error for Refused {}

#[derive(Debug)]
pub struct ByHand;

impl fmt::Display for ByHand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("by hand")
    }
}

impl std::error::Error for ByHand {}

impl rpc::ApplicationError for ByHand {
    fn code(&self) -> i32 {
        7
    }
}

pub type Outcome<T> = Result<T, ShopError>;

pub struct Shop;

#[rpc::service(groups(Api))]
impl Shop {
    /// Derived.
    pub fn derived(&self, id: u64) -> Outcome<u64> {
        Err(ShopError::NotFound { id, reason: "gone".into() })
    }
    /// A struct.
    pub async fn pay(&self) -> Result<(), Refused> {
        Err(Refused { amount: 3 })
    }
    /// By hand.
    pub fn by_hand(&self) -> Result<u64, ByHand> {
        Err(ByHand)
    }
    /// Framework errors.
    pub fn plain(&self) -> rpc::Result<u64> {
        Ok(1)
    }
    /// Nothing.
    pub fn unit(&self) {}
}

pub fn main() {
    use rpc::{ApplicationError as _, ErrorCodes as _};
    let registry = rpc::Registry::builder().service(Shop).build().expect("registry");
    let codes = |name: &str| -> Vec<(i32, &'static str, &'static str)> {
        let method = registry.method(1, name, None).expect("method");
        (method.descriptor().errors)().iter().map(|e| (e.code, e.message, e.name)).collect()
    };
    assert_eq!(
        codes("Shop.derived"),
        [(404, "Product not found.", "NotFound"), (-31999, "Out of stock", "OutOfStock"), (503, "Closed.", "Closed")]
    );
    assert_eq!(codes("Shop.pay"), [(402, "Payment refused.", "Refused")]);
    assert!(codes("Shop.by_hand").is_empty());
    assert!(codes("Shop.plain").is_empty());
    assert!(codes("Shop.unit").is_empty());

    let not_found = ShopError::NotFound { id: 7, reason: "gone".into() };
    assert_eq!((not_found.code(), not_found.data()), (404, Some(json!({"id": 7}))));
    let out = ShopError::OutOfStock("a-1".into(), 3);
    assert_eq!((out.code(), out.data()), (-31999, Some(json!({"sku": "a-1"}))));
    assert_eq!((ShopError::Closed.code(), ShopError::Closed.data()), (503, None));
    assert_eq!(Refused { amount: 3 }.data(), Some(json!({"amount": 3})));
    assert!(ShopError::CODES[0].data.is_some() && ShopError::CODES[2].data.is_none());
    assert_eq!(ShopError::CODES[0].component_key(), "ShopError.NotFound");
}
