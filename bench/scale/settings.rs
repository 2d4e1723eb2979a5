// The fixture's settings, read by the build scripts of `bench/scale` and of
// its rmcp peer (`bench/peers/rmcp_scale`), which include this file.

/// How many methods the big group has (`SCALE_METHODS`, default 20) and
/// whether they carry the annotations (`SCALE_ANNOTATED`, unless `0`);
/// cargo runs the build script again when either changes.
fn settings() -> (usize, bool) {
    println!("cargo:rerun-if-env-changed=SCALE_METHODS");
    println!("cargo:rerun-if-env-changed=SCALE_ANNOTATED");
    println!("cargo:rerun-if-env-changed=SCALE_ASYNC");
    println!("cargo:rerun-if-changed=build.rs");
    let methods: usize = std::env::var("SCALE_METHODS").ok().and_then(|n| n.parse().ok()).unwrap_or(20);
    let annotated = std::env::var("SCALE_ANNOTATED").map_or(true, |v| v != "0");
    (methods, annotated)
}

/// `"async "` when the methods are to be `async` (`SCALE_ASYNC=1`), else
/// `""`: what each method's `fn` is preceded by.
fn asyncness() -> &'static str {
    if std::env::var("SCALE_ASYNC").is_ok_and(|v| v == "1") { "async " } else { "" }
}
