//! `plan`: keys for a whole database, chosen together (docs/reference.md "plan").
//!
//! Each collection brings the candidates its own analysis ranked (`input`); the plan
//! searches the combinations (leave unsharded, or one of the keys) for the one that keeps
//! the most transactions and joins on one shard while each collection keeps a good key and
//! the shards stay even (`search`, each combination laid on the shards by `layout` and
//! judged by `evaluate`). Keys whose first fields hold the same values (`links`) are
//! co-located with zones (`zones`; a value one zone pins above its shard's fair share is said, `pinned`): the balancer alone places every collection's chunks on
//! its own, so equal values of two collections meet on a shard only by chance. `make` runs
//! it: the search, the plan written out (`build` fills `outcome`), the plan as given beside
//! it (`given`); `words` says it. Pure: values in, a `Plan` out.
//!
//! The modules depend one way: input <- layout <- evaluate <- joint <- blockers <- bounds, graph <-
//! search <- build <- given <- make. `outcome` is the report's data (built on the blockers',
//! bounds', graph's and steps' types) and `words` its sentences, read from the data; this
//! file only declares the modules.

pub(crate) mod basis;
pub(crate) mod blockers;
pub(crate) mod bounds;
pub(crate) mod build;
pub(crate) mod equalities;
pub(crate) mod evaluate;
pub(crate) mod given;
pub(crate) mod graph;
pub(crate) mod input;
pub(crate) mod joins;
pub(crate) mod joint;
pub(crate) mod layout;
pub(crate) mod links;
pub(crate) mod make;
pub(crate) mod outcome;
pub(crate) mod pinned;
pub(crate) mod rate;
pub(crate) mod search;
pub(crate) mod steps;
pub(crate) mod trade_off;
pub(crate) mod verdicts;
pub(crate) mod words;
pub(crate) mod zones;
