//! The skills path resolver (issue 32 item 6): a skill file is opened
//! below its root one path segment at a time without following a link, and
//! only a regular file is read. Whatever segments are asked for — `..`,
//! empty ones, links to files and directories outside the root, a link that
//! stays inside, a FIFO, a directory — a read either fails or returns one of
//! the regular files inside the root, within the size limit, and never
//! blocks.
//!
//! The resolver is `tessera-server`'s crate-private `skills::confined`
//! module, compiled here from its source file (it uses only std and nix).
#![no_main]

#[path = "../../crates/tessera-server/src/skills/confined.rs"]
#[allow(dead_code)]
mod confined;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// What every regular file inside the root starts with.
const INSIDE: &[u8] = b"inside:";
/// What every file outside the root holds.
const SECRET: &[u8] = b"SECRET";

/// A skill root with every kind of entry a resolver must refuse, beside
/// a directory outside it holding the secret. Made once per process.
fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let base =
            std::env::temp_dir().join(format!("tessera-fuzz-skill-paths-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let outside = base.join("outside");
        let root = base.join("root");
        fs::create_dir_all(outside.join("dir")).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        fs::write(outside.join("dir/secret.txt"), SECRET).unwrap();
        fs::create_dir_all(root.join("a/b/c")).unwrap();
        fs::write(root.join("a/SKILL.md"), b"inside: ---\nname: a\n---\n").unwrap();
        fs::write(root.join("a/b/file.txt"), b"inside: a file").unwrap();
        fs::write(root.join("a/b/c/deep.txt"), b"inside: deeper").unwrap();
        fs::write(
            root.join("a/b/big.txt"),
            [b"inside:".as_slice(), &[b'x'; 4096]].concat(),
        )
        .unwrap();
        symlink("../../outside/secret.txt", root.join("a/link_file")).unwrap();
        symlink("../../outside/dir", root.join("a/link_dir")).unwrap();
        symlink(outside.join("secret.txt"), root.join("a/abs_link")).unwrap();
        symlink("b/file.txt", root.join("a/inner_link")).unwrap();
        symlink("a", root.join("dir_link")).unwrap();
        symlink("missing", root.join("a/dangling")).unwrap();
        symlink("loop", root.join("a/loop")).unwrap();
        nix::unistd::mkfifo(&root.join("a/fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        root
    })
}

/// Names the fuzzer picks from (a byte each), beside free text.
const NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "SKILL.md",
    "file.txt",
    "deep.txt",
    "big.txt",
    "link_file",
    "link_dir",
    "abs_link",
    "inner_link",
    "dir_link",
    "dangling",
    "loop",
    "fifo",
    "secret.txt",
    "dir",
    "..",
    ".",
    "",
    "outside",
    "root",
];

fuzz_target!(|data: &[u8]| {
    let Some((&limit, rest)) = data.split_first() else {
        return;
    };
    // Segments: a byte below 0x80 picks a name; a run of other bytes up to
    // `/` is free text (lossy UTF-8, may hold `/` or NUL after decoding).
    let mut rel = Vec::new();
    let mut i = 0;
    while i < rest.len() && rel.len() < 8 {
        let b = rest[i];
        if b < 0x80 {
            rel.push(NAMES[usize::from(b) % NAMES.len()].to_owned());
            i += 1;
        } else {
            let end = rest[i..]
                .iter()
                .position(|&c| c == b'/')
                .map_or(rest.len(), |p| i + p);
            rel.push(String::from_utf8_lossy(&rest[i + 1..end]).into_owned());
            i = end + 1;
        }
    }
    let limit = u64::from(limit) * 32;
    match confined::read(root(), &rel, limit) {
        Ok(bytes) => {
            assert!(
                bytes.starts_with(INSIDE),
                "{rel:?} read a file outside the root or a link: {bytes:?}"
            );
            assert!(
                bytes.len() as u64 <= limit,
                "{rel:?}: {} bytes over the limit {limit}",
                bytes.len()
            );
            assert!(
                !rel.iter().any(|s| s.contains("link")
                    || s == ".."
                    || s == "."
                    || s.is_empty()
                    || s == "dangling"
                    || s == "loop"),
                "{rel:?} was resolved through a link or a relative segment"
            );
        }
        Err(_) => {}
    }
});
