//! What every expansion shares: the kind of route an attribute makes, the
//! builder chain that describes it, and the typed `.handler` call that makes
//! handler mistakes readable.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, LitInt, LitStr};

use crate::attr::{Kind, RouteArgs};
use crate::signature::HandlerSig;

/// The route an attribute makes, with the names of the builder API for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteKind {
    /// `tool(name)` → `ToolRoute`, registered with `ServerBuilder::tool`.
    Tool,
    /// `prompt(name)` → `PromptRoute`, registered with `ServerBuilder::prompt`.
    Prompt,
    /// `resource(uri, name)` → `ResourceRoute`, registered with
    /// `ServerBuilder::resource`.
    Resource,
    /// `resource_template(template, name)` → `ResourceTemplateRoute`,
    /// registered with `ServerBuilder::resource_template`.
    Template,
}

impl RouteKind {
    /// All kinds, in the order generated methods are listed and registered.
    pub(crate) const ALL: [RouteKind; 4] = [
        RouteKind::Tool,
        RouteKind::Prompt,
        RouteKind::Resource,
        RouteKind::Template,
    ];

    /// The route an attribute of `kind` with `args` makes.
    pub(crate) fn of(kind: Kind, args: &RouteArgs) -> RouteKind {
        match kind {
            Kind::Tool => RouteKind::Tool,
            Kind::Prompt => RouteKind::Prompt,
            Kind::Resource if args.template.is_some() => RouteKind::Template,
            Kind::Resource => RouteKind::Resource,
        }
    }

    /// The builder function (and the `ServerBuilder` method) of this kind.
    pub(crate) fn builder_fn(self) -> &'static str {
        match self {
            RouteKind::Tool => "tool",
            RouteKind::Prompt => "prompt",
            RouteKind::Resource => "resource",
            RouteKind::Template => "resource_template",
        }
    }

    /// The route type.
    pub(crate) fn route_type(self) -> &'static str {
        match self {
            RouteKind::Tool => "ToolRoute",
            RouteKind::Prompt => "PromptRoute",
            RouteKind::Resource => "ResourceRoute",
            RouteKind::Template => "ResourceTemplateRoute",
        }
    }

    /// The suffix of a free function's companion (`echo` → `echo_tool`).
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            RouteKind::Tool => "tool",
            RouteKind::Prompt => "prompt",
            RouteKind::Resource | RouteKind::Template => "resource",
        }
    }

    /// The method `#[tools]` generates for the routes of this kind.
    pub(crate) fn routes_method(self) -> &'static str {
        match self {
            RouteKind::Tool => "tool_routes",
            RouteKind::Prompt => "prompt_routes",
            RouteKind::Resource => "resource_routes",
            RouteKind::Template => "resource_template_routes",
        }
    }

    /// The thing described, in prose.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            RouteKind::Tool => "tool",
            RouteKind::Prompt => "prompt",
            RouteKind::Resource => "resource",
            RouteKind::Template => "resource template",
        }
    }

    /// `P::ToolRoute<state>` (or the route type of this kind).
    pub(crate) fn route_ty(self, p: &TokenStream, state: &TokenStream) -> TokenStream {
        let ty = Ident::new(self.route_type(), Span::call_site());
        quote!(#p::#ty<#state>)
    }
}

/// The builder chain up to (not including) `.handler(...)`:
/// `P::tool("name").description("...").title("...")…`. The description comes
/// from `description = "..."`, else from the doc comment.
pub(crate) fn describe(
    p: &TokenStream,
    kind: RouteKind,
    name: &LitStr,
    args: &RouteArgs,
    doc: Option<String>,
) -> TokenStream {
    let start = Ident::new(kind.builder_fn(), Span::call_site());
    let mut out = match kind {
        RouteKind::Tool | RouteKind::Prompt => quote!(#p::#start(#name)),
        RouteKind::Resource => {
            let uri = &args.uri;
            quote!(#p::#start(#uri, #name))
        }
        RouteKind::Template => {
            let template = &args.template;
            quote!(#p::#start(#template, #name))
        }
    };
    if let Some(t) = &args.title {
        out = quote!(#out.title(#t));
    }
    let description = match (&args.description, doc) {
        (Some(d), _) => Some(d.clone()),
        (None, Some(text)) => Some(LitStr::new(&text, name.span())),
        (None, None) => None,
    };
    if let Some(d) = description {
        out = quote!(#out.description(#d));
    }
    if let Some(m) = &args.mime_type {
        out = quote!(#out.mime_type(#m));
    }
    if let Some(size) = &args.size {
        let size = LitInt::new(size.base10_digits(), size.span());
        out = quote!(#out.size(#size));
    }
    if let Some(v) = args.task_support {
        let v = Ident::new(v, Span::call_site());
        out = quote!(#out.task_support(#p::task::TaskSupport::#v));
    }
    if !args.annotations.is_empty() {
        let sets = args.annotations.iter().map(|h| {
            let field = Ident::new(h.field, Span::call_site());
            let value = h.value;
            quote!(hints.#field = ::core::option::Option::Some(#value);)
        });
        out = quote! {
            #out.edit(|tool| {
                let hints = tool
                    .annotations
                    .get_or_insert_with(::core::default::Default::default);
                #(#sets)*
            })
        };
    }
    out
}

/// Names for the parameters of a generated closure: `arg0`, `arg1`, …
pub(crate) fn param_names(sig: &HandlerSig) -> Vec<Ident> {
    (0..sig.params.len())
        .map(|i| format_ident!("arg{i}"))
        .collect()
}

/// `.handler::<_, (R, T1, …, Tn), S>(handler)`: attaches `handler`, naming the
/// handler trait's marker `M` that rustc would otherwise infer.
///
/// The marker is the return type followed by the parameter types: the shape
/// `tessera_server` gives it in the impls of `ToolHandler`, `PromptHandler`
/// and `ResourceHandler`. Naming it selects the one impl that fits, so a
/// mistake is reported as its cause — "the trait bound `Point: JsonSchema` is
/// not satisfied … required for `Args<Point>` to implement
/// `FromRequest<S, ToolCall>`", "future cannot be sent between threads safely",
/// "`Report: IntoToolResult` is not satisfied" — instead of "`fn item:
/// ToolHandler<_, _>` is not satisfied", which names neither the parameter
/// nor the reason. The error points at `span` (the function's name).
pub(crate) fn attach(
    state: &TokenStream,
    sig: &HandlerSig,
    handler: TokenStream,
    span: Span,
) -> TokenStream {
    let ret = match &sig.output {
        Some(t) if contains_impl_trait(t) => quote!(_),
        Some(t) => quote!(#t),
        None => quote!(()),
    };
    let tys = &sig.params;
    quote_spanned! {span=>
        .handler::<_, (#ret, #(#tys,)*), #state>(#handler)
    }
}

/// Whether `impl Trait` appears anywhere in `ty` (such a type cannot be named
/// in the marker).
fn contains_impl_trait(ty: &syn::Type) -> bool {
    fn walk(ts: TokenStream) -> bool {
        ts.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == "impl",
            proc_macro2::TokenTree::Group(g) => walk(g.stream()),
            _ => false,
        })
    }
    walk(quote!(#ty))
}
