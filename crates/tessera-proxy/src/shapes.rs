//! Typed views of the parts of messages the proxy reads or rewrites.
//!
//! What a peer sends is read into these types; the members the proxy does
//! not own are kept as they came (`rest`), and a member of an unexpected
//! shape is kept too ([`Loose::Malformed`]), so that what is passed on is
//! what arrived with only the owned parts changed.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_types::{CacheScope, ErrorObject, JsonObject};
pub(crate) use tessera_types::{Loose, WithMeta};

/// Reads a message's object into `T` (never fails for the types here,
/// whose members are all [`Loose`] or kept in `rest`; the default
/// otherwise).
pub(crate) fn read<T: DeserializeOwned + Default>(object: &JsonObject) -> T {
    tessera_types::decode_object_params(Some(object)).unwrap_or_default()
}

/// Reads an owned object into `T`, moving its members (never fails for
/// the types here; the default otherwise).
pub(crate) fn take<T: DeserializeOwned + Default>(object: JsonObject) -> T {
    serde_json::from_value(Value::Object(object)).unwrap_or_default()
}

/// Writes a typed message back as an object.
pub(crate) fn write<T: Serialize>(value: &T) -> Result<JsonObject, ErrorObject> {
    tessera_types::encode_params(value)
        .map_err(|e| ErrorObject::internal(format!("cannot write a message: {e}")))
}

/// The `_meta` of a message, read as `T` (the other members are skipped).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, bound = "T: DeserializeOwned")]
pub(crate) struct MetaOf<T> {
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Loose<T>,
}

impl<T> Default for MetaOf<T> {
    fn default() -> Self {
        MetaOf {
            meta: Loose::Absent,
        }
    }
}

/// The subject of a caller's claims (the other claims are skipped).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Subject {
    /// `sub`.
    pub sub: Loose<String>,
}

/// The URI a message names (the other members are skipped).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct UriOf {
    /// `uri`.
    pub uri: Loose<String>,
}

/// A listed tool, prompt, resource or resource template: the members the
/// proxy rewrites (names, URIs, a tool's description and argument schema).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ListedItem {
    /// The name (prefixed with the upstream's).
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub name: Loose<String>,
    /// A resource's URI (prefixed).
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub uri: Loose<String>,
    /// A resource template's URI template (prefixed).
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub uri_template: Loose<String>,
    /// A tool's description (which an override may replace).
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub description: Loose<String>,
    /// A tool's input schema (fixed arguments are taken out of it).
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub input_schema: Loose<InputSchema>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// A tool's input schema: its properties and required list.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct InputSchema {
    /// The arguments' schemas, by argument name.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub properties: Loose<JsonObject>,
    /// The required arguments.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub required: Loose<Vec<Value>>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// Which combined list a page is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    Templates,
}

/// The 2026-07-28 caching hints of a result, as read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ReadHints {
    /// `ttlMs`.
    pub ttl_ms: Loose<u64>,
    /// `cacheScope`.
    pub cache_scope: Loose<CacheScope>,
}

/// The caching hints written on a result.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WrittenHints {
    /// `ttlMs`.
    pub ttl_ms: u64,
    /// `cacheScope`.
    pub cache_scope: CacheScope,
}

/// One page of a list, as an upstream sent it or as the proxy writes it:
/// the items under the list's member, the next cursor and the hints.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ListPage {
    /// `tools`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub tools: Loose<Vec<Loose<ListedItem>>>,
    /// `prompts`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub prompts: Loose<Vec<Loose<ListedItem>>>,
    /// `resources`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub resources: Loose<Vec<Loose<ListedItem>>>,
    /// `resourceTemplates`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub resource_templates: Loose<Vec<Loose<ListedItem>>>,
    /// `nextCursor`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub next_cursor: Loose<String>,
    /// `ttlMs`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub ttl_ms: Loose<u64>,
    /// `cacheScope`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub cache_scope: Loose<CacheScope>,
}

impl ListPage {
    /// The items of list `kind`.
    pub fn items_mut(&mut self, kind: ListKind) -> &mut Loose<Vec<Loose<ListedItem>>> {
        match kind {
            ListKind::Tools => &mut self.tools,
            ListKind::Prompts => &mut self.prompts,
            ListKind::Resources => &mut self.resources,
            ListKind::Templates => &mut self.resource_templates,
        }
    }

    /// The well-formed items of list `kind`, taken (malformed ones are
    /// left out).
    pub fn take_items(&mut self, kind: ListKind) -> Vec<ListedItem> {
        std::mem::take(self.items_mut(kind))
            .into_valid()
            .unwrap_or_default()
            .into_iter()
            .filter_map(Loose::into_valid)
            .collect()
    }

    /// A page of list `kind` holding `items`.
    pub fn of(kind: ListKind, items: Vec<ListedItem>) -> ListPage {
        let mut page = ListPage::default();
        *page.items_mut(kind) = Loose::Valid(items.into_iter().map(Loose::Valid).collect());
        page
    }

    /// The hints of the page.
    pub fn hints(&self) -> ReadHints {
        ReadHints {
            ttl_ms: self.ttl_ms.clone(),
            cache_scope: self.cache_scope.clone(),
        }
    }
}

/// Params of a request addressed by name or URI (`tools/call`,
/// `prompts/get`, `resources/read`, `resources/(un)subscribe`,
/// `completion/complete`): the members the aggregator rewrites.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct Addressed {
    /// A tool's or prompt's name.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub name: Loose<String>,
    /// A resource's URI.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub uri: Loose<String>,
    /// A tool call's arguments.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub arguments: Loose<JsonObject>,
    /// A completion's reference.
    #[serde(rename = "ref", skip_serializing_if = "Loose::is_absent")]
    pub reference: Loose<Reference>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// A completion's reference: a prompt by name or a resource by URI.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct Reference {
    /// `ref/prompt` or `ref/resource`.
    #[serde(rename = "type", skip_serializing_if = "Loose::is_absent")]
    pub kind: Loose<String>,
    /// The prompt's name.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub name: Loose<String>,
    /// The resource's URI (or template).
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub uri: Loose<String>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// A result that may link resources: a tool call's content, a prompt's
/// messages, a read's contents.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct Linking {
    /// A tool call's content.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub content: Loose<Content>,
    /// A prompt's messages.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub messages: Loose<Vec<Loose<Message>>>,
    /// A read's contents.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub contents: Loose<Vec<Loose<WithUri>>>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// Content: an array of blocks, or one block.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub(crate) enum Content {
    /// Several blocks.
    Blocks(Vec<Loose<Block>>),
    /// One block.
    Block(Block),
}

impl Content {
    /// The well-formed blocks.
    pub fn blocks_mut(&mut self) -> impl Iterator<Item = &mut Block> {
        let blocks: Vec<&mut Block> = match self {
            Content::Blocks(b) => b.iter_mut().filter_map(Loose::valid_mut).collect(),
            Content::Block(b) => vec![b],
        };
        blocks.into_iter()
    }
}

/// A prompt message.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct Message {
    /// Its content.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub content: Loose<Content>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// A content block: a resource link's URI, an embedded resource.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct Block {
    /// The block type.
    #[serde(rename = "type", skip_serializing_if = "Loose::is_absent")]
    pub kind: Loose<String>,
    /// A resource link's URI.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub uri: Loose<String>,
    /// An embedded resource.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub resource: Loose<WithUri>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// Anything with a URI (resource contents).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct WithUri {
    /// The URI.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub uri: Loose<String>,
    /// Everything else, as it came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// The filter of a `subscriptions/listen` request, as the client sent it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RequestedFilter {
    /// `toolsListChanged`.
    pub tools_list_changed: Loose<bool>,
    /// `promptsListChanged`.
    pub prompts_list_changed: Loose<bool>,
    /// `resourcesListChanged`.
    pub resources_list_changed: Loose<bool>,
    /// `resourceSubscriptions`.
    pub resource_subscriptions: Loose<Vec<Loose<String>>>,
    /// Other members (ignored; their presence makes only objects read as
    /// a filter).
    #[serde(flatten)]
    pub _others: JsonObject,
}

/// The params of a `subscriptions/listen` request, as the client sent them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ListenParams {
    /// What to listen for.
    pub notifications: Loose<RequestedFilter>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn members_of_other_shapes_and_unknown_members_pass_through() {
        let sent = obj(json!({
            "name": 3, "uri": "a://b", "ref": {"type": "ref/prompt", "name": "p", "x": [1]},
            "arguments": null, "extra": {"deep": [1.5, -2, "s"]}
        }));
        let a: Addressed = read(&sent);
        assert_eq!(a.name, Loose::Malformed(json!(3)));
        assert_eq!(a.uri.valid().map(String::as_str), Some("a://b"));
        assert_eq!(write(&a).unwrap(), sent);
        let empty: Addressed = read(&JsonObject::new());
        assert!(empty.name.is_absent());
        assert_eq!(write(&empty).unwrap(), JsonObject::new());
    }

    #[test]
    fn content_is_one_block_or_several() {
        let one = obj(json!({"content": {"type": "resource_link", "uri": "u"}}));
        let mut l: Linking = read(&one);
        let Loose::Valid(c) = &mut l.content else {
            panic!("content")
        };
        assert_eq!(c.blocks_mut().count(), 1);
        assert_eq!(write(&l).unwrap(), one);
        let many = obj(json!({"content": [{"type": "text", "text": "t"}, 7], "isError": false}));
        let mut l: Linking = read(&many);
        let Loose::Valid(c) = &mut l.content else {
            panic!("content")
        };
        assert_eq!(c.blocks_mut().count(), 1);
        assert_eq!(write(&l).unwrap(), many);
    }

    #[test]
    fn a_combined_page_is_written_with_its_list_member() {
        let item: ListedItem = read(&obj(
            json!({"name": "a__t", "inputSchema": {"type": "object"}}),
        ));
        let mut page = ListPage::of(ListKind::Templates, vec![item]);
        page.next_cursor = Loose::Valid("c".into());
        page.ttl_ms = Loose::Valid(0);
        page.cache_scope = Loose::Valid(CacheScope::Private);
        assert_eq!(
            Value::Object(write(&page).unwrap()),
            json!({"resourceTemplates": [{"name": "a__t", "inputSchema": {"type": "object"}}],
                "nextCursor": "c", "ttlMs": 0, "cacheScope": "private"})
        );
        let legacy = ListPage::of(ListKind::Tools, Vec::new());
        assert_eq!(Value::Object(write(&legacy).unwrap()), json!({"tools": []}));
    }

    #[test]
    fn a_page_keeps_its_hints_and_cursor() {
        let sent = obj(
            json!({"tools": [{"name": "a"}, 1], "nextCursor": "c", "ttlMs": 5,
            "cacheScope": "public"}),
        );
        let mut p: ListPage = read(&sent);
        assert_eq!(p.take_items(ListKind::Tools).len(), 1);
        assert_eq!(p.next_cursor.valid().map(String::as_str), Some("c"));
        assert_eq!(p.hints().ttl_ms, Loose::Valid(5));
        assert_eq!(p.hints().cache_scope, Loose::Valid(CacheScope::Public));
    }
}
