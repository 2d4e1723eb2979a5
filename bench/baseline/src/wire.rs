//! The shape of the benchmarked `tools/call` of `Catalog.get`, read with
//! borrowed strings and raw values (shared by the HTTP and stdio floors).

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
pub struct Arguments {
    pub id: u64,
}

#[derive(Deserialize)]
pub struct Params<'a> {
    #[serde(borrow)]
    pub name: &'a str,
    pub arguments: Arguments,
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub struct Call<'a> {
    #[serde(borrow)]
    pub id: &'a RawValue,
    #[serde(borrow)]
    pub method: &'a str,
    #[serde(borrow)]
    pub params: Params<'a>,
}
