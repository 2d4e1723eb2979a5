//! Writes the rmcp peer's servers: `SCALE_METHODS` tools (default 20) in
//! servers of 50, and 10 more, as bench/scale's `build.rs` writes its
//! methods; with `SCALE_ANNOTATED=0`, the same methods without rmcp (plain
//! arguments, as bench/scale's plain build writes them); with
//! `SCALE_ASYNC=1`, every method `async`.

use std::fmt::Write as _;

include!("../../scale/settings.rs");

fn main() {
    let (methods, annotated) = settings();
    println!("cargo::rustc-check-cfg=cfg(annotated)");
    if annotated {
        println!("cargo::rustc-cfg=annotated");
    }
    let mut code = String::new();
    write_group(&mut code, "B", methods, annotated);
    write_group(&mut code, "S", 10, annotated);
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("servers.rs");
    std::fs::write(out, code).expect("write servers.rs");
}

/// `count` tools, 50 to a server named `{prefix}{k}`.
fn write_group(code: &mut String, prefix: &str, count: usize, annotated: bool) {
    for (server, first) in (0..count).step_by(50).enumerate() {
        let name = format!("{prefix}{server}");
        if annotated {
            let _ = writeln!(
                code,
                "/// Server {name}.\n#[derive(Debug, Clone)]\npub struct {name} {{\n    tool_router: ToolRouter<Self>,\n}}"
            );
            let _ = writeln!(code, "#[tool_router]");
        } else {
            let _ = writeln!(code, "/// Server {name}.\n#[derive(Debug, Default)]\npub struct {name};");
        }
        let _ = writeln!(code, "impl {name} {{");
        for i in first..count.min(first + 50) {
            write_method(code, i, annotated);
        }
        let _ = writeln!(code, "}}");
        if annotated {
            let _ = writeln!(
                code,
                "#[tool_handler(router = self.tool_router)]\nimpl ServerHandler for {name} {{\n    fn get_info(&self) -> ServerConfig {{\n        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())\n    }}\n}}"
            );
        }
    }
}

/// One method, in bench/scale's three shapes (a lookup, a search, a write).
fn write_method(code: &mut String, i: usize, annotated: bool) {
    let (doc, hints, plain, tool) = match i % 3 {
        0 => (
            format!("Looks up item {i} by id."),
            "read_only_hint = true",
            format!(
                "get_{i}(&self, id: u64, detail: Option<bool>) -> Result<Item, ScaleError> {{\n        item(id, {i}, detail.unwrap_or(false))\n    }}"
            ),
            format!(
                "get_{i}(&self, Parameters(GetArgs {{ id, detail }}): Parameters<GetArgs>) -> Result<Json<Item>, ErrorData> {{\n        Ok(Json(item(id, {i}, detail.unwrap_or(false))?))\n    }}"
            ),
        ),
        1 => (
            format!("Searches the items of kind {i}."),
            "read_only_hint = true, open_world_hint = false",
            format!(
                "search_{i}(&self, query: String, limit: Option<u32>) -> Vec<Item> {{\n        search(&query, limit.unwrap_or(10), {i})\n    }}"
            ),
            format!(
                "search_{i}(&self, Parameters(SearchArgs {{ query, limit }}): Parameters<SearchArgs>) -> Json<Items> {{\n        Json(Items {{ items: search(&query, limit.unwrap_or(10), {i}) }})\n    }}"
            ),
        ),
        _ => (
            format!("Renames item {i}."),
            "destructive_hint = false, idempotent_hint = true",
            format!(
                "rename_{i}(&self, id: u64, name: String) -> Result<Item, ScaleError> {{\n        rename(id, name, {i})\n    }}"
            ),
            format!(
                "rename_{i}(&self, Parameters(RenameArgs {{ id, name }}): Parameters<RenameArgs>) -> Result<Json<Item>, ErrorData> {{\n        Ok(Json(rename(id, name, {i})?))\n    }}"
            ),
        ),
    };
    let a = asyncness();
    let _ = writeln!(code, "    /// {doc}");
    if annotated {
        let _ = writeln!(code, "    #[tool(annotations({hints}))]\n    pub {a}fn {tool}");
    } else {
        let _ = writeln!(code, "    pub {a}fn {plain}");
    }
}
