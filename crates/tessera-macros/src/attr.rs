//! The arguments of `#[tool(...)]`, `#[prompt(...)]`, `#[resource(...)]` and
//! `#[tools(...)]`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Expr, ExprLit, Lit, LitBool, LitInt, LitStr, Path, Token, Type};

/// What an attribute declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `#[tool]`.
    Tool,
    /// `#[prompt]`.
    Prompt,
    /// `#[resource]` (a fixed resource or a template: the arguments decide).
    Resource,
}

impl Kind {
    /// The attribute, as the user writes it.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool]",
            Kind::Prompt => "#[prompt]",
            Kind::Resource => "#[resource]",
        }
    }

    /// The attribute's name, without `#[` and `]`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }

    /// The kind a marker attribute's last path segment names, if any.
    pub(crate) fn from_marker(ident: &str) -> Option<Kind> {
        match ident {
            "tool" => Some(Kind::Tool),
            "prompt" => Some(Kind::Prompt),
            "resource" => Some(Kind::Resource),
            _ => None,
        }
    }
}

/// Where an attribute sits; it decides which keys are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    /// On a free function.
    FreeFn(Kind),
    /// On a method inside a `#[tools]` impl block.
    Method(Kind),
    /// `#[tools]` on an impl block.
    ImplBlock,
}

impl Site {
    fn keys(self) -> Vec<&'static str> {
        let mut keys = match self {
            Site::FreeFn(k) | Site::Method(k) => match k {
                Kind::Tool => vec![
                    "name",
                    "title",
                    "description",
                    "annotations",
                    "task_support",
                ],
                Kind::Prompt => vec!["name", "title", "description"],
                Kind::Resource => vec![
                    "uri",
                    "template",
                    "name",
                    "title",
                    "description",
                    "mime_type",
                    "size",
                ],
            },
            Site::ImplBlock => Vec::new(),
        };
        if matches!(self, Site::FreeFn(_) | Site::ImplBlock) {
            keys.extend(["crate", "state"]);
        }
        keys
    }

    fn attribute(self) -> &'static str {
        match self {
            Site::FreeFn(k) | Site::Method(k) => k.attribute(),
            Site::ImplBlock => "#[tools]",
        }
    }
}

/// One behaviour hint from `annotations(...)`.
#[derive(Debug, Clone)]
pub(crate) struct Hint {
    /// The `ToolAnnotations` field it sets (`read_only_hint`, …).
    pub field: &'static str,
    /// Its value.
    pub value: bool,
}

/// The parsed arguments.
#[derive(Default)]
pub(crate) struct RouteArgs {
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub annotations: Vec<Hint>,
    pub uri: Option<LitStr>,
    pub template: Option<LitStr>,
    pub mime_type: Option<LitStr>,
    pub size: Option<LitInt>,
    pub krate: Option<Path>,
    pub state: Option<Type>,
    /// `task_support = "optional"`: the `TaskSupport` variant's name.
    pub task_support: Option<&'static str>,
}

const HINTS: &[(&str, &str)] = &[
    ("read_only", "read_only_hint"),
    ("destructive", "destructive_hint"),
    ("idempotent", "idempotent_hint"),
    ("open_world", "open_world_hint"),
];

/// Parses the tokens inside the attribute's parentheses. `span` is where to
/// report a missing argument (the attribute).
pub(crate) fn parse(tokens: TokenStream, site: Site, span: Span) -> syn::Result<RouteArgs> {
    let mut args = RouteArgs::default();
    let mut seen: Vec<String> = Vec::new();
    let keys = site.keys();
    let parser = syn::meta::parser(|meta| {
        // `crate` is a keyword, so it is not an `Ident` to `get_ident`.
        let key = match meta.path.segments.len() {
            1 if meta.path.leading_colon.is_none() => meta.path.segments[0].ident.to_string(),
            _ => String::new(),
        };
        if !keys.contains(&key.as_str()) {
            return Err(unknown_key(&meta, site, &keys));
        }
        if seen.contains(&key) {
            return Err(meta.error(format!("`{key}` is given twice")));
        }
        seen.push(key.clone());
        match key.as_str() {
            "name" => args.name = Some(string(&meta, "name", "echo")?),
            "title" => args.title = Some(string(&meta, "title", "Echo")?),
            "description" => {
                args.description = Some(string(&meta, "description", "Sends the text back")?)
            }
            "annotations" => args.annotations = hints(&meta)?,
            "uri" => args.uri = Some(string(&meta, "uri", "docs://readme")?),
            "template" => args.template = Some(string(&meta, "template", "users://{id}/profile")?),
            "mime_type" => args.mime_type = Some(string(&meta, "mime_type", "text/markdown")?),
            "size" => args.size = Some(integer(&meta, "size", "1024")?),
            "crate" => args.krate = Some(crate_path(&meta)?),
            "state" => args.state = Some(state_type(&meta)?),
            "task_support" => {
                let v = string(&meta, "task_support", "optional")?;
                args.task_support = Some(match v.value().as_str() {
                    "forbidden" => "Forbidden",
                    "optional" => "Optional",
                    "required" => "Required",
                    _ => {
                        return Err(syn::Error::new_spanned(
                            v,
                            "`task_support` is \"forbidden\", \"optional\" or \"required\"",
                        ));
                    }
                });
            }
            _ => unreachable!("keys are checked above"),
        }
        Ok(())
    });
    parser.parse2(tokens)?;
    check(&args, site, span)?;
    Ok(args)
}

/// Checks what can be checked once every argument is read.
fn check(args: &RouteArgs, site: Site, span: Span) -> syn::Result<()> {
    let kind = match site {
        Site::FreeFn(k) | Site::Method(k) => k,
        Site::ImplBlock => return Ok(()),
    };
    match kind {
        Kind::Tool => {
            if let Some(name) = &args.name {
                check_tool_name(&name.value(), name.span())?;
            }
        }
        Kind::Prompt => {
            if let Some(name) = &args.name {
                check_prompt_name(&name.value(), name.span())?;
            }
        }
        Kind::Resource => match (&args.uri, &args.template) {
            (None, None) => {
                return Err(syn::Error::new(
                    span,
                    "#[resource] needs `uri = \"...\"` (one resource) or `template = \"...\"` (an RFC 6570 URI template such as \"users://{id}/profile\")",
                ));
            }
            (Some(_), Some(t)) => {
                return Err(syn::Error::new(
                    t.span(),
                    "give either `uri` (one resource) or `template` (a family of resources), not both",
                ));
            }
            (Some(uri), None) => {
                if uri.value().contains('{') {
                    return Err(syn::Error::new(
                        uri.span(),
                        "this URI has a `{variable}`: for a family of resources write `template = \"...\"` instead of `uri`",
                    ));
                }
            }
            (None, Some(_)) => {
                if let Some(size) = &args.size {
                    return Err(syn::Error::new(
                        size.span(),
                        "`size` describes one resource; a template has none",
                    ));
                }
            }
        },
    }
    Ok(())
}

fn unknown_key(meta: &ParseNestedMeta<'_>, site: Site, keys: &[&str]) -> syn::Error {
    let expected = keys
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let shown = path_text(&meta.path);
    let mut msg = format!(
        "unknown {} argument `{shown}`; expected one of {expected}",
        site.attribute()
    );
    if matches!(site, Site::Method(_)) && (shown == "crate" || shown == "state") {
        msg.push_str(" (give `crate` and `state` on #[tools], for the whole impl block)");
    }
    syn::Error::new_spanned(&meta.path, msg)
}

/// `key = "..."`.
fn string(meta: &ParseNestedMeta<'_>, key: &str, example: &str) -> syn::Result<LitStr> {
    if !meta.input.peek(Token![=]) {
        return Err(meta.error(format!(
            "`{key}` needs a value, as in `{key} = \"{example}\"`"
        )));
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes a string literal, as in `{key} = \"{example}\"`"),
        )),
    }
}

/// `key = 123`.
fn integer(meta: &ParseNestedMeta<'_>, key: &str, example: &str) -> syn::Result<LitInt> {
    if !meta.input.peek(Token![=]) {
        return Err(meta.error(format!("`{key}` needs a value, as in `{key} = {example}`")));
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) if i.base10_parse::<u64>().is_ok() => Ok(i),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes a whole number of bytes, as in `{key} = {example}`"),
        )),
    }
}

/// `annotations(read_only, destructive = false, idempotent, open_world)`.
fn hints(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Hint>> {
    const USAGE: &str = "write the hints in parentheses, as in `annotations(read_only, destructive = false, idempotent, open_world)`";
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(USAGE));
    }
    let mut hints: Vec<Hint> = Vec::new();
    meta.parse_nested_meta(|m| {
        let key = m.path.get_ident().map(ToString::to_string).unwrap_or_default();
        let Some((_, field)) = HINTS.iter().find(|(k, _)| *k == key) else {
            return Err(syn::Error::new_spanned(
                &m.path,
                format!(
                    "unknown tool annotation `{}`; expected one of `read_only`, `destructive`, `idempotent`, `open_world`",
                    path_text(&m.path)
                ),
            ));
        };
        if hints.iter().any(|h| h.field == *field) {
            return Err(m.error(format!("`{key}` is given twice")));
        }
        let value = if m.input.peek(Token![=]) {
            let expr: Expr = m.value()?.parse()?;
            match expr {
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(LitBool { value, .. }),
                    ..
                }) => value,
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        format!("`{key}` takes `true` or `false` (or nothing, meaning `true`)"),
                    ));
                }
            }
        } else {
            true
        };
        hints.push(Hint { field, value });
        Ok(())
    })?;
    Ok(hints)
}

/// `crate = "::tessera::server"` (a string, as in serde) or a bare path.
fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<Path> {
    const USAGE: &str =
        "`crate` takes the path of the tessera-server API, as in `crate = \"::tessera::server\"`";
    if !meta.input.peek(Token![=]) {
        return Err(meta.error(USAGE));
    }
    let value = meta.value()?;
    if value.peek(LitStr) {
        let s: LitStr = value.parse()?;
        s.parse::<Path>()
            .map_err(|_| syn::Error::new(s.span(), USAGE))
    } else {
        value
            .parse::<Path>()
            .map_err(|e| syn::Error::new(e.span(), USAGE))
    }
}

/// `state = MyState` (or `state = "MyState"`).
fn state_type(meta: &ParseNestedMeta<'_>) -> syn::Result<Type> {
    const USAGE: &str =
        "`state` takes the server's state type, as in `state = MyState` (the `S` of `Server<S>`)";
    if !meta.input.peek(Token![=]) {
        return Err(meta.error(USAGE));
    }
    let value = meta.value()?;
    if value.peek(LitStr) {
        let s: LitStr = value.parse()?;
        s.parse::<Type>()
            .map_err(|_| syn::Error::new(s.span(), USAGE))
    } else {
        value
            .parse::<Type>()
            .map_err(|e| syn::Error::new(e.span(), USAGE))
    }
}

/// The rule of `tessera_server::check_tool_name`, checked at compile time:
/// 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
pub(crate) fn check_tool_name(name: &str, span: Span) -> syn::Result<()> {
    let ok = (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(syn::Error::new(
            span,
            format!(
                "invalid tool name {name:?}: a tool name has 1 to 128 characters, each a letter, a digit, `_`, `-` or `.`"
            ),
        ))
    }
}

/// The rule of `tessera_server::check_prompt_name`, checked at compile time:
/// 1 to 128 characters, no control characters, no whitespace at either end.
pub(crate) fn check_prompt_name(name: &str, span: Span) -> syn::Result<()> {
    let chars = name.chars().count();
    let ok =
        (1..=128).contains(&chars) && !name.chars().any(char::is_control) && name.trim() == name;
    if ok {
        Ok(())
    } else {
        Err(syn::Error::new(
            span,
            format!(
                "invalid prompt name {name:?}: a prompt name has 1 to 128 characters, no control characters and no whitespace at either end"
            ),
        ))
    }
}

/// A path as written, without the spaces `to_string` puts between tokens.
fn path_text(p: &Path) -> String {
    quote::quote!(#p).to_string().replace(' ', "")
}
