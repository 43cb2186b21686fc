//! The `_meta` members the engine stamps on a request it sends: the tag of
//! the incoming request it belongs to, a 2026-07-28 client's version,
//! capabilities and identity, and the progress token. Done on the params'
//! text when they are text ([`tessera_types::MetaEdit`]), so that params a
//! proxy passes on are never read into a tree.

use std::borrow::Cow;

use serde_json::Value;
use tessera_types::{
    EditedHead, MetaChanges, MetaEdit, NotObject, Params, ProtocolVersion, RequestId, edit_meta_of,
};

use super::Engine;
use crate::meta_keys as mk;

impl Engine {
    /// Stamps `params._meta` of a request about to be sent with `id`: the
    /// `tag` echoed from the incoming request it belongs to, the modern
    /// members when this client speaks 2026-07-28 (`modern`), and a progress
    /// token (the id) when `progress`. A `_meta` that is not an object is
    /// replaced; nothing is touched when there is nothing to stamp. The
    /// sender's `changes` are made in the same edit (see [`MetaChanges`]).
    /// Returns the mirrored members noted when the params' text was written
    /// again ([`EditedHead`]).
    pub(crate) fn stamp(
        &self,
        params: &mut Option<Params>,
        id: &RequestId,
        tag: Option<&Value>,
        modern: Option<ProtocolVersion>,
        progress: bool,
        changes: Option<&MetaChanges>,
    ) -> Option<EditedHead> {
        let mut set: Vec<(&str, Cow<'_, Value>)> = Vec::new();
        let mut fill: Vec<(&str, Cow<'_, Value>)> = Vec::new();
        if let Some(tag) = tag {
            set.push((mk::REQUEST_TAG, Cow::Borrowed(tag)));
        }
        if let Some(version) = modern {
            set.push((
                mk::PROTOCOL_VERSION,
                Cow::Owned(Value::String(version.as_str().to_owned())),
            ));
            fill.push((
                mk::CLIENT_CAPABILITIES,
                Cow::Borrowed(&self.client_wire.capabilities),
            ));
            if let Some(info) = &self.client_wire.info {
                fill.push((mk::CLIENT_INFO, Cow::Borrowed(info)));
            }
        }
        if progress {
            set.push((
                mk::PROGRESS_TOKEN,
                Cow::Owned(serde_json::to_value(id).unwrap_or_default()),
            ));
        }
        let own = !set.is_empty() || !fill.is_empty();
        let theirs: Vec<(&str, Cow<'_, Value>)> = changes
            .map(|c| c.set.iter().map(|(k, v)| (*k, Cow::Borrowed(v))).collect())
            .unwrap_or_default();
        if !own && changes.is_none() {
            return None;
        }
        let head = edit_meta_of(
            params,
            &MetaEdit {
                remove: changes.map_or(&[], |c| c.remove),
                set_if_object: &theirs,
                set: &set,
                fill: &fill,
                // With nothing of its own to add, a `_meta` that is not an
                // object is left as the sender would leave it.
                not_object: if own {
                    NotObject::Replace
                } else {
                    NotObject::Keep
                },
                drop_empty: changes.is_some(),
            },
        );
        if changes.is_some() && params.as_ref().is_some_and(Params::is_empty_object) {
            *params = None;
            // No params: nothing to mirror (and nothing to read).
            return None;
        }
        head
    }
}
