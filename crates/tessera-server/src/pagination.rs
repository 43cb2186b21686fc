//! Pagination with opaque cursors that cannot be forged.
//!
//! A cursor names the list it belongs to and the offset of the next page,
//! sealed with an HMAC under a key random to this server instance. A cursor
//! that was altered, belongs to another list or another server is refused
//! with `-32602`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use tessera_types::ErrorObject;

const TAG_LEN: usize = 16;

/// The `cursor` of a list request; other members (`_meta`) are skipped
/// unread.
#[derive(serde::Deserialize)]
struct CursorParam {
    #[serde(default)]
    cursor: Option<String>,
}

/// Reads the optional `cursor` param of a list request (`-32602` when it is
/// not a string).
pub(crate) fn cursor_of(
    params: Option<&tessera_types::Params>,
) -> Result<Option<String>, ErrorObject> {
    tessera_types::decode_params::<CursorParam>(params)
        .map(|p| p.cursor)
        .map_err(|_| ErrorObject::invalid_params("Invalid params: cursor must be a string"))
}

/// Seals and opens cursors.
#[derive(Clone)]
pub struct Pager {
    key: [u8; 32],
    page_size: usize,
}

impl std::fmt::Debug for Pager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pager")
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl Pager {
    /// A pager with a fresh random key.
    pub fn new(page_size: usize) -> Self {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        Pager {
            key,
            page_size: page_size.max(1),
        }
    }

    /// Items per page.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    fn tag(&self, payload: &[u8]) -> [u8; TAG_LEN] {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("any key length");
        mac.update(payload);
        let full = mac.finalize().into_bytes();
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(&full[..TAG_LEN]);
        out
    }

    /// The cursor of the page starting at `offset` of list `list`.
    pub fn seal(&self, list: &str, offset: usize) -> String {
        let payload = format!("{list}\n{offset}");
        let mut bytes = payload.into_bytes();
        let tag = self.tag(&bytes);
        bytes.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The offset a cursor of list `list` points at.
    pub fn open(&self, list: &str, cursor: &str) -> Result<usize, ErrorObject> {
        let bad =
            || ErrorObject::invalid_params(format!("Invalid params: invalid cursor for {list}"));
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad())?;
        if bytes.len() <= TAG_LEN {
            return Err(bad());
        }
        let (payload, tag) = bytes.split_at(bytes.len() - TAG_LEN);
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("any key length");
        mac.update(payload);
        mac.verify_truncated_left(tag).map_err(|_| bad())?;
        let text = std::str::from_utf8(payload).map_err(|_| bad())?;
        let (name, offset) = text.split_once('\n').ok_or_else(bad)?;
        if name != list {
            return Err(bad());
        }
        offset.parse().map_err(|_| bad())
    }

    /// One page of `items` from the cursor, and the cursor of the next page.
    pub fn page<T: Clone>(
        &self,
        list: &str,
        items: &[T],
        cursor: Option<&str>,
    ) -> Result<(Vec<T>, Option<String>), ErrorObject> {
        let start = match cursor {
            Some(c) => self.open(list, c)?,
            None => 0,
        };
        if start > items.len() {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: cursor for {list} is past the end of the list"
            )));
        }
        let end = (start + self.page_size).min(items.len());
        let next = (end < items.len()).then(|| self.seal(list, end));
        Ok((items[start..end].to_vec(), next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_refuses_forgeries() {
        let p = Pager::new(2);
        let items = [1, 2, 3, 4, 5];
        let (a, c) = p.page("tools", &items, None).unwrap();
        assert_eq!(a, vec![1, 2]);
        let c = c.unwrap();
        let (b, c2) = p.page("tools", &items, Some(&c)).unwrap();
        assert_eq!(b, vec![3, 4]);
        let (last, none) = p.page("tools", &items, c2.as_deref()).unwrap();
        assert_eq!(last, vec![5]);
        assert!(none.is_none());
        // Another list, another server, garbage, a flipped byte.
        assert!(p.open("prompts", &c).is_err());
        assert!(Pager::new(2).open("tools", &c).is_err());
        assert!(p.open("tools", "not-a-cursor").is_err());
        let mut raw = URL_SAFE_NO_PAD.decode(&c).unwrap();
        raw[0] ^= 1;
        assert_eq!(
            p.open("tools", &URL_SAFE_NO_PAD.encode(raw))
                .unwrap_err()
                .code,
            -32602
        );
    }
}
