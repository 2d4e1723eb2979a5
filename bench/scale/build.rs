//! Writes the fixture's services: `SCALE_METHODS` methods (default 20) in
//! services of 50, published over MCP in the group `Big`, and 10 more in
//! the group `Small`; with `SCALE_ANNOTATED=0`, the same impl blocks and
//! methods without the framework's annotations (the compile-time baseline);
//! with `SCALE_ASYNC=1`, every method `async`.

use std::fmt::Write as _;

include!("settings.rs");

fn main() {
    let (methods, annotated) = settings();
    let mut code = String::new();
    let mut register = String::from("app\n");
    write_group(&mut code, &mut register, "Big", "B", methods, annotated);
    write_group(&mut code, &mut register, "Small", "S", 10, annotated);
    let _ = writeln!(code, "/// How many methods the group `Big` has.\npub const BIG_METHODS: usize = {methods};");
    let _ = writeln!(
        code,
        "/// Whether the methods carry the framework's annotations.\npub const ANNOTATED: bool = {annotated};"
    );
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("services.rs");
    std::fs::write(&out, code).expect("write services.rs");
    std::fs::write(out.with_file_name("register.rs"), register).expect("write register.rs");
}

/// `count` methods of `group`, 50 to a service named `{prefix}{k}`.
fn write_group(code: &mut String, register: &mut String, group: &str, prefix: &str, count: usize, annotated: bool) {
    for (service, first) in (0..count).step_by(50).enumerate() {
        let name = format!("{prefix}{service}");
        let _ = writeln!(register, "    .service({name})");
        let _ = writeln!(code, "/// Service {name}.\n#[derive(Debug, Default)]\npub struct {name};");
        if annotated {
            let _ = writeln!(code, "#[rpc::service(groups({group}))]");
        }
        let _ = writeln!(code, "impl {name} {{");
        for i in first..count.min(first + 50) {
            write_method(code, i, annotated);
        }
        let _ = writeln!(code, "}}");
    }
}

/// One method, in one of three shapes (a lookup, a search, a write).
fn write_method(code: &mut String, i: usize, annotated: bool) {
    let a = asyncness();
    match i % 3 {
        0 => {
            let _ = writeln!(
                code,
                "    /// Looks up item {i} by id.\n    ///\n    /// # Arguments\n    /// * `id` - The item's id\n    /// * `detail` - Whether to include the details"
            );
            if annotated {
                let _ = writeln!(code, "    #[mcp_tool(read_only_hint = true)]");
            }
            let _ = writeln!(
                code,
                "    pub {a}fn get_{i}(&self, id: u64, detail: Option<bool>) -> Result<Item, ScaleError> {{\n        item(id, {i}, detail.unwrap_or(false))\n    }}"
            );
        }
        1 => {
            let _ = writeln!(
                code,
                "    /// Searches the items of kind {i}.\n    ///\n    /// # Arguments\n    /// * `query` - Words to look for\n    /// * `limit` - At most this many results"
            );
            if annotated {
                let _ = writeln!(code, "    #[mcp_tool(read_only_hint = true, open_world_hint = false)]");
            }
            let _ = writeln!(
                code,
                "    pub {a}fn search_{i}(&self, query: String, limit: Option<u32>) -> Vec<Item> {{\n        search(&query, limit.unwrap_or(10), {i})\n    }}"
            );
        }
        _ => {
            let _ = writeln!(
                code,
                "    /// Renames item {i}.\n    ///\n    /// # Arguments\n    /// * `id` - The item's id\n    /// * `name` - The new name"
            );
            if annotated {
                let _ = writeln!(code, "    #[mcp_tool(destructive_hint = false, idempotent_hint = true)]");
            }
            let _ = writeln!(
                code,
                "    pub {a}fn rename_{i}(&self, id: u64, name: String) -> Result<Item, ScaleError> {{\n        rename(id, name, {i})\n    }}"
            );
        }
    }
}
