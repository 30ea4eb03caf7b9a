//! Pub/sub state: the server-wide [`Registry`] of who listens to which channel, pattern or
//! shard channel, each client's own [`Subscriptions`], and the [`frame`]s pushed to them.
//!
//! A subscription is recorded twice, in the registry under the name (so PUBLISH finds the
//! receivers) and in the client (so UNSUBSCRIBE with no argument, RESET and a closed
//! connection find the names); `commands::pubsub` keeps the two in step. Messages reach other
//! clients through the client registry (`crate::clients`): written into the lease's output and
//! woken, as replies for blocked clients are.

pub mod frame;
pub mod notify;
mod pending;
mod registry;
mod subscriptions;

pub use pending::PendingPushes;
pub use registry::Registry;
pub use subscriptions::Subscriptions;

/// The three name spaces a client can subscribe in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// SUBSCRIBE / PUBLISH channels.
    Channel,
    /// PSUBSCRIBE glob patterns, matched against PUBLISH channels.
    Pattern,
    /// SSUBSCRIBE / SPUBLISH shard channels.
    Shard,
}

impl Kind {
    /// The confirmation kinds' names: (subscribe, unsubscribe).
    pub fn confirmations(self) -> (&'static str, &'static str) {
        match self {
            Kind::Channel => ("subscribe", "unsubscribe"),
            Kind::Pattern => ("psubscribe", "punsubscribe"),
            Kind::Shard => ("ssubscribe", "sunsubscribe"),
        }
    }
}
