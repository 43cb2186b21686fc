//! A guide to Tessera, to read top to bottom. Every example in it is
//! compiled by the test suite.
//!
//! 1. [`concepts`]: eras, sessions and multi round-trip requests.
//! 2. [`server`]: tools, resources, prompts and extractors.
//! 3. [`middleware`]: layers over every request (tracing, limits, refusals).
//! 4. [`client`]: connecting to any server and calling it.
//! 5. [`http`]: Streamable HTTP, on its own or inside axum.
//! 6. [`authorization`]: OAuth 2.1 on both sides.
//! 7. [`tasks`]: tool calls that run long, in both designs.
//! 8. [`extensions`]: adding to the protocol; skills and MCP Apps.
//! 9. [`scaling`]: several instances behind one endpoint, their state in
//!    Redis (the `redis` feature).
//! 10. [`limits`]: every bound on what a peer can hold or send, its default
//!     and the option that changes it.
//!
//! The repository's `examples/` folder holds the same ideas as programs
//! (`cargo run -p tessera-examples --example NAME`).

#[doc = include_str!("../guide/concepts.md")]
pub mod concepts {}

#[doc = include_str!("../guide/server.md")]
pub mod server {}

#[doc = include_str!("../guide/middleware.md")]
pub mod middleware {}

#[doc = include_str!("../guide/client.md")]
pub mod client {}

#[doc = include_str!("../guide/http.md")]
pub mod http {}

#[doc = include_str!("../guide/authorization.md")]
pub mod authorization {}

#[doc = include_str!("../guide/tasks.md")]
pub mod tasks {}

#[doc = include_str!("../guide/extensions.md")]
pub mod extensions {}

#[doc = include_str!("../guide/scaling.md")]
pub mod scaling {}

#[doc = include_str!("../guide/limits.md")]
pub mod limits {}

#[cfg(test)]
mod links {
    //! The manual's relative links (README, CONTRIBUTING, `docs/`, the guide)
    //! point at files of the repository.

    use std::path::{Path, PathBuf};

    /// The relative link targets of a markdown text: `](target)` without a
    /// scheme, an anchor-only target or a rustdoc path (`crate::…`).
    fn relative_targets(text: &str) -> Vec<&str> {
        text.match_indices("](")
            .filter_map(|(at, _)| {
                let rest = &text[at + 2..];
                let end = rest.find(')')?;
                let target = rest[..end].split('#').next().unwrap_or_default();
                let external = target.contains("://") || target.starts_with("mailto:");
                (!target.is_empty() && !external && !target.contains("::")).then_some(target)
            })
            .collect()
    }

    fn markdown_files(root: &Path) -> Vec<PathBuf> {
        let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
        for dir in ["docs", "crates/tessera/guide"] {
            let mut found: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap_or_else(|e| panic!("{dir}: {e}"))
                .map(|e| e.expect("a directory entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect();
            found.sort();
            files.extend(found);
        }
        files
    }

    #[test]
    fn relative_links_reach_files_of_the_repository() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut broken = Vec::new();
        let mut checked = 0;
        for file in markdown_files(&root) {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let dir = file.parent().expect("a file has a directory");
            for target in relative_targets(&text) {
                checked += 1;
                if !dir.join(target).exists() {
                    broken.push(format!("{} -> {target}", file.display()));
                }
            }
        }
        assert!(
            checked > 20,
            "only {checked} links found: is the scan broken?"
        );
        assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    }

    #[test]
    fn the_scan_reads_relative_links_only() {
        let text = "[a](docs/x.md) [b](https://e.org/y) [c](#top) [d](crate::server) \
                    [e](../f.md#part) [g](mailto:x@e.org)";
        assert_eq!(relative_targets(text), ["docs/x.md", "../f.md"]);
    }
}
