//! Links the release `tessera` smaller on glibc Linux.
//!
//! - Packed relative relocations. A position-independent executable carries
//!   one 24-byte `R_X86_64_RELATIVE` entry per pointer in its read-only data
//!   (vtables, string tables): about 0.9 MB for `tessera`.
//!   `-z pack-relative-relocs` (GNU ld 2.38, LLD 15, mold) writes them as a
//!   `DT_RELR` bitmap of a few kilobytes instead. The loader needs glibc 2.36;
//!   the linker records that as a `GLIBC_ABI_DT_RELR` version need, so an
//!   older glibc refuses to start the binary with a message instead of
//!   crashing. Not every linker knows the option (GNU gold fails the link),
//!   so an empty program is first linked with it and run, by the rustc,
//!   linker and flags of this build; if that fails the relocations are left
//!   unpacked, and the build goes on.
//! - Identical code folding, when the linker is rustc's own LLD (the default
//!   for `x86_64-unknown-linux-gnu` from Rust 1.90 on, unless a linker is
//!   configured): functions whose machine code came out the same, such as
//!   generic code instantiated for types of one layout, are kept once.
//! - Start-up code first, also with rustc's LLD, for the `tessera` binary:
//!   `link/start-up.order` lists the functions `tessera serve --stdio` runs
//!   from exec to its first answers (then those one HTTP session adds), and
//!   `--symbol-ordering-file` places them together at the front of `.text`.
//!   The kernel maps text around each page fault (64 KB and more), so with
//!   those ~1,600 functions spread over 22 MB a stdio server's RSS was
//!   mostly untouched neighbours (issue 27). The names carry hashes that
//!   change with the code, the dependencies and the compiler; LLD skips
//!   the names it does not find (`--no-warn-symbol-ordering`), so a stale
//!   file costs RSS, never correctness. `bench/start_order.sh` regenerates
//!   it and says how stale it is. The names are the release profile's: a
//!   `profiling` build names its functions differently (cargo's
//!   `-C metadata` hashes the profile's debuginfo and strip settings), so
//!   there most of the list misses, harmlessly.
//!
//! Debug and test builds are linked as before. `PROFILE` is `release` for
//! every profile that inherits from release (such as `profiling`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let order = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link")
        .join("start-up.order");
    let release = env::var("PROFILE").is_ok_and(|p| p == "release");
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let gnu = env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "gnu");
    if !(release && linux && gnu) {
        return;
    }
    if links_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    } else {
        println!(
            "cargo:warning=the linker refused -z pack-relative-relocs (or the program would not start): relative relocations left unpacked"
        );
    }
    println!("cargo:rerun-if-changed={}", order.display());
    if links_with_rusts_lld() {
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
        // `-Wl,` splits at commas, so a path with one is left out.
        let path = order.display().to_string();
        if order.is_file() && !path.contains(',') {
            println!("cargo:rustc-link-arg-bin=tessera=-Wl,--symbol-ordering-file={path}");
            println!("cargo:rustc-link-arg-bin=tessera=-Wl,--no-warn-symbol-ordering");
        }
    }
}

/// Whether rustc links this build with its bundled LLD: the target where that
/// is the default, a rustc that has the default, and no linker chosen by
/// configuration or flags (GNU ld has no `--icf` and would fail the link).
fn links_with_rusts_lld() -> bool {
    if env::var("TARGET").ok().as_deref() != Some("x86_64-unknown-linux-gnu") {
        return false;
    }
    if env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker") || flags.contains("fuse-ld") {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let Ok(out) = Command::new(rustc).arg("-V").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}

/// Whether an empty program linked with `-z pack-relative-relocs`, by this
/// build's rustc with its flags and linker, links (and runs, when built for
/// this machine: the loader knows `DT_RELR`).
fn links_packed_relocations() -> bool {
    let Some(dir) = env::var_os("OUT_DIR").map(|d| PathBuf::from(d).join("relr-probe")) else {
        return false;
    };
    let source = dir.join("probe.rs");
    let program = dir.join("probe");
    let written =
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&source, "fn main() {}\n"));
    let packs = written.is_ok() && probe_links_and_runs(&source, &program);
    // What a failed link leaves behind too.
    let _ = std::fs::remove_dir_all(&dir);
    packs
}

/// [`links_packed_relocations`] for the empty program `source`, linked to `program`.
fn probe_links_and_runs(source: &std::path::Path, program: &std::path::Path) -> bool {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let mut cmd = Command::new(rustc);
    cmd.arg(source).arg("-o").arg(program);
    if let Ok(target) = env::var("TARGET") {
        cmd.arg("--target").arg(target);
    }
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        cmd.arg("-C")
            .arg(format!("linker={}", linker.to_string_lossy()));
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    cmd.arg("-C").arg("link-arg=-Wl,-z,pack-relative-relocs");
    let linked = cmd.output().is_ok_and(|o| o.status.success());
    linked
        && (env::var("TARGET").ok() != env::var("HOST").ok()
            || Command::new(program).status().is_ok_and(|s| s.success()))
}
