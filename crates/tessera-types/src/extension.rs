//! Extensions: optional protocol additions named by an identifier
//! (`io.modelcontextprotocol/skills`, `io.modelcontextprotocol/ui`,
//! `io.modelcontextprotocol/tasks`, or a vendor's own `com.example/thing`).
//!
//! Each side declares the extensions it supports in
//! `capabilities.extensions`, a map from identifier to a settings object
//! (`{}` when the extension has no settings). Servers declare theirs in the
//! `initialize` result (legacy versions) or in `server/discover`
//! (2026-07-28); clients in `initialize` (legacy) or in the capabilities
//! they send with every request's `_meta` (2026-07-28).
//!
//! An extension's settings are a Rust type implementing [`ExtensionSettings`]:
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tessera_types::{ExtensionSettings, ServerCapabilities};
//!
//! #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
//! #[serde(rename_all = "camelCase")]
//! struct Weather {
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     units: Option<String>,
//! }
//!
//! impl ExtensionSettings for Weather {
//!     const ID: &'static str = "com.example/weather";
//! }
//!
//! let mut caps = ServerCapabilities::default();
//! caps.declare_extension(&Weather { units: Some("metric".into()) });
//! let back: Weather = caps.extension_settings().unwrap().unwrap();
//! assert_eq!(back.units.as_deref(), Some("metric"));
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::JsonObject;
use crate::capabilities::{CapabilityMap, ClientCapabilities, ServerCapabilities};

/// The typed settings of one extension, and its identifier.
pub trait ExtensionSettings: Serialize + DeserializeOwned {
    /// The extension identifier, e.g. `io.modelcontextprotocol/skills`.
    const ID: &'static str;
}

/// A peer declared an extension with settings that do not decode.
#[derive(Debug)]
pub struct ExtensionSettingsError {
    /// The extension identifier.
    pub id: &'static str,
    /// Why the settings do not decode.
    pub source: serde_json::Error,
}

impl std::fmt::Display for ExtensionSettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the settings of extension {} are invalid: {}",
            self.id, self.source
        )
    }
}

impl std::error::Error for ExtensionSettingsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Encodes settings as the object that goes under the identifier (a
/// settings type that does not serialise to an object declares `{}`).
pub fn settings_object<E: ExtensionSettings>(settings: &E) -> JsonObject {
    match serde_json::to_value(settings) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// The settings an extension declares under its identifier in
/// `capabilities.extensions`: made from its typed [`ExtensionSettings`], or
/// empty (`{}`). What a server or client extension returns from its
/// `settings` method.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeclaredSettings(JsonObject);

impl DeclaredSettings {
    /// The settings `settings` serialize to.
    pub fn of<E: ExtensionSettings>(settings: &E) -> Self {
        DeclaredSettings(settings_object(settings))
    }

    /// The object declared under the identifier.
    pub fn into_object(self) -> JsonObject {
        self.0
    }
}

fn lookup<E: ExtensionSettings>(
    map: Option<&CapabilityMap>,
) -> Option<Result<E, ExtensionSettingsError>> {
    // Read in place: the settings object is not copied.
    let settings = map?.get(E::ID)?;
    Some(E::deserialize(settings).map_err(|source| ExtensionSettingsError { id: E::ID, source }))
}

impl ServerCapabilities {
    /// Declares extension `E` with `settings` (replacing an earlier
    /// declaration of it).
    pub fn declare_extension<E: ExtensionSettings>(&mut self, settings: &E) {
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(E::ID.to_owned(), settings_object(settings));
    }

    /// The settings of extension `E`, if it is declared.
    pub fn extension_settings<E: ExtensionSettings>(
        &self,
    ) -> Option<Result<E, ExtensionSettingsError>> {
        lookup(self.extensions.as_ref())
    }
}

impl ClientCapabilities {
    /// Declares extension `E` with `settings` (replacing an earlier
    /// declaration of it).
    pub fn declare_extension<E: ExtensionSettings>(&mut self, settings: &E) {
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(E::ID.to_owned(), settings_object(settings));
    }

    /// The settings of extension `E`, if it is declared.
    pub fn extension_settings<E: ExtensionSettings>(
        &self,
    ) -> Option<Result<E, ExtensionSettingsError>> {
        lookup(self.extensions.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Demo {
        #[serde(default)]
        level: u32,
    }

    impl ExtensionSettings for Demo {
        const ID: &'static str = "com.example/demo";
    }

    #[test]
    fn declare_and_read_both_roles() {
        let mut s = ServerCapabilities::default();
        assert!(s.extension_settings::<Demo>().is_none());
        s.declare_extension(&Demo { level: 3 });
        assert_eq!(s.extension_settings::<Demo>().unwrap().unwrap().level, 3);
        let raw = serde_json::to_value(&s).unwrap();
        assert_eq!(
            raw,
            json!({"extensions": {"com.example/demo": {"level": 3}}})
        );
        let back: ClientCapabilities = serde_json::from_value(raw).unwrap();
        assert!(back.has_extension(Demo::ID));
        assert_eq!(back.extension_settings::<Demo>().unwrap().unwrap().level, 3);

        let mut c = ClientCapabilities::default();
        c.declare_extension(&Demo::default());
        assert!(c.has_extension(Demo::ID));
        assert_eq!(
            c.extension_settings::<Demo>().unwrap().unwrap(),
            Demo { level: 0 }
        );
    }

    #[test]
    fn bad_settings_are_an_error_that_names_the_extension() {
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"extensions": {"com.example/demo": {"level": "high"}}}))
                .unwrap();
        let err = caps.extension_settings::<Demo>().unwrap().unwrap_err();
        assert!(err.to_string().contains("com.example/demo"));
        let none: ServerCapabilities = serde_json::from_value(json!({"extensions": {}})).unwrap();
        assert!(none.extension_settings::<Demo>().is_none());
    }
}
