//! `scopes("catalog:write", ...)` of `#[rpc::info]` and `#[mcp_tool]`: the
//! OAuth scopes a caller needs to see and call a method, checked as
//! RFC 6749 scope tokens.

use syn::LitStr;

use crate::errors::Errors;

/// Whether `scope` is an RFC 6749 §3.3 scope token: printable ASCII
/// without space, `"` and `\`.
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty() && scope.bytes().all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// The method's scopes, from the one attribute of `given` (its name and
/// its `scopes(...)`, in the order the attributes are checked) that lists
/// them, each checked; duplicates, and scopes in two attributes, are errors.
pub fn collect(given: &[(&str, &[LitStr])], errors: &mut Errors) -> Vec<LitStr> {
    let mut listed = given.iter().filter(|(_, scopes)| !scopes.is_empty());
    let Some((_, scopes)) = listed.next() else { return Vec::new() };
    if let Some((first, _)) = given.iter().find(|(_, scopes)| !scopes.is_empty()) {
        for (_, again) in listed {
            errors.push(syn::Error::new(
                again[0].span(),
                format!("the method's scopes are given in `{first}(scopes(...))]` already: list them in one place"),
            ));
        }
    }
    let mut out: Vec<LitStr> = Vec::new();
    for lit in scopes.iter() {
        let scope = lit.value();
        if scope.is_empty() {
            errors.push(syn::Error::new(lit.span(), "an empty scope: write the scope's name, e.g. \"catalog:write\""));
        } else if scope.split_whitespace().count() > 1 {
            let parts: Vec<String> = scope.split_whitespace().map(|p| format!("{p:?}")).collect();
            errors.push(syn::Error::new(
                lit.span(),
                format!("one scope per string: a caller needs all of them, write `scopes({})`", parts.join(", ")),
            ));
        } else if !is_scope_token(&scope) {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "`{scope}` is not an OAuth scope (RFC 6749 §3.3): use printable ASCII without spaces, `\"` and `\\`"
                ),
            ));
        } else if out.iter().any(|seen| seen.value() == scope) {
            errors.push(syn::Error::new(lit.span(), format!("scope `{scope}` is listed twice: remove one")));
        } else {
            out.push(lit.clone());
        }
    }
    out
}

/// The service's scopes (`#[rpc::service(scopes(...))]`, checked once at
/// the block), then the method's own; a method repeating one of the
/// service's is an error on the method's.
pub fn with_service(service: &[LitStr], own: Vec<LitStr>, errors: &mut Errors) -> Vec<String> {
    let mut out: Vec<String> = service.iter().map(LitStr::value).collect();
    for lit in own {
        let scope = lit.value();
        if out.contains(&scope) {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "scope `{scope}` is required by the whole service already (`#[rpc::service(scopes(...))]`): remove it here"
                ),
            ));
        } else {
            out.push(scope);
        }
    }
    out
}

/// Checks the service's `scopes(...)`: the valid ones (errors for the others).
pub fn check_service(scopes: &[LitStr], errors: &mut Errors) -> Vec<LitStr> {
    collect(&[("#[rpc::service", scopes)], errors)
}

#[cfg(test)]
mod tests {
    use super::is_scope_token;

    #[test]
    fn scope_tokens_follow_rfc_6749() {
        assert!(is_scope_token("catalog:write"));
        assert!(is_scope_token("https://example.com/scope!#$"));
        for bad in ["", "a b", "a\"b", "a\\b", "caf\u{e9}", "a\tb"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }
}
