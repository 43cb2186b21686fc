//! Shared helpers of the integration tests: finding the specification
//! files and validating values against a schema definition.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::OnceLock;

use serde_json::Value;

/// The protocol versions with a schema, oldest first.
pub const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The Tasks extension's schema, treated as one more source.
pub const EXT_TASKS: &str = "ext-tasks";

/// Every schema source: the five versions and the Tasks extension.
pub const SOURCES: [&str; 6] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
    EXT_TASKS,
];

/// The specification directory: `$TESSERA_SPEC_DIR`, else the copy
/// vendored in the repository, `<workspace root>/spec`.
pub fn spec_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TESSERA_SPEC_DIR") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.join("schema").is_dir(),
            "TESSERA_SPEC_DIR={} has no `schema` directory",
            dir.display()
        );
        return dir;
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = workspace.join("spec");
    if !dir.join("schema").is_dir() {
        panic!(
            "MCP specification not found at {} (looked for <workspace root>/spec). \
             Set TESSERA_SPEC_DIR to the directory holding `schema/<version>/schema.json` \
             and `ext-tasks/schema.json`.",
            dir.display()
        );
    }
    dir.canonicalize().unwrap_or(dir)
}

/// The path of a source's `schema.json`.
pub fn schema_path(source: &str) -> PathBuf {
    if source == EXT_TASKS {
        spec_dir().join("ext-tasks/schema.json")
    } else {
        spec_dir().join("schema").join(source).join("schema.json")
    }
}

fn read_json(path: &PathBuf) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// A source's schema document (cached).
pub fn schema(source: &str) -> &'static Value {
    static CACHE: OnceLock<BTreeMap<&'static str, Value>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        SOURCES
            .iter()
            .map(|s| (*s, read_json(&schema_path(s))))
            .collect()
    });
    all.get(source)
        .unwrap_or_else(|| panic!("unknown schema source {source}"))
}

/// The key under which a document keeps its definitions.
pub fn defs_key(source: &str) -> &'static str {
    if schema(source).get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    }
}

/// A source's definitions.
pub fn definitions(source: &str) -> &'static serde_json::Map<String, Value> {
    schema(source)
        .get(defs_key(source))
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("{source}: no definitions"))
}

/// Whether `source` defines `def`.
pub fn has_definition(source: &str, def: &str) -> bool {
    definitions(source).contains_key(def)
}

/// A validator for one definition: the whole document with its root
/// replaced by a reference to the definition, so internal references
/// resolve. Formats are checked.
pub fn validator(source: &str, def: &str) -> jsonschema::Validator {
    assert!(
        has_definition(source, def),
        "{source} has no definition {def}"
    );
    let mut doc = schema(source).clone();
    let key = defs_key(source);
    doc.as_object_mut()
        .unwrap()
        .insert("$ref".into(), Value::String(format!("#/{key}/{def}")));
    jsonschema::options()
        .should_validate_formats(true)
        .build(&doc)
        .unwrap_or_else(|e| panic!("cannot build a validator for {source} {def}: {e}"))
}

/// Validates `value` against `def` of `source`, returning every error.
/// Validators are built once per thread and definition.
pub fn validation_errors(source: &str, def: &str, value: &Value) -> Vec<String> {
    thread_local! {
        static VALIDATORS: RefCell<HashMap<(String, String), Rc<jsonschema::Validator>>> =
            RefCell::new(HashMap::new());
    }
    let v = VALIDATORS.with(|cache| {
        cache
            .borrow_mut()
            .entry((source.to_owned(), def.to_owned()))
            .or_insert_with(|| Rc::new(validator(source, def)))
            .clone()
    });
    v.iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Panics unless `value` is valid against `def` of `source`.
pub fn assert_valid(source: &str, def: &str, value: &Value) {
    let errors = validation_errors(source, def, value);
    assert!(
        errors.is_empty(),
        "{source} {def}: invalid:\n  {}\nvalue: {}",
        errors.join("\n  "),
        serde_json::to_string_pretty(value).unwrap()
    );
}

/// Panics if `value` is valid against `def` of `source`.
pub fn assert_invalid(source: &str, def: &str, value: &Value) {
    assert!(
        !validation_errors(source, def, value).is_empty(),
        "{source} {def}: unexpectedly valid: {value}"
    );
}
