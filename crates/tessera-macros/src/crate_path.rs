//! Where the server API lives, as seen from the crate that uses a macro.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, Path};

/// The path to `tessera_server`'s API in the calling crate.
///
/// An explicit `crate = "..."` wins. Otherwise the calling crate's manifest is
/// read: a dependency on `tessera-server` gives `::tessera_server` (under its
/// renamed name, if renamed), one on the `tessera` facade gives
/// `::tessera::server`. Without either, `::tessera::server` is assumed and
/// rustc's "unresolved path" error tells the user to add the dependency (or
/// to say `crate = "..."`).
pub(crate) fn server_path(explicit: Option<&Path>) -> TokenStream {
    if let Some(p) = explicit {
        return quote!(#p);
    }
    match crate_name("tessera-server") {
        Ok(FoundCrate::Itself) => quote!(crate),
        Ok(FoundCrate::Name(n)) => {
            let id = Ident::new(&n, Span::call_site());
            quote!(::#id)
        }
        Err(_) => match crate_name("tessera") {
            Ok(FoundCrate::Itself) => quote!(crate::server),
            Ok(FoundCrate::Name(n)) => {
                let id = Ident::new(&n, Span::call_site());
                quote!(::#id::server)
            }
            Err(_) => quote!(::tessera::server),
        },
    }
}
