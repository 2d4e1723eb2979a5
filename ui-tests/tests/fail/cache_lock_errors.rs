// `#[rpc::cache]`, `#[rpc::lock]` and `#[rpc::invalidates]` arguments.
rpc::api_group!(pub struct Tools => "tools", mcp = true);

pub struct Svc;

#[rpc::service(groups(Tools))]
impl Svc {
    /// No ttl.
    #[rpc::cache]
    pub fn a(&self) {}

    /// Zero ttl.
    #[rpc::cache(ttl = 0)]
    pub fn b(&self) {}

    /// Unknown environment.
    #[rpc::cache(ttl = 60, env(prod, staging, tset))]
    pub fn c(&self) {}

    /// An unknown unit, in a number and in a text.
    #[rpc::cache(ttl = 5mn)]
    #[rpc::lock(ttl = "5 fortnights")]
    pub fn d(&self) {}

    /// Twice.
    #[rpc::cache(ttl = 60)]
    #[rpc::cache(ttl = 120)]
    pub fn e(&self) {}

    /// No such parameter.
    #[rpc::lock(param = "idd")]
    pub fn f(&self, id: u64, ctx: rpc::Context) {
        let _ = (id, ctx);
    }

    /// The context is not a parameter.
    #[rpc::lock(param = "ctx")]
    pub fn g(&self, id: u64, ctx: rpc::Context) {
        let _ = (id, ctx);
    }

    /// Bad names.
    #[rpc::invalidates("", "Svc.a", "Svc.a", warmup)]
    pub fn h(&self) {}

    /// Unknown cache key.
    #[rpc::cache(tll = 60)]
    pub fn i(&self) {}
}

pub struct Durations;

#[rpc::service(groups(Tools))]
impl Durations {
    /// Milliseconds, a fraction, both keys, units in `ttl_secs`.
    #[rpc::cache(ttl = 500ms)]
    #[rpc::lock(ttl = 1.5h)]
    pub fn a(&self) {}

    /// Both keys.
    #[rpc::cache(ttl = 5m, ttl_secs = 300)]
    pub fn b(&self) {}

    /// A unit in `ttl_secs`.
    #[rpc::lock(ttl_secs = 2m)]
    pub fn b2(&self) {}

    /// Zero with a unit.
    #[rpc::cache(ttl = 0h)]
    pub fn c(&self) {}
}

pub struct Writes;

#[rpc::service(groups(Tools))]
impl Writes {
    /// Cached and locked: the repeated call would not run.
    #[rpc::cache(ttl = 60)]
    #[rpc::lock]
    pub fn a(&self) {}

    /// Cached and destructive.
    #[rpc::cache(ttl = 60)]
    #[mcp::mcp_tool(destructive_hint = true)]
    pub fn b(&self) {}

    /// Cached and invalidating another.
    #[rpc::cache(ttl = 60)]
    #[rpc::invalidates("Writes.a")]
    pub fn c(&self) {}
}

fn main() {}
