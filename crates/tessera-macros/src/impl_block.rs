//! `#[tools]` on an impl block: for the methods marked `#[tool]`, `#[prompt]`
//! or `#[resource]`, methods that return their routes, each handler holding
//! an `Arc` of the value, and `register`, which adds them all to a
//! `ServerBuilder`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, GenericParam, Ident, ImplItem, ItemImpl, LitStr, Meta, Type};

use crate::attr::{self, Kind, RouteArgs, Site};
use crate::crate_path::server_path;
use crate::doc::doc_text;
use crate::route::{RouteKind, attach, describe, param_names};
use crate::signature::{self, FnKind, HandlerSig, Receiver, combine};

/// One marked method, read.
struct RouteMethod {
    kind: RouteKind,
    name: LitStr,
    args: RouteArgs,
    sig: HandlerSig,
    doc: Option<String>,
}

/// The kind a marker attribute (`#[tool]`, `#[some::path::prompt(...)]`, …)
/// declares, if it is one.
fn marker(attr: &Attribute) -> Option<Kind> {
    let last = attr.path().segments.last()?;
    Kind::from_marker(&last.ident.to_string())
}

/// Expands `#[tools(...)]` on `item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp = match syn::parse2::<ItemImpl>(item.clone()) {
        Ok(i) => i,
        Err(_) => {
            let e = syn::Error::new(
                Span::call_site(),
                "#[tools] goes on an impl block (`impl MyServer { ... }`) whose methods are marked #[tool], #[prompt] or #[resource]",
            );
            let errors = e.to_compile_error();
            return quote!(#item #errors);
        }
    };
    let mut errors: Vec<syn::Error> = Vec::new();
    if let Some((_, path, _)) = &imp.trait_ {
        errors.push(syn::Error::new_spanned(
            path,
            "#[tools] goes on an inherent impl block (`impl MyServer { ... }`), not on a trait impl",
        ));
    }
    let args = attr::parse(args, Site::ImplBlock, Span::call_site()).unwrap_or_else(|e| {
        errors.push(e);
        RouteArgs::default()
    });

    let mut methods: Vec<RouteMethod> = Vec::new();
    for item in &mut imp.items {
        let ImplItem::Fn(f) = item else { continue };
        let (marks, rest): (Vec<Attribute>, Vec<Attribute>) = std::mem::take(&mut f.attrs)
            .into_iter()
            .partition(|a| marker(a).is_some());
        f.attrs = rest;
        let Some(mark) = marks.first() else { continue };
        if let Some(extra) = marks.get(1) {
            errors.push(syn::Error::new_spanned(
                extra,
                "a method is one route: mark it with one of #[tool], #[prompt] or #[resource]",
            ));
        }
        let kind = marker(mark).expect("partitioned on marker");
        let route_args = match &mark.meta {
            Meta::Path(_) => attr::parse(TokenStream::new(), Site::Method(kind), mark.span()),
            Meta::List(l) => attr::parse(l.tokens.clone(), Site::Method(kind), mark.span()),
            Meta::NameValue(nv) => Err(syn::Error::new_spanned(
                nv,
                format!("write #[{0}] or #[{0}(key = \"...\", ...)]", kind.name()),
            )),
        };
        let sig = signature::read(&f.sig, FnKind::Method, kind.attribute());
        let (route_args, sig) = match (route_args, sig) {
            (Ok(a), Ok(s)) => (a, s),
            (a, s) => {
                errors.extend([a.err(), s.err()].into_iter().flatten());
                continue;
            }
        };
        let route = RouteKind::of(kind, &route_args);
        let ident = &f.sig.ident;
        let name = match &route_args.name {
            Some(n) => n.clone(),
            None => LitStr::new(&ident.unraw().to_string(), ident.span()),
        };
        if route == RouteKind::Tool && route_args.name.is_none() {
            if let Err(e) = attr::check_tool_name(&name.value(), name.span()) {
                errors.push(e);
                continue;
            }
        }
        if matches!(route, RouteKind::Tool | RouteKind::Prompt) {
            if let Some(first) = methods
                .iter()
                .find(|m| m.kind == route && m.name.value() == name.value())
            {
                errors.push(syn::Error::new(
                    name.span(),
                    format!(
                        "two #[{0}] methods are named `{1}` (the other is `{2}`); rename one with #[{0}(name = \"...\")]",
                        kind.name(),
                        name.value(),
                        first.sig.ident,
                    ),
                ));
                continue;
            }
        }
        methods.push(RouteMethod {
            kind: route,
            name,
            args: route_args,
            doc: doc_text(&f.attrs),
            sig,
        });
    }

    let state = match (&args.state, block_state(&methods)) {
        (Some(s), _) => Some(s.clone()),
        (None, Ok(s)) => s,
        (None, Err(e)) => {
            errors.push(e);
            None
        }
    };
    if methods.is_empty() && errors.is_empty() {
        errors.push(syn::Error::new_spanned(
            &imp.self_ty,
            "#[tools] found no method marked #[tool], #[prompt] or #[resource] in this impl block",
        ));
    }

    let generated = generated_impl(&imp, &args, state.as_ref(), &methods);
    let errors = combine(errors).map(|e| e.to_compile_error());
    quote! {
        #imp
        #generated
        #errors
    }
}

/// The state type the methods agree on (from their `State<X>` parameters).
fn block_state(methods: &[RouteMethod]) -> syn::Result<Option<Type>> {
    let mut found: Option<&Type> = None;
    for m in methods {
        let Some(s) = &m.sig.state else { continue };
        match found {
            None => found = Some(s),
            Some(f) if quote!(#f).to_string() == quote!(#s).to_string() => {}
            Some(f) => {
                return Err(syn::Error::new_spanned(
                    s,
                    format!(
                        "the methods of one #[tools] impl block serve one server, but they take `State<{}>` and `State<{}>`",
                        quote!(#f),
                        quote!(#s)
                    ),
                ));
            }
        }
    }
    Ok(found.cloned())
}

/// `impl<..> Type<..> { pub fn tool_routes(..) …; pub fn register(..) }`.
fn generated_impl(
    imp: &ItemImpl,
    args: &RouteArgs,
    state: Option<&Type>,
    methods: &[RouteMethod],
) -> TokenStream {
    let p = server_path(args.krate.as_ref());
    let (impl_generics, _, where_clause) = imp.generics.split_for_impl();
    let self_ty = &imp.self_ty;

    let (generics, state, turbofish) = match state {
        Some(s) => (quote!(), quote!(#s), quote!()),
        None => {
            let s = state_param(imp);
            (
                quote!(<#s: ::core::marker::Send + ::core::marker::Sync + 'static>),
                quote!(#s),
                quote!(::<#s>),
            )
        }
    };

    let mut fns = TokenStream::new();
    let mut registers = TokenStream::new();
    for kind in RouteKind::ALL {
        let of_kind: Vec<&RouteMethod> = methods.iter().filter(|m| m.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let routes_fn = Ident::new(kind.routes_method(), Span::call_site());
        let route_ty = kind.route_ty(&p, &state);
        let routes = of_kind.iter().map(|m| route(&p, &state, m));
        let listed = of_kind
            .iter()
            .map(|m| format!("`{}`", m.name.value()))
            .collect::<Vec<_>>()
            .join(", ");
        let doc = format!(
            " The {}s of this type's methods ({listed}), as routes to register with `ServerBuilder::{}` (or all at once with `register`).\n\n Each handler holds a clone of the `Arc` and calls the method on it.\n\n Generated by `#[tools]`.",
            kind.noun(),
            kind.builder_fn(),
        );
        fns.extend(quote! {
            #[doc = #doc]
            pub fn #routes_fn #generics(
                self: ::std::sync::Arc<Self>,
            ) -> ::std::vec::Vec<#route_ty>
            where
                Self: ::core::marker::Send + ::core::marker::Sync + 'static,
            {
                ::std::vec![#(#routes),*]
            }
        });
        let add = Ident::new(kind.builder_fn(), Span::call_site());
        registers.extend(quote! {
            for route in Self::#routes_fn #turbofish(::std::sync::Arc::clone(&self)) {
                builder = builder.#add(route);
            }
        });
    }
    if methods.is_empty() {
        return TokenStream::new();
    }
    let register_doc = " Registers every route of this type's marked methods on `builder`: the same as calling `ServerBuilder::tool`, `prompt`, `resource` or `resource_template` with each route that the `*_routes` methods return.\n\n Generated by `#[tools]`.";
    quote! {
        impl #impl_generics #self_ty #where_clause {
            #fns

            #[doc = #register_doc]
            pub fn register #generics(
                self: ::std::sync::Arc<Self>,
                builder: #p::ServerBuilder<#state>,
            ) -> #p::ServerBuilder<#state>
            where
                Self: ::core::marker::Send + ::core::marker::Sync + 'static,
            {
                let mut builder = builder;
                #registers
                builder
            }
        }
    }
}

/// A name for the server-state parameter that the impl block does not use.
fn state_param(imp: &ItemImpl) -> Ident {
    let taken: Vec<String> = imp
        .generics
        .params
        .iter()
        .filter_map(|g| match g {
            GenericParam::Type(t) => Some(t.ident.to_string()),
            GenericParam::Const(c) => Some(c.ident.to_string()),
            GenericParam::Lifetime(_) => None,
        })
        .collect();
    let name = ["S", "St", "ServerState", "TesseraServerState"]
        .into_iter()
        .find(|n| !taken.iter().any(|t| t == n))
        .unwrap_or("TesseraServerState_");
    format_ident!("{name}")
}

/// The route of one method: the builder chain and a handler closure that
/// holds an `Arc` of the value.
fn route(p: &TokenStream, state: &TokenStream, m: &RouteMethod) -> TokenStream {
    let builder = describe(p, m.kind, &m.name, &m.args, m.doc.clone());
    let ident = &m.sig.ident;
    let span = ident.span();
    let names = param_names(&m.sig);
    let tys = &m.sig.params;
    match m.sig.receiver {
        Receiver::None => {
            let attach = attach(state, &m.sig, quote!(Self::#ident), span);
            quote!(#builder #attach)
        }
        Receiver::Ref => {
            // Spanned at the method's name, so that an error about the
            // future (not `Send`, say) names the method, not `#[tools]`.
            let handler = quote_spanned! {span=>
                move |#(#names: #tys),*| {
                    let this = ::std::sync::Arc::clone(&this);
                    async move { this.#ident(#(#names),*).await }
                }
            };
            let attach = attach(state, &m.sig, handler, span);
            quote! {{
                let this = ::std::sync::Arc::clone(&self);
                #builder #attach
            }}
        }
        Receiver::Arc => {
            let handler = quote_spanned! {span=>
                move |#(#names: #tys),*| Self::#ident(::std::sync::Arc::clone(&this), #(#names),*)
            };
            let attach = attach(state, &m.sig, handler, span);
            quote! {{
                let this = ::std::sync::Arc::clone(&self);
                #builder #attach
            }}
        }
    }
}
