//! Where the server API lives, as seen from the crate that uses a macro.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, Path};

/// The path to `tessera_server`'s API in the calling crate.
///
/// An explicit `crate = "..."` wins. Otherwise the calling crate's manifest
/// (`Cargo.toml`, dependencies and dev-dependencies) is read; see [`choose`].
pub(crate) fn server_path(explicit: Option<&Path>) -> TokenStream {
    if let Some(p) = explicit {
        return quote!(#p);
    }
    choose(
        crate_name("tessera-server").ok(),
        crate_name("tessera").ok(),
    )
}

/// Picks the path from what the manifest says: a dependency on
/// `tessera-server` gives `::tessera_server` (under its local name, if
/// renamed), else one on the `tessera` facade gives `::tessera::server`.
/// Inside the crate itself the path starts with `crate`. With neither,
/// `::tessera::server` is assumed, and rustc's "unresolved path" error names
/// what is missing (add a dependency, or say `crate = "..."`).
fn choose(server: Option<FoundCrate>, facade: Option<FoundCrate>) -> TokenStream {
    match (server, facade) {
        (Some(FoundCrate::Itself), _) => quote!(crate),
        (Some(FoundCrate::Name(n)), _) => {
            let id = Ident::new(&n, Span::call_site());
            quote!(::#id)
        }
        (None, Some(FoundCrate::Itself)) => quote!(crate::server),
        (None, Some(FoundCrate::Name(n))) => {
            let id = Ident::new(&n, Span::call_site());
            quote!(::#id::server)
        }
        (None, None) => quote!(::tessera::server),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Option<FoundCrate> {
        Some(FoundCrate::Name(n.to_owned()))
    }

    fn text(ts: TokenStream) -> String {
        ts.to_string().replace(' ', "")
    }

    #[test]
    fn prefers_a_direct_dependency_on_tessera_server() {
        assert_eq!(
            text(choose(name("tessera_server"), None)),
            "::tessera_server"
        );
        assert_eq!(
            text(choose(name("tessera_server"), name("tessera"))),
            "::tessera_server"
        );
        assert_eq!(text(choose(name("mcp_server"), None)), "::mcp_server");
        assert_eq!(text(choose(Some(FoundCrate::Itself), None)), "crate");
    }

    #[test]
    fn falls_back_to_the_facade() {
        assert_eq!(text(choose(None, name("tessera"))), "::tessera::server");
        assert_eq!(text(choose(None, name("mcp"))), "::mcp::server");
        assert_eq!(
            text(choose(None, Some(FoundCrate::Itself))),
            "crate::server"
        );
        assert_eq!(text(choose(None, None)), "::tessera::server");
    }

    #[test]
    fn an_explicit_path_wins() {
        let p: Path = syn::parse_quote!(::my_reexport::mcp);
        assert_eq!(text(server_path(Some(&p))), "::my_reexport::mcp");
    }
}
