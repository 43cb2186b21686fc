//! Compile-time behaviour of the macros, checked with trybuild: what must
//! compile (`tests/pass`) and the errors a misuse gets (`tests/ui`, each
//! `.rs` beside the `.stderr` it must produce).
//!
//! The `.stderr` files depend on the exact compiler version; regenerate them
//! with `TRYBUILD=overwrite cargo test -p tessera-macros --test it ui` and read
//! the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/pass/*.rs");
    t.compile_fail("tests/ui/*.rs");
}
