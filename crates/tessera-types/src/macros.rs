//! Crate-private declaration macros: tagged unions of structs and the
//! zero-sized request and notification marker types.

/// Declares a union of structs told apart by a string discriminator member
/// (`"type"`, `"status"`, ...).
///
/// Every member struct serialises its own discriminator (it carries
/// `#[serde(tag = "...", rename = "...")]`), so the enum serialises
/// untagged; deserialisation reads the discriminator and hands the rest to
/// the matching struct, which gives precise error messages.
macro_rules! tagged_union {
    (
        $(#[$attr:meta])*
        $vis:vis enum $name:ident (tag = $tag:literal) {
            $( $(#[$vattr:meta])* $value:literal => $variant:ident($ty:ty) ),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(untagged)]
        $vis enum $name {
            $( $(#[$vattr])* $variant($ty), )+
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(serde::Deserialize)]
                #[serde(tag = $tag)]
                enum Repr {
                    $( #[serde(rename = $value)] $variant($ty), )+
                }
                Ok(match <Repr as serde::Deserialize>::deserialize(d)? {
                    $( Repr::$variant(v) => $name::$variant(v), )+
                })
            }
        }

        impl $name {
            /// The discriminator value of this variant.
            pub fn tag(&self) -> &'static str {
                match self {
                    $( $name::$variant(_) => $value, )+
                }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(v: $ty) -> Self {
                    $name::$variant(v)
                }
            }
        )+
    };
}

/// Declares zero-sized marker types implementing [`crate::RequestMethod`].
macro_rules! requests {
    ( $( $(#[$attr:meta])* $name:ident : $method:expr, $params:ty => $result:ty; )+ ) => {
        $(
            $(#[$attr])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
            pub struct $name;

            impl $crate::method::RequestMethod for $name {
                const METHOD: &'static str = $method;
                type Params = $params;
                type Result = $result;
            }
        )+
    };
}

/// Declares zero-sized marker types implementing [`crate::NotificationMethod`].
macro_rules! notifications {
    ( $( $(#[$attr:meta])* $name:ident : $method:expr, $params:ty; )+ ) => {
        $(
            $(#[$attr])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
            pub struct $name;

            impl $crate::method::NotificationMethod for $name {
                const METHOD: &'static str = $method;
                type Params = $params;
            }
        )+
    };
}

pub(crate) use {notifications, requests, tagged_union};
