//! Client and server capabilities.
//!
//! Legacy versions exchange them once in `initialize`; 2026-07-28 sends the
//! client's with every request (`_meta`) and the server's in
//! `server/discover`. A present sub-object means "supported"; its members
//! refine the support.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::version::{Era, ProtocolVersion};

/// Settings per capability or extension name.
pub type CapabilityMap = BTreeMap<String, JsonObject>;

/// What a client supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<CapabilityMap>,
    /// Present if the client can list roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client can sample from an LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client supports elicitation. Since 2025-06-18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Task-augmented requests the client accepts. 2025-11-25 only (in
    /// 2026-07-28 tasks are the `io.modelcontextprotocol/tasks` extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ClientTasksCapability>,
    /// Supported extensions by identifier, with their settings. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<CapabilityMap>,
    /// Members this version of Tessera does not model, kept as the peer or
    /// the user declared them, so that nothing is lost on a round trip. A
    /// modelled member whose value does not fit its type also lands here when
    /// read with [`ClientCapabilities::from_object`]. Never put a modelled name here
    /// while its field is set: it would be written twice.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ClientCapabilities {
    /// Reads a capabilities object as a server receives it, never failing:
    /// a modelled member whose value does not fit its type (`"roots": true`)
    /// is kept as sent in [`other`](Self::other), where
    /// [`declares`](Self::declares) still finds it.
    pub fn from_object(raw: &JsonObject) -> Self {
        lenient(raw, |c: &mut Self| &mut c.other)
    }

    /// Whether the member `name` (`"roots"`, `"sampling"`, `"elicitation"`,
    /// or any other) is declared, modelled or not.
    pub fn declares(&self, name: &str) -> bool {
        let modelled = match name {
            "experimental" => self.experimental.is_some(),
            "roots" => self.roots.is_some(),
            "sampling" => self.sampling.is_some(),
            "elicitation" => self.elicitation.is_some(),
            "tasks" => self.tasks.is_some(),
            "extensions" => self.extensions.is_some(),
            _ => false,
        };
        modelled || self.other.contains_key(name)
    }

    /// Whether the experimental capability `name` is declared.
    pub fn has_experimental(&self, name: &str) -> bool {
        self.experimental
            .as_ref()
            .is_some_and(|e| e.contains_key(name))
    }

    /// Whether the extension `id` is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }

    /// Declares the extension `id` with empty settings.
    pub fn with_extension(mut self, id: impl Into<String>) -> Self {
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(id.into(), JsonObject::new());
        self
    }
}

/// The client's `roots` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client notifies changes of the root list.
    /// 2024-11-05 through 2025-11-25 (the notification is gone in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The client's `sampling` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// Present if the client honours `includeContext` (soft-deprecated).
    /// Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present if the client supports `tools` and `toolChoice`. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The client's `elicitation` capability. An empty object means form mode only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Present if form mode is supported. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present if URL mode is supported. Since 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ElicitationCapability {
    /// Whether form mode is supported (also when neither mode is named).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// The client's `tasks` capability. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTasksCapability {
    /// Present if the client supports `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Present if the client supports `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which server-to-client requests may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ClientTaskRequests>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// Server-to-client requests a client accepts as tasks. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTaskRequests {
    /// Sampling requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingTaskRequests>,
    /// Elicitation requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationTaskRequests>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// `tasks.requests.sampling` of the client capabilities. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingTaskRequests {
    /// Present if `sampling/createMessage` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_message: Option<JsonObject>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// `tasks.requests.elicitation` of the client capabilities. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationTaskRequests {
    /// Present if `elicitation/create` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<JsonObject>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// What a server supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<CapabilityMap>,
    /// Present if the server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Present if the server offers argument completion. Since 2025-03-26.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Task support. 2025-11-25 only (in 2026-07-28 tasks are the
    /// `io.modelcontextprotocol/tasks` extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ServerTasksCapability>,
    /// Supported extensions by identifier, with their settings. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<CapabilityMap>,
    /// Members this version of Tessera does not model, kept as the peer or
    /// the user declared them, so that nothing is lost on a round trip. A
    /// modelled member whose value does not fit its type also lands here when
    /// read with [`ServerCapabilities::from_object`]. Never put a modelled name here
    /// while its field is set: it would be written twice.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ServerCapabilities {
    /// Reads a capabilities object as a client receives it, never failing:
    /// a modelled member whose value does not fit its type (`"tools": true`)
    /// is kept as sent in [`other`](Self::other), where
    /// [`declares`](Self::declares) still finds it.
    pub fn from_object(raw: &JsonObject) -> Self {
        lenient(raw, |c: &mut Self| &mut c.other)
    }

    /// Whether the member `name` (`"tools"`, `"logging"`, `"resources"`, or
    /// any other) is declared, modelled or not.
    pub fn declares(&self, name: &str) -> bool {
        let modelled = match name {
            "experimental" => self.experimental.is_some(),
            "logging" => self.logging.is_some(),
            "completions" => self.completions.is_some(),
            "prompts" => self.prompts.is_some(),
            "resources" => self.resources.is_some(),
            "tools" => self.tools.is_some(),
            "tasks" => self.tasks.is_some(),
            "extensions" => self.extensions.is_some(),
            _ => false,
        };
        modelled || self.other.contains_key(name)
    }

    /// These capabilities as declared to a peer speaking `version`: the
    /// `tasks` member exists in 2025-11-25 only (it arrived then, and
    /// 2026-07-28 replaces it with the `io.modelcontextprotocol/tasks`
    /// extension). Everything else is kept as is.
    pub fn for_version(&self, version: ProtocolVersion) -> Self {
        let mut caps = self.clone();
        let has_tasks = version.era() == Era::Legacy && version >= ProtocolVersion::V2025_11_25;
        if !has_tasks {
            caps.tasks = None;
            caps.other.remove("tasks");
        }
        caps
    }

    /// Whether the extension `id` is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }

    /// Declares the extension `id` with empty settings.
    pub fn with_extension(mut self, id: impl Into<String>) -> Self {
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(id.into(), JsonObject::new());
        self
    }
}

/// The server's `prompts` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server notifies changes of the prompt list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The server's `resources` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether clients may subscribe to resource updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server notifies changes of the resource list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The server's `tools` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server notifies changes of the tool list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The server's `tasks` capability. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTasksCapability {
    /// Present if the server supports `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Present if the server supports `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which client-to-server requests may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ServerTaskRequests>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// Client-to-server requests a server accepts as tasks. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTaskRequests {
    /// Tool requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsTaskRequests>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// `tasks.requests.tools` of the server capabilities. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsTaskRequests {
    /// Present if `tools/call` may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<JsonObject>,
    /// Members this version of Tessera does not model, kept as declared.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// `raw` as `T`; when it does not fit, the members that do are read and the
/// others are kept as sent in `T`'s map of unmodelled members.
fn lenient<T: DeserializeOwned + Default>(
    raw: &JsonObject,
    other: impl Fn(&mut T) -> &mut JsonObject,
) -> T {
    // The common case borrows `raw`: no copy of the object.
    if let Ok(t) = T::deserialize(raw) {
        return t;
    }
    let mut fitting = JsonObject::new();
    let mut misfits = Vec::new();
    for (k, v) in raw {
        let mut one = JsonObject::new();
        one.insert(k.clone(), v.clone());
        if T::deserialize(&one).is_ok() {
            fitting.insert(k.clone(), v.clone());
        } else {
            misfits.push((k.clone(), v.clone()));
        }
    }
    let mut t = T::deserialize(&fitting).unwrap_or_default();
    other(&mut t).extend(misfits);
    t
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(o) => o,
            _ => unreachable!("an object literal"),
        }
    }

    #[test]
    fn unknown_members_survive_a_round_trip() {
        let raw = json!({
            "tools": {"listChanged": true, "streaming": true},
            "logging": {},
            "quantum": true,
            "com.example/holograms": {"depth": 3},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        });
        let caps: ServerCapabilities = serde_json::from_value(raw.clone()).unwrap();
        // Known members are typed...
        assert_eq!(caps.tools.as_ref().unwrap().list_changed, Some(true));
        assert!(caps.logging.is_some());
        assert!(caps.has_extension("io.modelcontextprotocol/tasks"));
        // ...unknown ones are kept, top level only.
        assert_eq!(caps.other.len(), 2);
        assert_eq!(caps.other["quantum"], json!(true));
        assert!(caps.declares("quantum") && caps.declares("tools"));
        assert!(!caps.declares("prompts"));
        // Unknown members of a modelled sub-object are kept there.
        assert_eq!(caps.tools.as_ref().unwrap().other["streaming"], json!(true));
        assert_eq!(serde_json::to_value(&caps).unwrap(), raw);

        let raw = json!({
            "roots": {"listChanged": true},
            "elicitation": {"url": {}},
            "com.example/x": [1, 2]
        });
        let caps: ClientCapabilities = serde_json::from_value(raw.clone()).unwrap();
        assert!(caps.elicitation.as_ref().unwrap().supports_url());
        assert_eq!(caps.other["com.example/x"], json!([1, 2]));
        assert!(caps.declares("com.example/x") && caps.declares("roots"));
        assert_eq!(serde_json::to_value(&caps).unwrap(), raw);
    }

    #[test]
    fn misfitting_members_are_kept_as_sent() {
        let raw = obj(json!({"tools": true, "logging": {}, "x": 1}));
        assert!(serde_json::from_value::<ServerCapabilities>(Value::Object(raw.clone())).is_err());
        let caps = ServerCapabilities::from_object(&raw);
        assert!(caps.logging.is_some() && caps.tools.is_none());
        assert!(caps.declares("tools"));
        assert_eq!(caps.other["tools"], json!(true));
        assert_eq!(serde_json::to_value(&caps).unwrap(), Value::Object(raw));

        let raw = obj(json!({"roots": "yes", "sampling": {}}));
        let caps = ClientCapabilities::from_object(&raw);
        assert!(caps.sampling.is_some() && caps.roots.is_none());
        assert!(caps.declares("roots") && !caps.declares("elicitation"));
        assert_eq!(serde_json::to_value(&caps).unwrap(), Value::Object(raw));
    }

    #[test]
    fn tasks_are_declared_in_2025_11_25_only() {
        let caps = ServerCapabilities {
            tasks: Some(ServerTasksCapability::default()),
            logging: Some(JsonObject::new()),
            ..ServerCapabilities::default()
        };
        assert!(
            caps.for_version(ProtocolVersion::V2025_11_25)
                .tasks
                .is_some()
        );
        for v in [
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2024_11_05,
            ProtocolVersion::V2026_07_28,
        ] {
            let shaped = caps.for_version(v);
            assert!(shaped.tasks.is_none() && shaped.logging.is_some(), "{v}");
        }
    }
}
