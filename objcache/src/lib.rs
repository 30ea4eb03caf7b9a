//! Goblin Store: the object cache.
