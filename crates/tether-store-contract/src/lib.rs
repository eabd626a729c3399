//! The contract every backend of tether's store keeps (`tether_store::StoreBackend`), written
//! once as scenarios against `tether_store::Store` in this crate's tests and run against each
//! backend: the embedded SQLite store (`tether-store`) and the team store on PostgreSQL
//! (`tether-store-pg`). A scenario runs as one test per backend (`<scenario>::embedded`,
//! `<scenario>::team`), so a failure names the backend. A new backend joins by adding its
//! constructor beside `embedded()` and `team()` and a line to the `on_both_backends!` macro.
//!
//! The crate has no code of its own: it is a home for the suite that belongs to no one backend.
