//! Goblin's sorted-set engine (no I/O).
