//! What a method is to MCP: a tool (the default, `#[mcp_tool]` for hints),
//! a resource (`#[mcp_resource]`), a prompt (`#[mcp_prompt]`) or the
//! completion provider of an argument (`#[mcp_complete]`). One kind per
//! method; each kind's mistakes are errors on the token that makes them.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::attrs::{CompleteArgs, PromptArgs, ResourceArgs};
use crate::errors::Errors;
use crate::param::Param;
use crate::uri_template;

/// The MCP kind of a method.
pub enum Role {
    Tool,
    Resource(ResourceArgs),
    Prompt(PromptArgs),
    Complete(CompleteArgs),
}

/// The attributes that decide the kind, each with the span of its name.
pub struct RoleAttrs {
    pub tool: Option<Span>,
    pub resource: Option<(ResourceArgs, Span)>,
    pub prompt: Option<(PromptArgs, Span)>,
    pub complete: Option<(CompleteArgs, Span)>,
}

impl RoleAttrs {
    /// The first of the kinds, for "is not an RPC method" and `skip` errors.
    pub fn spans(&self) -> Vec<(&'static str, Span)> {
        [
            self.tool.map(|s| ("#[mcp_tool]", s)),
            self.resource.as_ref().map(|(_, s)| ("#[mcp_resource]", *s)),
            self.prompt.as_ref().map(|(_, s)| ("#[mcp_prompt]", *s)),
            self.complete.as_ref().map(|(_, s)| ("#[mcp_complete]", *s)),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Decides the kind and checks it against the parameters.
pub fn decide(attrs: RoleAttrs, params: &[Param], errors: &mut Errors) -> Role {
    let kinds = attrs.spans();
    if let [(first, _), rest @ ..] = kinds.as_slice() {
        for (other, span) in rest {
            errors.push(syn::Error::new(
                *span,
                format!("a method is one MCP kind, and this one is already {first}: remove {other} or {first}"),
            ));
        }
    }
    if let Some((args, span)) = attrs.resource {
        check_resource(&args, span, params, errors);
        return Role::Resource(args);
    }
    if let Some((args, _)) = attrs.prompt {
        if let Some(name) = &args.name
            && !crate::names::is_valid_tool_name(&name.value())
        {
            errors.push(syn::Error::new(
                name.span(),
                format!(
                    "`{}` is not a valid prompt name ({}): 1-128 characters from A-Z a-z 0-9 _ - .",
                    name.value(),
                    crate::names::why_invalid(&name.value())
                ),
            ));
        }
        return Role::Prompt(args);
    }
    if let Some((args, span)) = attrs.complete {
        check_complete(&args, span, params, errors);
        return Role::Complete(args);
    }
    Role::Tool
}

/// Whether the parameter is the request context (not an argument).
pub fn is_context(p: &Param) -> bool {
    match &p.ty {
        syn::Type::Path(path) => path.path.segments.last().is_some_and(|s| s.ident == "Context"),
        _ => false,
    }
}

fn suggestion<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    candidates
        .map(|c| (strsim::jaro_winkler(c, name), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

fn check_resource(args: &ResourceArgs, span: Span, params: &[Param], errors: &mut Errors) {
    let Some(uri) = &args.uri else {
        errors.push(syn::Error::new(
            span,
            "`#[mcp_resource]` needs `uri = \"scheme://...\"`: a URI, or a template whose `{variables}` are \
             parameters of the method",
        ));
        return;
    };
    if let Some(mime) = &args.mime_type {
        let value = mime.value();
        let valid = value.split_once('/').is_some_and(|(t, s)| {
            let token = |x: &str| !x.is_empty() && crate::attrs::is_token(x);
            token(t) && token(s.split(';').next().unwrap_or("").trim())
        });
        if !valid {
            errors.push(syn::Error::new(
                mime.span(),
                format!("`{value}` is not a MIME type: write `type/subtype` (`text/plain`, `application/json`)"),
            ));
        }
    }
    let variables = match uri_template::variables(&uri.value()) {
        Ok(variables) => variables,
        Err(why) => {
            errors.push(syn::Error::new(uri.span(), format!("invalid resource URI template: {why}")));
            return;
        }
    };
    let arguments: Vec<&Param> = params.iter().filter(|p| !is_context(p)).collect();
    // A parameter suggested for a misspelt variable is not reported again.
    let mut suggested = Vec::new();
    for v in &variables {
        if !arguments.iter().any(|p| p.name == v.name) {
            let hint = suggestion(&v.name, arguments.iter().map(|p| p.name.as_str()));
            if let Some(p) = arguments.iter().find(|p| hint.contains(&format!("`{}`", p.name))) {
                suggested.push(p.name.clone());
            }
            errors.push(syn::Error::new(
                uri.span(),
                format!("the URI template's variable `{}` is not a parameter of the method{hint}", v.name),
            ));
        }
    }
    for p in &arguments {
        let required = p.default.is_none() && !p.optional;
        if required && !suggested.contains(&p.name) && !variables.iter().any(|v| v.name == p.name) {
            errors.push(syn::Error::new(
                p.span,
                format!(
                    "parameter `{}` is not a variable of the URI template `{}`: a resource read has only the \
                     URI's variables; add `{{{}}}` to the template, or give the parameter a default or an `Option` type",
                    p.name,
                    uri.value(),
                    p.name
                ),
            ));
        }
    }
}

fn check_complete(args: &CompleteArgs, span: Span, params: &[Param], errors: &mut Errors) {
    match (&args.prompt, &args.resource) {
        (Some(_), Some(resource)) => errors.push(syn::Error::new(
            resource.span(),
            "`#[mcp_complete]` completes an argument of one prompt or one resource template: remove `prompt` or `resource`",
        )),
        (None, None) => errors.push(syn::Error::new(
            span,
            "`#[mcp_complete]` needs `prompt = \"name\"` or `resource = \"scheme://.../{var}\"`, and `argument = \"...\"`",
        )),
        (None, Some(resource)) => match uri_template::variables(&resource.value()) {
            Err(why) => errors.push(syn::Error::new(resource.span(), format!("invalid resource URI template: {why}"))),
            Ok(variables) => {
                if let Some(argument) = &args.argument
                    && !variables.iter().any(|v| v.name == argument.value())
                {
                    let hint = suggestion(&argument.value(), variables.iter().map(|v| v.name.as_str()));
                    errors.push(syn::Error::new(
                        argument.span(),
                        format!("`{}` is not a variable of `{}`{hint}", argument.value(), resource.value()),
                    ));
                }
            }
        },
        (Some(_), None) => {}
    }
    if args.argument.is_none() && (args.prompt.is_some() || args.resource.is_some()) {
        errors.push(syn::Error::new(span, "`#[mcp_complete]` needs `argument = \"...\"`: the argument completed"));
    }
    if !params.iter().any(|p| p.name == "value" && !is_context(p)) {
        errors.push(syn::Error::new(
            span,
            "a completion method takes the partial value as a parameter named `value` (`value: String`); \
             other parameters are filled from the arguments the client already gave",
        ));
    }
}

/// The `McpRole` value of the descriptor.
pub fn tokens(role: &Role, k: &crate::krate::Private) -> TokenStream {
    let opt = |s: &Option<crate::attrs::Str>| match s {
        Some(s) => {
            let v = s.value();
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    match role {
        Role::Tool => quote!(#k::McpRole::Tool),
        Role::Resource(a) => {
            let uri = a.uri.as_ref().map(|u| u.value()).unwrap_or_default();
            let (name, title, mime) = (opt(&a.name), opt(&a.title), opt(&a.mime_type));
            quote!(#k::McpRole::Resource(#k::ResourceSpec { uri: #uri, name: #name, title: #title, mime_type: #mime }))
        }
        Role::Prompt(a) => {
            let (name, title) = (opt(&a.name), opt(&a.title));
            quote!(#k::McpRole::Prompt(#k::PromptSpec { name: #name, title: #title }))
        }
        Role::Complete(a) => {
            let argument = a.argument.as_ref().map(|s| s.value()).unwrap_or_default();
            let target = match (&a.prompt, &a.resource) {
                (Some(p), _) => {
                    let p = p.value();
                    quote!(#k::CompletionTarget::Prompt(#p))
                }
                (None, Some(r)) => {
                    let r = r.value();
                    quote!(#k::CompletionTarget::Resource(#r))
                }
                (None, None) => quote!(#k::CompletionTarget::Prompt("")),
            };
            quote!(#k::McpRole::Completion(#k::CompletionSpec { target: #target, argument: #argument }))
        }
    }
}
