//! Method attributes that govern how calls run: `#[rpc::cache(..)]`,
//! `#[rpc::lock(..)]` and `#[rpc::invalidates(..)]`. Their arguments are
//! checked here and become the `cache`, `lock` and `invalidates` fields of
//! the method's descriptor.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::Span;
use quote::{format_ident, quote};
use syn::{Lit, LitStr, Meta};

use crate::errors::Errors;
use crate::fields::Fields;
use crate::param::Param;
use crate::seconds::Seconds;
use crate::suggest::did_you_mean;
use crate::values::{Str, kind_of};

/// The environment names `env(..)` takes, with the `Environment` variants.
const ENVIRONMENTS: &[(&str, &str)] = &[("prod", "Prod"), ("dev", "Dev"), ("test", "Test")];

/// `env(prod, dev, test)`: the environments caching applies in.
#[derive(Debug, Clone, Default)]
pub struct EnvList {
    /// `Environment` variant names, in the order written.
    pub variants: Vec<&'static str>,
}

impl FromMeta for EnvList {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let Meta::List(list) = meta else {
            return Err(darling::Error::custom("`env` lists environments: `env(prod, dev, test)`").with_span(meta));
        };
        let mut errors = darling::Error::accumulator();
        let mut variants = Vec::new();
        for item in NestedMeta::parse_meta_list(list.tokens.clone())? {
            let name = match &item {
                NestedMeta::Meta(Meta::Path(path)) => path.get_ident().map(ToString::to_string),
                _ => None,
            };
            let Some(name) = name else {
                errors.push(
                    darling::Error::custom("`env` lists environment names: `prod`, `dev`, `test`").with_span(&item),
                );
                continue;
            };
            match ENVIRONMENTS.iter().find(|(n, _)| *n == name) {
                Some((_, variant)) if variants.contains(variant) => {
                    errors.push(darling::Error::custom(format!("`{name}` is listed twice")).with_span(&item));
                }
                Some((_, variant)) => variants.push(*variant),
                None => {
                    let hint = did_you_mean(&name, ENVIRONMENTS.iter().map(|(n, _)| *n));
                    errors.push(
                        darling::Error::custom(format!(
                            "unknown environment `{name}`: the environments are `prod`, `dev` and `test`{hint}"
                        ))
                        .with_span(&item),
                    );
                }
            }
        }
        errors.finish()?;
        if variants.is_empty() {
            return Err(darling::Error::custom("`env(..)` needs at least one environment: `prod`, `dev`, `test`")
                .with_span(list));
        }
        Ok(EnvList { variants })
    }
}

/// `#[rpc::cache(ttl = 60, env(prod, dev))]` on a method.
#[derive(Debug, Default, FromMeta)]
pub struct CacheArgs {
    /// How long a result is served from the cache (required): seconds,
    /// or with a unit (`5m`, `1h`, `"1h30m"`).
    #[darling(default)]
    pub ttl: Option<Seconds>,
    /// The same, in seconds only.
    #[darling(default)]
    pub ttl_secs: Option<Seconds>,
    /// Environments caching applies in; default `prod` only.
    #[darling(default)]
    pub env: Option<EnvList>,
}

/// `#[rpc::lock]`, `#[rpc::lock(param = "id", ttl = 30)]` on a method.
#[derive(Debug, Default, FromMeta)]
pub struct LockArgs {
    /// The parameter whose value keys the lock; default: one lock per method.
    #[darling(default)]
    pub param: Option<Str>,
    /// How long the lock holds at most (default 30 s): seconds, or with a
    /// unit (`2m`).
    #[darling(default)]
    pub ttl: Option<Seconds>,
    /// The same, in seconds only.
    #[darling(default)]
    pub ttl_secs: Option<Seconds>,
}

/// `#[rpc::invalidates("Catalog.get", "Catalog.search", warm_up)]` on a method.
#[derive(Debug, Default)]
pub struct InvalidatesArgs {
    /// The full method names.
    pub methods: Vec<LitStr>,
    /// Whether the entries are computed again after invalidation.
    pub warm_up: bool,
}

impl FromMeta for InvalidatesArgs {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut out = InvalidatesArgs::default();
        for item in items {
            match item {
                NestedMeta::Lit(Lit::Str(s)) => {
                    let name = s.value();
                    if let Some(reason) = invalid_method_name(&name) {
                        errors.push(darling::Error::custom(reason).with_span(s));
                    } else if out.methods.iter().any(|m| m.value() == name) {
                        errors.push(darling::Error::custom(format!("`{name}` is listed twice")).with_span(s));
                    } else {
                        out.methods.push(s.clone());
                    }
                }
                NestedMeta::Meta(Meta::Path(p)) if p.is_ident("warm_up") => {
                    if out.warm_up {
                        errors.push(darling::Error::duplicate_field("warm_up").with_span(p));
                    }
                    out.warm_up = true;
                }
                NestedMeta::Meta(meta) => {
                    let key = meta.path().get_ident().map(ToString::to_string).unwrap_or_default();
                    let message = if meta.path().is_ident("warm_up") {
                        "`warm_up` is a bare flag: `#[rpc::invalidates(\"Catalog.get\", warm_up)]`".to_owned()
                    } else {
                        format!(
                            "unknown key `{key}`: `#[rpc::invalidates]` takes method names as strings and the \
                             `warm_up` flag{}",
                            did_you_mean(&key, ["warm_up"])
                        )
                    };
                    errors.push(darling::Error::custom(message).with_span(meta));
                }
                other @ NestedMeta::NameValueInvalidExpr(_) => errors.push(
                    darling::Error::custom("`#[rpc::invalidates]` takes method names as strings and `warm_up`")
                        .with_span(other),
                ),
                NestedMeta::Lit(other) => errors.push(
                    darling::Error::custom(format!(
                        "expected a method name as a string, found {}: `#[rpc::invalidates(\"Catalog.get\")]`",
                        kind_of(other)
                    ))
                    .with_span(other),
                ),
            }
        }
        errors.finish()?;
        Ok(out)
    }
}

/// Why `name` cannot be a full RPC method name, if it cannot.
fn invalid_method_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a method name cannot be empty: write the full name, e.g. \"Catalog.get\"".into());
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some(format!("`{}` is not a method name: it contains whitespace", name.escape_debug()));
    }
    None
}

/// The checked cache, lock and invalidation settings of one method.
#[derive(Debug, Default)]
pub struct Policies {
    /// `(ttl, Environment variants)`.
    cache: Option<(u64, Vec<&'static str>)>,
    /// `(param, ttl)`.
    lock: Option<(Option<String>, u64)>,
    /// `(method, warm_up)`.
    invalidates: Vec<(String, bool)>,
}

/// The default `#[rpc::lock]` ttl, in seconds.
const DEFAULT_LOCK_TTL: u64 = 30;

/// What makes a method a write.
#[derive(Debug, Clone, Copy)]
pub struct Writes {
    /// It takes a lock.
    pub lock: bool,
    /// It invalidates cached results of other methods.
    pub invalidates: bool,
    /// It is declared destructive.
    pub destructive: bool,
}

/// A cached method is answered from the cache without running: one that
/// writes (takes a lock, invalidates other results, is destructive) would
/// not write on a repeated call. An error on `#[rpc::cache]`.
pub fn refuse_cached_writes(cache: Option<Span>, writes: Writes, errors: &mut Errors) {
    let Some(cache_span) = cache else { return };
    let write = [
        writes.lock.then_some("takes a lock (`#[rpc::lock]`)"),
        writes.invalidates.then_some("invalidates cached results (`#[rpc::invalidates]`)"),
        writes.destructive.then_some("is destructive (`destructive_hint`)"),
    ];
    if let Some(why) = write.into_iter().flatten().next() {
        errors.push(syn::Error::new(
            cache_span,
            format!(
                "a cached method is answered from the cache without running, and this one {why}: it writes, \
                 and a repeated call would skip the write; remove `#[rpc::cache]`"
            ),
        ));
    }
}

/// `ttl` or `ttl_secs`, not both.
fn one_ttl(ttl: Option<Seconds>, ttl_secs: Option<Seconds>, errors: &mut Errors) -> Option<Seconds> {
    if let (Some(_), Some(second)) = (ttl, ttl_secs) {
        errors.push(syn::Error::new(second.span, "give `ttl` or `ttl_secs`, not both: remove one"));
    }
    ttl.or(ttl_secs)
}

impl Policies {
    /// Checks the parsed attributes against the method's parameters.
    pub fn check(
        cache: Option<(CacheArgs, Span)>,
        lock: Option<(LockArgs, Span)>,
        invalidates: Vec<(InvalidatesArgs, Span)>,
        params: &[Param],
        errors: &mut Errors,
    ) -> Policies {
        let mut out = Policies::default();
        if let Some((args, span)) = cache {
            match one_ttl(args.ttl, args.ttl_secs, errors) {
                Some(ttl) => {
                    let envs = args.env.map_or_else(|| vec!["Prod"], |e| e.variants);
                    out.cache = Some((ttl.value, envs));
                }
                None => errors.push(syn::Error::new(
                    span,
                    "`#[rpc::cache]` needs `ttl`, the seconds a result is served from the cache: \
                     `#[rpc::cache(ttl = 60)]`",
                )),
            }
        }
        if let Some((args, _)) = lock {
            let param = args.param.and_then(|lit| check_lock_param(&lit.0, params, errors).then(|| lit.value()));
            let ttl = one_ttl(args.ttl, args.ttl_secs, errors);
            out.lock = Some((param, ttl.map_or(DEFAULT_LOCK_TTL, |t| t.value)));
        }
        for (args, span) in invalidates {
            if args.methods.is_empty() {
                errors.push(syn::Error::new(
                    span,
                    "`#[rpc::invalidates]` names at least one method: `#[rpc::invalidates(\"Catalog.get\")]`",
                ));
            }
            for lit in args.methods {
                let name = lit.value();
                if out.invalidates.iter().any(|(m, _)| *m == name) {
                    errors.push(syn::Error::new(lit.span(), format!("`{name}` is already invalidated above")));
                    continue;
                }
                out.invalidates.push((name, args.warm_up));
            }
        }
        out
    }

    /// `#[rpc::cache]`: the ttl in seconds and the `Environment` variants.
    pub fn cache(&self) -> Option<(u64, &[&'static str])> {
        self.cache.as_ref().map(|(ttl, envs)| (*ttl, envs.as_slice()))
    }

    /// `#[rpc::lock]`: the keying parameter and the ttl in seconds.
    pub fn lock(&self) -> Option<(Option<&str>, u64)> {
        self.lock.as_ref().map(|(param, ttl)| (param.as_deref(), *ttl))
    }

    /// `#[rpc::invalidates]`: each method and whether it is warmed up.
    pub fn invalidates(&self) -> &[(String, bool)] {
        &self.invalidates
    }

    /// The descriptor fields `cache`, `lock` and `invalidates` that differ
    /// from their defaults (none, none, none: the descriptor's base fills
    /// those in); `k` is the `__private` path.
    pub fn fields(&self, k: &crate::krate::Private, fields: &mut Fields) {
        fields.some(
            "cache",
            self.cache.as_ref().map(|(ttl, envs)| {
                let envs = envs.iter().map(|v| format_ident!("{}", v));
                quote!(#k::CachePolicy { ttl_secs: #ttl, environments: &[#(#k::Environment::#envs),*] })
            }),
        );
        fields.some(
            "lock",
            self.lock.as_ref().map(|(param, ttl)| {
                let param = match param {
                    Some(p) => quote!(::core::option::Option::Some(#p)),
                    None => quote!(::core::option::Option::None),
                };
                quote!(#k::LockPolicy { param: #param, ttl_secs: #ttl })
            }),
        );
        fields.list(
            "invalidates",
            self.invalidates
                .iter()
                .map(|(method, warm_up)| quote!(#k::Relation { method: #method, warm_up: #warm_up })),
        );
    }
}

/// `param = ".."` names a parameter of the method that comes from the
/// request (not a `Context`).
fn check_lock_param(lit: &LitStr, params: &[Param], errors: &mut Errors) -> bool {
    let name = lit.value();
    let is_context = |p: &&Param| match &p.ty {
        syn::Type::Path(t) => t.path.segments.last().is_some_and(|s| s.ident == "Context"),
        _ => false,
    };
    let candidates: Vec<&Param> = params.iter().filter(|p| !is_context(p)).collect();
    if candidates.iter().any(|p| p.name == name) {
        return true;
    }
    let message = if params.iter().any(|p| p.name == name) {
        format!("`{name}` is the call's `Context`, not a parameter: the lock is keyed by a parameter's value")
    } else {
        let names: Vec<&str> = candidates.iter().map(|p| p.name.as_str()).collect();
        let list = if names.is_empty() {
            "the method takes none: leave `param` out for one lock per method".to_owned()
        } else {
            format!("its parameters are {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))
        };
        format!("`{name}` is not a parameter of this method ({list}){}", did_you_mean(&name, names.iter().copied()))
    };
    errors.push(syn::Error::new(lit.span(), message));
    false
}
