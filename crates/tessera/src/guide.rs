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
//! 10. [`telemetry`]: OpenTelemetry traces and metrics (the `telemetry`
//!     feature), OTLP export and Prometheus from the `tessera` binary.
//! 11. [`limits`]: every bound on what a peer can hold or send, its default
//!     and the option that changes it.
//! 12. [`cli`]: the `tessera` command: serving the reference server, the
//!     client verbs, exit codes, load tests.
//! 13. [`inspector`]: `tessera inspect`, a web inspector, and `tessera replay`.
//! 14. [`proxy`]: `tessera proxy`, bridging transports and eras, and a gateway
//!     in front of several servers with its configuration file.
//! 15. [`examples`]: the repository's runnable programs.

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

#[doc = include_str!("../guide/telemetry.md")]
pub mod telemetry {}

#[doc = include_str!("../guide/limits.md")]
pub mod limits {}

#[doc = include_str!("../guide/cli.md")]
pub mod cli {}

#[doc = include_str!("../guide/inspector.md")]
pub mod inspector {}

#[doc = include_str!("../guide/proxy.md")]
pub mod proxy {}

#[doc = include_str!("../guide/examples.md")]
pub mod examples {}

#[cfg(test)]
mod links {
    //! The manual's relative links (README, CONTRIBUTING, `docs/`, the guide)
    //! point at files of the repository, and `docs/` keeps contributor
    //! pages only.

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
            // rustdoc renders the guide's chapters as modules: a file path
            // there is broken on docs.rs, whatever it reaches on disk.
            let in_guide = dir.ends_with("guide");
            for target in relative_targets(&text) {
                checked += 1;
                if in_guide {
                    broken.push(format!(
                        "{} -> {target} (a chapter links with crate::guide::… paths)",
                        file.display()
                    ));
                } else if !dir.join(target).exists() {
                    broken.push(format!("{} -> {target}", file.display()));
                }
            }
        }
        // README, CONTRIBUTING and docs/ hold about twenty relative links.
        assert!(
            checked > 10,
            "only {checked} links found: is the scan broken?"
        );
        assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    }

    #[test]
    fn docs_holds_contributor_pages_only() {
        // The user manual is the guide; a page added to `docs/` is either
        // contributor material (add it here) or belongs in the guide.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut pages: Vec<String> = std::fs::read_dir(root.join("docs"))
            .expect("docs/ exists")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .map(|p| {
                p.file_name()
                    .expect("a file name")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        pages.sort();
        assert_eq!(pages, ["layout.md", "testing.md"]);
    }

    #[test]
    fn the_scan_reads_relative_links_only() {
        let text = "[a](docs/x.md) [b](https://e.org/y) [c](#top) [d](crate::server) \
                    [e](../f.md#part) [g](mailto:x@e.org)";
        assert_eq!(relative_targets(text), ["docs/x.md", "../f.md"]);
    }
}
