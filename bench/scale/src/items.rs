// What the fixture's methods work with, written once for `bench/scale` and
// its rmcp peer (`bench/peers/rmcp_scale`, which includes this file), so
// that both compile the same methods: the item, the error and the bodies.

/// An item.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Item {
    /// The item's id.
    pub id: u64,
    /// Its kind (the method's number).
    pub kind: u32,
    /// Its name.
    pub name: String,
    /// Its details, when asked for.
    pub detail: Option<String>,
}

/// The fixture's errors.
#[derive(Debug, Clone, PartialEq)]
pub enum ScaleError {
    /// No item has this id.
    NotFound(u64),
    /// A name may not be empty.
    EmptyName,
}

impl std::fmt::Display for ScaleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScaleError::NotFound(id) => write!(f, "item {id} not found"),
            ScaleError::EmptyName => f.write_str("a name may not be empty"),
        }
    }
}

impl std::error::Error for ScaleError {}

fn item(id: u64, kind: usize, detail: bool) -> Result<Item, ScaleError> {
    if id == 0 || id > 1000 {
        return Err(ScaleError::NotFound(id));
    }
    let kind = kind as u32;
    Ok(Item { id, kind, name: format!("item {id}"), detail: detail.then(|| format!("item {id} of kind {kind}")) })
}

fn search(query: &str, limit: u32, kind: usize) -> Vec<Item> {
    (1..=u64::from(limit.min(20)))
        .filter_map(|id| item(id, kind, false).ok())
        .filter(|i| i.name.contains(query))
        .collect()
}

fn rename(id: u64, name: String, kind: usize) -> Result<Item, ScaleError> {
    if name.is_empty() {
        return Err(ScaleError::EmptyName);
    }
    item(id, kind, false).map(|item| Item { name, ..item })
}
