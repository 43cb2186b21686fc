//! placeholder
#![forbid(unsafe_code)]

mod attr;
mod crate_path;
mod doc;
mod free_fn;
mod impl_block;
mod route;
mod signature;

use proc_macro::TokenStream;

use attr::Kind;

/// `#[tool]`
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    free_fn::expand(Kind::Tool, args.into(), item.into()).into()
}

/// `#[prompt]`
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    free_fn::expand(Kind::Prompt, args.into(), item.into()).into()
}

/// `#[resource]`
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    free_fn::expand(Kind::Resource, args.into(), item.into()).into()
}

/// `#[tools]`
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    impl_block::expand(args.into(), item.into()).into()
}
