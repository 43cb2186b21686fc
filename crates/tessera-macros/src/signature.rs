//! Reading a handler's signature: its receiver, extractor parameters, return
//! type and the server state it needs.

use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Ident, PathArguments, ReturnType, Signature, Type};

/// The most parameters a handler may take (the arities `ToolHandler` is
/// implemented for).
pub(crate) const MAX_PARAMS: usize = 6;

/// How a method receives `self`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// No receiver: a free function or an associated function.
    None,
    /// `&self`.
    Ref,
    /// `self: Arc<Self>`.
    Arc,
}

/// A handler's signature, checked.
pub(crate) struct HandlerSig {
    /// The function's name.
    pub ident: Ident,
    /// How it takes `self`.
    pub receiver: Receiver,
    /// The types of its other parameters, in order: each must be an extractor.
    pub params: Vec<Type>,
    /// The declared return type, if any (`None` is `()`).
    pub output: Option<Type>,
    /// The `X` of a `State<X>` parameter, if there is one.
    pub state: Option<Type>,
}

/// What the function is: a free function (no `self`) or a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FnKind {
    /// A free function under `#[tool]`.
    Free,
    /// A method inside a `#[tools]` impl block.
    Method,
}

/// Checks `sig` and reads what the expansion needs. Every problem found is
/// reported, each at its own span.
///
/// `attr` is the attribute that marks the function (`#[tool]`, …).
pub(crate) fn read(sig: &Signature, kind: FnKind, attr: &str) -> syn::Result<HandlerSig> {
    let what = match kind {
        FnKind::Free => format!("a {attr} function"),
        FnKind::Method => format!("a {attr} method"),
    };
    let mut errors: Vec<syn::Error> = Vec::new();
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            format!(
                "{what} must be an `async fn`: write `async fn {}`",
                sig.ident
            ),
        ));
    }
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(c.span, format!("{what} cannot be `const`")));
    }
    if let Some(u) = &sig.unsafety {
        errors.push(syn::Error::new(
            u.span,
            format!("{what} cannot be `unsafe`"),
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            format!("{what} cannot have an `extern` ABI"),
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            format!(
                "{what} cannot have generic parameters: a handler is registered as one concrete function (put type parameters on the impl block with #[tools] instead, or write a non-generic wrapper)"
            ),
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new(
            v.span(),
            format!("{what} cannot be variadic"),
        ));
    }

    let mut receiver = Receiver::None;
    let mut params = Vec::new();
    let mut state: Option<Type> = None;
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                if kind == FnKind::Free {
                    errors.push(syn::Error::new_spanned(
                        r,
                        format!(
                            "`self` is not allowed in a free {attr} function; for methods, put #[tools] on the impl block and {attr} on each method"
                        ),
                    ));
                    continue;
                }
                match receiver_kind(r, attr) {
                    Ok(k) => receiver = k,
                    Err(e) => errors.push(e),
                }
            }
            FnArg::Typed(pt) => {
                let ty = (*pt.ty).clone();
                if let Type::ImplTrait(_) = ty {
                    errors.push(syn::Error::new_spanned(
                        &ty,
                        format!(
                            "{what} cannot take `impl Trait` parameters: name the extractor type"
                        ),
                    ));
                    continue;
                }
                if let Type::Reference(_) = ty {
                    errors.push(syn::Error::new_spanned(
                        &ty,
                        format!(
                            "{what} cannot take borrowed parameters: each parameter is an owned extractor (`Args<T>`, `RequestContext`, `State<S>`, …)"
                        ),
                    ));
                    continue;
                }
                if let Some(s) = state_of(&ty) {
                    state = Some(s);
                }
                params.push(ty);
            }
        }
    }
    if params.len() > MAX_PARAMS {
        errors.push(syn::Error::new_spanned(
            &sig.inputs,
            format!(
                "{what} takes at most {MAX_PARAMS} extractor parameters (this one takes {}); group arguments into one `Args<T>` struct",
                params.len()
            ),
        ));
    }
    if let Some(e) = combine(errors) {
        return Err(e);
    }
    let output = match &sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) => Some((**ty).clone()),
    };
    Ok(HandlerSig {
        ident: sig.ident.clone(),
        receiver,
        params,
        output,
        state,
    })
}

fn receiver_kind(r: &syn::Receiver, attr: &str) -> syn::Result<Receiver> {
    let hint = format!(
        "a {attr} method takes `&self` or `self: Arc<Self>` (handlers run concurrently, so they cannot take `&mut self` or `self`; use interior mutability such as a Mutex)"
    );
    if r.colon_token.is_some() {
        // `self: Type`: accept `Arc<Self>` (under any path ending in `Arc`) and `&Self`.
        match &*r.ty {
            Type::Path(p) if last_generic(p, "Arc").is_some_and(is_self) => Ok(Receiver::Arc),
            Type::Reference(rf) if rf.mutability.is_none() && is_self(&rf.elem) => {
                Ok(Receiver::Ref)
            }
            other => Err(syn::Error::new_spanned(other, hint)),
        }
    } else if r.reference.is_some() && r.mutability.is_none() {
        Ok(Receiver::Ref)
    } else {
        Err(syn::Error::new_spanned(r, hint))
    }
}

fn is_self(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
}

/// The `T` of `...::Name<T>`, when `ty` is a path type whose last segment is
/// `name` with exactly one type argument.
fn last_generic<'a>(p: &'a syn::TypePath, name: &str) -> Option<&'a Type> {
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    let mut types = a.args.iter().filter_map(|g| match g {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let first = types.next()?;
    types.next().is_none().then_some(first)
}

/// The `X` of a `State<X>` parameter type.
fn state_of(ty: &Type) -> Option<Type> {
    match ty {
        Type::Path(p) if p.qself.is_none() => last_generic(p, "State").cloned(),
        _ => None,
    }
}

/// Folds errors into one (rustc shows each at its own span).
pub(crate) fn combine(errors: impl IntoIterator<Item = syn::Error>) -> Option<syn::Error> {
    errors.into_iter().reduce(|mut a, b| {
        a.combine(b);
        a
    })
}
