// A name too long because of its alias points at the alias.
rpc::api_group!(pub struct Mcp => "mcp", mcp = true);

pub struct Svc;

#[rpc::service(
    alias = "TheCatalogOfEverySingleProductThisCompanyHasEverSoldInAnyOfItsStoresAnywhereInTheWorldSinceItWasFoundedInEighteenNinetyNineByTwo",
    groups(Mcp)
)]
impl Svc {
    /// Ping.
    pub fn ping(&self) {}
}

fn main() {}
