//! Changing an [`Aggregator`]'s upstreams while it runs: one added or
//! replaced, one removed, or the whole list at once (a reload).

use std::sync::Arc;

use super::{Aggregator, check_name, check_servers};
use crate::config::{UpstreamConfig, check_prefixes};
use crate::error::ProxyError;
use crate::member::{Member, supervise};
use crate::naming::Naming;

/// What [`Aggregator::reconfigure`] changed, by upstream name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reconfigured {
    /// Upstreams that were not running, now connected.
    pub added: Vec<String>,
    /// Running upstreams whose entry changed, connected again with it.
    pub changed: Vec<String>,
    /// Running upstreams no longer wanted, closed.
    pub removed: Vec<String>,
}

impl Aggregator {
    /// Adds an upstream after the others, or replaces the one of the same
    /// name (whose connection is closed; requests in flight on it fail,
    /// sessions go on). Its items appear once it has connected, and every
    /// session is told the lists changed.
    ///
    /// Refused when the upstreams would then hold one shown without prefix
    /// beside another ([`crate::Naming`]); see [`Aggregator::reconfigure`]
    /// to change several at once.
    pub fn add_upstream(&self, entry: UpstreamConfig) -> Result<(), ProxyError> {
        check_name(&entry.name)?;
        let member = Arc::new(Member::new(
            entry,
            &self.inner.options,
            self.inner.stop.child_token(),
            &self.inner.hub,
        ));
        let old = {
            let mut members = self
                .inner
                .members
                .write()
                .unwrap_or_else(|e| e.into_inner());
            let mut list: Vec<Arc<Member>> = members.as_ref().clone();
            let old = match list.iter().position(|m| m.entry.name == member.entry.name) {
                Some(i) => Some(std::mem::replace(&mut list[i], member.clone())),
                None => {
                    list.push(member.clone());
                    None
                }
            };
            check_prefixes(list.iter().map(|m| &m.entry))?;
            *members = Arc::new(list);
            old
        };
        if let Some(old) = old {
            old.stop.cancel();
        }
        self.renamed();
        self.end_unserved();
        tokio::spawn(supervise(member, self.inner.hub.clone()));
        Ok(())
    }

    /// Removes upstream `name` (its connection is closed; requests in flight
    /// on it fail, sessions go on and are told the lists changed); `false`
    /// when there is none, or it is the last one.
    pub fn remove_upstream(&self, name: &str) -> bool {
        let gone = {
            let mut members = self
                .inner
                .members
                .write()
                .unwrap_or_else(|e| e.into_inner());
            if members.len() < 2 {
                return false;
            }
            let Some(i) = members.iter().position(|m| m.entry.name == name) else {
                return false;
            };
            let mut list: Vec<Arc<Member>> = members.as_ref().clone();
            let gone = list.remove(i);
            *members = Arc::new(list);
            gone
        };
        gone.stop.cancel();
        self.renamed();
        self.inner.hub.lists_changed();
        self.end_unserved();
        true
    }

    /// New sessions are told of the upstreams now (the engine
    /// configuration is made again on its next use).
    fn renamed(&self) {
        self.inner
            .hub
            .told
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Ends the resource subscriptions made under names no upstream is
    /// shown by any more ([`crate::hub::Hub::end_unserved`]).
    fn end_unserved(&self) {
        let members = self.inner.members();
        let namings: Vec<&Naming> = members.iter().map(|m| &m.naming).collect();
        let ended = self.inner.hub.end_unserved(&namings);
        if ended > 0 {
            tracing::info!(
                subscriptions = ended,
                "resource subscriptions ended: their upstream is gone or shown by other names"
            );
        }
    }

    /// Makes the upstreams `servers`, in their order, in one step (as a
    /// reload of the configuration file does): a running upstream of the
    /// same name that `unchanged` says is unchanged, and whose names are
    /// shown the same way (prefixed or not), keeps its connection; the
    /// others are connected with their entry, and running upstreams not in
    /// `servers` (or replaced) are closed. Requests in flight on a closed
    /// one fail; sessions go on and are told the lists changed. Resource
    /// subscriptions made under URIs no upstream shows any more (its
    /// upstream removed, renamed, or its prefix turned on or off) end: a
    /// legacy session is sent a last `notifications/resources/updated` of
    /// the URI, and a `subscriptions/listen` stream holding one is ended
    /// gracefully; the others go on, on the new connections.
    ///
    /// `servers` is checked whole first (names, and an upstream shown
    /// without prefix being the only one): when it is refused nothing
    /// changes.
    pub fn reconfigure(
        &self,
        servers: Vec<UpstreamConfig>,
        unchanged: impl Fn(&str) -> bool,
    ) -> Result<Reconfigured, ProxyError> {
        check_servers(&servers)?;
        let mut said = Reconfigured::default();
        let (fresh, gone) = {
            let mut members = self
                .inner
                .members
                .write()
                .unwrap_or_else(|e| e.into_inner());
            let old = members.clone();
            let mut list = Vec::with_capacity(servers.len());
            let mut fresh = Vec::new();
            for entry in servers {
                let running = old.iter().find(|m| m.entry.name == entry.name);
                match running {
                    // Its names are shown the same way: a subscription is
                    // made under the names of the connection carrying it.
                    Some(m) if unchanged(&entry.name) && m.naming == entry.naming() => {
                        list.push(m.clone())
                    }
                    _ => {
                        let name = entry.name.clone();
                        let m = Arc::new(Member::new(
                            entry,
                            &self.inner.options,
                            self.inner.stop.child_token(),
                            &self.inner.hub,
                        ));
                        list.push(m.clone());
                        fresh.push(m);
                        if running.is_some() {
                            said.changed.push(name);
                        } else {
                            said.added.push(name);
                        }
                    }
                }
            }
            let gone: Vec<Arc<Member>> = old
                .iter()
                .filter(|m| !list.iter().any(|n| Arc::ptr_eq(n, m)))
                .cloned()
                .collect();
            said.removed = gone
                .iter()
                .map(|m| m.entry.name.clone())
                .filter(|n| !list.iter().any(|m| &m.entry.name == n))
                .collect();
            *members = Arc::new(list);
            (fresh, gone)
        };
        for m in gone {
            m.stop.cancel();
        }
        self.renamed();
        self.inner.hub.lists_changed();
        self.end_unserved();
        for m in fresh {
            tokio::spawn(supervise(m, self.inner.hub.clone()));
        }
        Ok(said)
    }
}
