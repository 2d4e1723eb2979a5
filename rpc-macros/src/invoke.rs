//! A method's invoke function, `fn __rpc_invoke_<fn>(Invocation) ->
//! Invoked`: it calls the method (rpc-core's `Invocation::Call`), or
//! describes its arguments (`Invocation::Shape`) for a compact entry,
//! which does not name their types itself.
//!
//! * Most methods hand their function, their return type's finish and
//!   (when one has a default) their defaults to the shared code,
//!   `__private::call<N>` (or `bind<N>` and `call_async`, `async`), which
//!   binds each argument by its type under the name the descriptor gives,
//!   and describes the arguments by their types. The argument types are
//!   named once, in the call's turbofish, each with its own span: a type
//!   that cannot be an argument gets the compiler's one error on its own
//!   token. The method's own code holds no string and no binder.
//! * A method with more arguments than the shared code takes, or written
//!   out as its descriptor (which names each argument's schema and kind at
//!   the type), gets the binding sequence written out, each binder named
//!   at its type as the descriptor names it, so the compiler reports a
//!   type once; a compact one describes its arguments from a constant
//!   beside.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Type;

use crate::krate::Private;

/// One argument, as the invoke function binds it.
pub struct Arg<'a> {
    /// Its type.
    pub ty: &'a Type,
    /// The span its uses are reported at (the type's).
    pub span: Span,
    /// Its name (for a sequence written out).
    pub name: &'a str,
    /// Its default's function, as a `fn() -> T`.
    pub default: Option<TokenStream>,
}

impl Arg<'_> {
    /// Its default as an `Option<fn() -> T>`.
    fn default_arg(&self) -> TokenStream {
        match &self.default {
            Some(default) => quote!(::core::option::Option::Some(#default)),
            None => quote!(::core::option::Option::None),
        }
    }
}

/// Everything the invoke function of a method is written from.
pub struct Invoke<'a> {
    /// The `__private` path.
    pub k: &'a Private,
    /// The `__private` path, spanned at the return type: the location the
    /// shared `#[track_caller]` functions record an error at.
    pub k_at: Private,
    /// The method's name (for a sequence written out).
    pub name: &'a str,
    /// The method's function.
    pub ident: &'a Ident,
    /// Whether it is `async`.
    pub is_async: bool,
    /// Whether its binding sequence is written out.
    pub written_out: bool,
    /// Whether a sequence written out describes its arguments (a compact
    /// entry asks; a descriptor written out names them itself).
    pub describes: bool,
    /// The span of its signature.
    pub sig_span: Span,
    /// The span of its return type.
    pub at_span: Span,
    /// Its return type's finish function.
    pub finisher: TokenStream,
    /// Its arguments, in order.
    pub args: Vec<Arg<'a>>,
}

impl Invoke<'_> {
    /// The invoke function's body.
    pub fn body(&self) -> TokenStream {
        let Invoke { k, k_at, ident, sig_span, at_span, finisher, .. } = self;
        if self.written_out {
            return self.written_out_body();
        }
        let count = self.args.len();
        let types = self.args.iter().map(|arg| arg.ty);
        let any_default = self.args.iter().any(|arg| arg.default.is_some());
        let defaults = any_default.then(|| self.args.iter().map(Arg::default_arg)).into_iter().flatten();
        if self.is_async {
            // Binding and the future written once, in `__private::bind<N>`
            // and `__private::call_async` (no `async` block per method for
            // the compiler to check): a method whose future is not `Send`
            // gets one error, on its name. The finish function is passed as
            // itself (a function item, so a result that borrows the service
            // is handled for every lifetime of the borrow).
            let bind = match any_default {
                true => format_ident!("bind_defaults{}", count),
                false => format_ident!("bind{}", count),
            };
            let bound = quote_spanned!(*sig_span=> #k::#bind::<Self, #(#types),*>(__call, #(#defaults),*));
            let method = quote_spanned!(*sig_span=> Self::#ident);
            quote_spanned!(*at_span=> #k_at::call_async(#bound, #method, #finisher))
        } else {
            // Binding and call written once in `__private::call<N>`: this
            // method adds its argument types, itself and its return type's
            // finish.
            let call = match any_default {
                true => format_ident!("call_defaults{}", count, span = *at_span),
                false => format_ident!("call{}", count, span = *at_span),
            };
            quote_spanned! {*at_span=>
                #k_at::#call::<_, _, #(#types),*>(__call, #(#defaults,)* Self::#ident, #finisher)
            }
        }
    }

    /// The binding sequence written out: the service taken out of its
    /// instance, each argument bound by its binder (named at its type),
    /// the method called and its outcome finished.
    fn written_out_body(&self) -> TokenStream {
        let Invoke { k, name, ident, sig_span, at_span, finisher, .. } = self;
        let shapes = self.describes.then(|| {
            self.args.iter().map(|arg| {
                let ty = arg.ty;
                quote_spanned!(arg.span=> #k::ArgShape {
                    schema: <#ty as #k::Arg>::schema,
                    is_param: <#ty as #k::Arg>::IS_PARAM,
                })
            })
        });
        let shapes = shapes.into_iter().flatten();
        let args: Vec<_> = (0..self.args.len()).map(|index| format_ident!("__p{}", index)).collect();
        let bindings = self.args.iter().zip(&args).map(|(arg, var)| {
            let Arg { ty, span, name: param, .. } = arg;
            let default = arg.default_arg();
            let bind = quote_spanned!(*span=> <#ty as #k::Arg>::bind);
            quote! {
                let #var: #ty = match #bind(#name, &mut __params, #param, #default, __ctx) {
                    ::core::result::Result::Ok(value) => value,
                    ::core::result::Result::Err(error) => {
                        return #k::Invoked::Ready(::core::result::Result::Err(error));
                    }
                };
            }
        });
        let finish = quote!(#finisher(__out, __at));
        let outcome = if self.is_async {
            // One future, coerced to `Send` once, at the method: a method
            // whose future is not `Send` gets one error, on its name. It
            // borrows the service for the invocation, as `call_async`'s.
            let boxed = quote_spanned! {*sig_span=>
                ::std::boxed::Box::pin(async move {
                    let __out = ::core::result::Result::Ok(__svc.#ident(#(#args),*).await);
                    #finish
                })
            };
            quote!(#k::Invoked::Pending(#boxed))
        } else {
            quote! {{
                let __out = ::core::result::Result::Ok(__svc.#ident(#(#args),*));
                #k::Invoked::Ready(#finish)
            }}
        };
        let at = quote_spanned!(*at_span=> const { ::core::panic::Location::caller() });
        quote! {
            let (__instance, mut __params, __ctx) = match __call {
                #k::Invocation::Call { instance, params, context, .. } => (instance, params, context),
                #k::Invocation::Shape => return #k::Invoked::Shape(const { &[#(#shapes),*] }),
            };
            let __at = #at;
            let __svc = match #k::downcast::<Self>(__instance) {
                ::core::result::Result::Ok(svc) => svc,
                ::core::result::Result::Err(error) => {
                    return #k::Invoked::Ready(::core::result::Result::Err(error));
                }
            };
            #(#bindings)*
            #outcome
        }
    }
}
