//! [`Extensions`]: typed values a transport attaches to a request (HTTP
//! headers, authenticated claims, a handle on the request's stream) for its
//! handler to read.

use std::any::{Any, TypeId};
use std::sync::Arc;

/// A map from type to value, cheap to clone: the entries live in one shared
/// list, so a clone is a reference count (the list is copied only when a
/// clone is changed). Maps hold a handful of entries; lookups scan them.
#[derive(Clone, Default)]
pub struct Extensions {
    entries: Option<Arc<Vec<Entry>>>,
}

type Entry = (TypeId, Arc<dyn Any + Send + Sync>);

/// The room made for further entries when a map's list is first made or
/// copied: a request's map gets a few (headers, address, scope) in a row.
const SPARE: usize = 4;

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.entries.as_ref().map_or(0, |e| e.len()))
            .finish()
    }
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Extensions::default()
    }

    /// Stores a value, replacing one of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        let key = TypeId::of::<T>();
        let value: Arc<dyn Any + Send + Sync> = Arc::new(value);
        let shared = self.entries.get_or_insert_with(Default::default);
        if Arc::get_mut(shared).is_none() {
            // Copied for this map, with room for the few entries a transport
            // adds to a request (one growth, not one per entry).
            let mut own = Vec::with_capacity(shared.len() + SPARE);
            own.extend(shared.iter().cloned());
            *shared = Arc::new(own);
        }
        let entries = Arc::make_mut(shared);
        if entries.capacity() == 0 {
            entries.reserve(SPARE);
        }
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => entries.push((key, value)),
        }
    }

    /// Adds every entry of `other`, replacing entries of the same type.
    pub fn extend(&mut self, other: &Extensions) {
        let Some(theirs) = &other.entries else {
            return;
        };
        if self.is_empty() {
            self.entries = Some(theirs.clone());
            return;
        }
        let entries = Arc::make_mut(self.entries.get_or_insert_with(Default::default));
        for (key, value) in theirs.iter() {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value.clone(),
                None => entries.push((*key, value.clone())),
            }
        }
    }

    /// The value of type `T`, if any.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        let key = TypeId::of::<T>();
        self.entries
            .as_ref()?
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.downcast_ref::<T>())
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.as_ref().is_none_or(|e| e.is_empty())
    }
}

/// Who made a request, as established by the transport's authentication
/// (for example the `sub` claim of a verified bearer token). Multi round-trip
/// state is bound to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(pub String);

/// The session a request belongs to, named the same on every instance that
/// serves it: for a Streamable HTTP session, its `Mcp-Session-Id`. State a
/// server keeps per session in a shared store (the owner of a task, say) is
/// scoped to it, so that the session finds it on any instance and no other
/// session does. Transports whose sessions live in one process (stdio, the
/// 2024-11-05 HTTP+SSE pair) put none: the connection identifies them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId(pub String);

/// The network address of the peer that sent a request, when the transport
/// has one (HTTP: the TCP peer; telemetry records it as `client.address`
/// and `client.port`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub std::net::SocketAddr);

/// The HTTP version a request came over, as `network.protocol.version`
/// spells it (`1.1`, `2`): put by the HTTP transport, recorded by
/// telemetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpVersion(pub &'static str);

impl HttpVersion {
    /// The version of `v`.
    pub fn of(v: http::Version) -> HttpVersion {
        HttpVersion(match v {
            http::Version::HTTP_09 => "0.9",
            http::Version::HTTP_10 => "1.0",
            http::Version::HTTP_2 => "2",
            http::Version::HTTP_3 => "3",
            _ => "1.1",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_by_type() {
        let mut e = Extensions::new();
        assert!(e.is_empty());
        e.insert(5u32);
        e.insert(String::from("x"));
        e.insert(7u32);
        assert_eq!(e.get::<u32>(), Some(&7));
        assert_eq!(e.get::<String>().map(String::as_str), Some("x"));
        assert_eq!(e.get::<u64>(), None);
        let mut c = e.clone();
        assert_eq!(c.get::<u32>(), Some(&7));
        // Changing a clone leaves the original alone.
        c.insert(9u32);
        assert_eq!(c.get::<u32>(), Some(&9));
        assert_eq!(e.get::<u32>(), Some(&7));
        let mut d = Extensions::new();
        d.insert(1u64);
        d.extend(&c);
        assert_eq!(d.get::<u64>(), Some(&1));
        assert_eq!(d.get::<u32>(), Some(&9));
    }

    #[test]
    fn a_copied_list_has_room_for_a_request_s_entries() {
        let mut carried = Extensions::new();
        carried.insert(1u8);
        let mut e = carried.clone();
        e.insert(2u16);
        let room = |e: &Extensions| e.entries.as_ref().map_or(0, |v| v.capacity());
        assert!(room(&e) > SPARE, "copied with room: {}", room(&e));
        let before = e.entries.as_ref().map(|v| v.as_ptr());
        e.insert(3u32);
        e.insert(4u64);
        e.insert(5i8);
        assert_eq!(
            e.entries.as_ref().map(|v| v.as_ptr()),
            before,
            "no growth for the next entries"
        );
        assert_eq!(carried.get::<u16>(), None);
        assert_eq!(e.get::<u8>(), Some(&1));
        assert_eq!(e.get::<i8>(), Some(&5));
    }
}
