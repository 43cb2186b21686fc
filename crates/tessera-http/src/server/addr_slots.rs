//! Open connections counted per peer address, so that one address cannot
//! hold every connection of [`serve`](super::serve) (issue 32 item 4: under
//! a 256-descriptor limit one client with GET streams refused another 35
//! times out of 35).
//!
//! A connection takes a slot of its address when it is accepted and gives
//! it back when it ends. Beyond the per-address cap a new connection gets
//! `429` with `Retry-After` at once and is closed; other addresses are not
//! affected.

use std::net::IpAddr;
use std::sync::Arc;

use super::slots::{Slot, Slots};

/// The open connections of each address.
#[derive(Debug, Default)]
pub(crate) struct AddrSlots(Arc<Slots<IpAddr>>);

/// One connection's slot; given back when dropped.
pub(crate) type AddrSlot = Slot<IpAddr>;

impl AddrSlots {
    /// A slot for a connection from `addr` (an IPv4 address mapped into
    /// IPv6 counts as the IPv4 one), or `None` when it holds `cap` already.
    pub(crate) fn take(&self, addr: IpAddr, cap: usize) -> Option<AddrSlot> {
        self.0.take(addr.to_canonical(), 1, cap)
    }

    /// How many connections `addr` holds.
    #[cfg(test)]
    fn held(&self, addr: IpAddr) -> usize {
        self.0.held(&addr.to_canonical())
    }
}

/// The default per-address cap: three quarters of the connection cap (at
/// least one), so that a quarter is always left to other addresses.
pub(crate) fn default_per_addr(max_connections: usize) -> usize {
    (max_connections - max_connections / 4).max(1)
}

/// What a connection beyond its address's cap gets before it is closed.
pub(crate) fn over_cap_response(cap: usize) -> Vec<u8> {
    let body = format!(
        "Too Many Requests: this address holds {cap} open connections, the per-client limit \
         (tessera serve --max-connections-per-client raises it)\n"
    );
    format!(
        "HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\ncontent-type: text/plain\r\n\
         retry-after: 1\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_address_and_given_back() {
        let slots = AddrSlots::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let one = slots.take(a, 2).unwrap();
        let two = slots.take(mapped, 2).unwrap();
        assert!(slots.take(a, 2).is_none(), "the mapped address is the same");
        assert!(
            slots.take(b, 2).is_some(),
            "another address is not affected"
        );
        drop(one);
        assert_eq!(slots.held(a), 1);
        let _three = slots.take(a, 2).unwrap();
        drop(two);
        assert!(slots.take(b, 0).is_none());
        assert_eq!(slots.held(b), 0);
        assert_eq!(slots.0.keys(), 1, "empty entries go");
    }

    #[test]
    fn the_refusal_is_well_formed_and_the_default_leaves_a_quarter() {
        let text = String::from_utf8(over_cap_response(12)).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        assert!(head.contains("retry-after: 1"));
        assert_eq!(default_per_addr(1), 1);
        assert_eq!(default_per_addr(2), 2);
        assert_eq!(default_per_addr(921), 691);
    }
}
