//! Doc comments as descriptions.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the `///` (or `/** */`) doc comments among `attrs`, with the
/// common indentation removed and blank lines trimmed at both ends; `None`
/// when there is no doc text.
///
/// Doc attributes whose value is not a string literal (such as
/// `#[doc = include_str!("...")]`) are skipped: their text is not known when
/// the macro runs.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        if let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        {
            lines.extend(s.value().split('\n').map(|l| l.trim_end().to_owned()));
        }
    }
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_else(|| l.trim_start()))
        .collect();
    let text = lines.join("\n");
    let text = text.trim_matches('\n');
    if text.trim().is_empty() {
        None
    } else {
        Some(text.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn text(attrs: Vec<Attribute>) -> Option<String> {
        doc_text(&attrs)
    }

    #[test]
    fn line_comments_keep_paragraphs() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Sends the text back."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Second paragraph,"]),
            parse_quote!(#[doc = "   indented more."]),
        ];
        assert_eq!(
            text(attrs).as_deref(),
            Some("Sends the text back.\n\nSecond paragraph,\n  indented more.")
        );
    }

    #[test]
    fn block_comments_lose_their_indentation() {
        let attrs: Vec<Attribute> =
            vec![parse_quote!(#[doc = "\n    Line one.\n    Line two.\n    "])];
        assert_eq!(text(attrs).as_deref(), Some("Line one.\nLine two."));
    }

    #[test]
    fn no_doc_is_none() {
        assert_eq!(text(vec![parse_quote!(#[inline])]), None);
        assert_eq!(text(vec![parse_quote!(#[doc = "  "])]), None);
        assert_eq!(
            text(vec![parse_quote!(#[doc = include_str!("x.md")])]),
            None
        );
    }
}
