//! [`Extensions`]: typed values a transport attaches to a request (HTTP
//! headers, authenticated claims, a handle on the request's stream) for its
//! handler to read.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// A map from type to value, cheap to clone (values are shared).
#[derive(Clone, Default)]
pub struct Extensions {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map.len())
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
        self.map.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if any.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Who made a request, as established by the transport's authentication
/// (for example the `sub` claim of a verified bearer token). Multi round-trip
/// state is bound to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(pub String);

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
        let c = e.clone();
        assert_eq!(c.get::<u32>(), Some(&7));
    }
}
