//! What every handle of one connection shares: its command queue, the
//! request ticket counter, the published [`Outstanding`] counts and the
//! [`PeerInfo`] channel, in one allocation.
//!
//! The [`PeerInfo`] watch channel is made on first use: most connections (a
//! per-request HTTP engine) never publish or read it, and making and closing
//! one costs more than the rest of a handle.

use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use tessera_types::ProtocolVersion;

use tokio::sync::watch;

use crate::command_queue::CommandQueue;
use crate::peer::{OutstandingCells, PeerInfo};

/// The state of the [`PeerInfo`] channel.
enum Info {
    /// Nothing asked for it yet.
    Unborn,
    /// The connection runs: its sender, and the receiver handles clone.
    Open(watch::Sender<PeerInfo>, watch::Receiver<PeerInfo>),
    /// The connection stopped: its sender is dropped (receivers see the
    /// channel closed); the receiver, if one was made.
    Closed(Option<watch::Receiver<PeerInfo>>),
}

/// The state shared by a connection and all its [`Peer`](crate::Peer) handles.
pub(crate) struct PeerShared {
    /// What the handles ask of the connection.
    pub(crate) commands: CommandQueue,
    /// The source of request tickets.
    pub(crate) tickets: AtomicU64,
    /// What the driver last published.
    pub(crate) outstanding: OutstandingCells,
    /// Server role: the legacy session's version, once its handshake
    /// completed or it was restored.
    pub(crate) session_version: OnceLock<ProtocolVersion>,
    info: Mutex<Info>,
}

impl Default for PeerShared {
    fn default() -> Self {
        PeerShared {
            commands: CommandQueue::default(),
            tickets: AtomicU64::new(0),
            outstanding: OutstandingCells::default(),
            session_version: OnceLock::new(),
            info: Mutex::new(Info::Unborn),
        }
    }
}

impl PeerShared {
    fn info(&self) -> MutexGuard<'_, Info> {
        // The state is valid at every point: a panic elsewhere leaves it usable.
        self.info.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A receiver of the [`PeerInfo`] changes, as a clone of the channel's
    /// first receiver (one that has seen nothing): made now if needed,
    /// closed at once when the connection already stopped.
    pub(crate) fn receiver(&self) -> watch::Receiver<PeerInfo> {
        let mut info = self.info();
        match &*info {
            Info::Open(_, rx) | Info::Closed(Some(rx)) => rx.clone(),
            Info::Unborn => {
                let (tx, rx) = watch::channel(PeerInfo::default());
                *info = Info::Open(tx, rx.clone());
                rx
            }
            Info::Closed(None) => {
                let (_, rx) = watch::channel(PeerInfo::default());
                *info = Info::Closed(Some(rx.clone()));
                rx
            }
        }
    }

    /// Reads the current [`PeerInfo`] (the default when none was published).
    pub(crate) fn read<T>(&self, f: impl FnOnce(&PeerInfo) -> T) -> T {
        match &*self.info() {
            Info::Open(_, rx) | Info::Closed(Some(rx)) => f(&rx.borrow()),
            Info::Unborn | Info::Closed(None) => f(&PeerInfo::default()),
        }
    }

    /// The connection publishes a change (ignored once it stopped).
    pub(crate) fn publish(&self, f: impl FnOnce(&mut PeerInfo)) {
        let mut info = self.info();
        if let Info::Unborn = &*info {
            let (tx, rx) = watch::channel(PeerInfo::default());
            *info = Info::Open(tx, rx);
        }
        if let Info::Open(tx, _) = &*info {
            tx.send_modify(f);
        }
    }

    /// The connection stopped: its command queue is closed and the
    /// [`PeerInfo`] channel's sender dropped.
    pub(crate) fn close(&self) {
        self.commands.close();
        let mut info = self.info();
        let was = std::mem::replace(&mut *info, Info::Closed(None));
        if let Info::Open(_, rx) | Info::Closed(Some(rx)) = was {
            *info = Info::Closed(Some(rx));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_is_made_on_first_use_and_closed_with_the_connection() {
        let s = PeerShared::default();
        assert!(s.read(|i| i.connected.is_none()));
        let rx = s.receiver();
        assert!(!rx.has_changed().unwrap());
        s.publish(|i| i.session = None);
        assert!(rx.has_changed().unwrap());
        // A receiver made later is a clone of the first: it has not seen the change.
        assert!(s.receiver().has_changed().unwrap());
        s.close();
        assert!(rx.has_changed().is_err());
        assert!(s.receiver().has_changed().is_err());
        s.publish(|i| i.session = None);

        let unused = PeerShared::default();
        unused.close();
        assert!(unused.receiver().has_changed().is_err());

        let published = PeerShared::default();
        published.publish(|i| i.session = None);
        assert!(published.receiver().has_changed().unwrap());
    }
}
