//! The score as reported: the verdict bands, the breakdown (`scoreBreakdown`) and the reasons.

use super::reasons::Reason;
use super::weights::{Capped, Component, WEIGHTS};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Verdict {
    Good,
    Acceptable,
    Poor,
    Bad,
    /// The server refuses the key until something is changed first (a unique index dropped).
    Blocked,
    Invalid,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Acceptable => "acceptable",
            Verdict::Poor => "poor",
            Verdict::Bad => "bad",
            Verdict::Blocked => "blocked",
            Verdict::Invalid => "invalid",
        }
    }

    /// The verdict of a score; `held` when a cap holds it down (the weighted sum reaches the
    /// cap). A cap is a ceiling the key stays under: held on a band's lower edge (25, 50, 75),
    /// the key takes the band below, so a key capped at 50 is poor, never acceptable.
    pub(crate) fn of_score(score: u32, held: bool) -> Verdict {
        Verdict::of(if held { score.saturating_sub(1) } else { score })
    }

    /// good 75–100, acceptable 50–74, poor 25–49, bad 0–24.
    pub(crate) fn of(score: u32) -> Verdict {
        match score {
            75.. => Verdict::Good,
            50..=74 => Verdict::Acceptable,
            25..=49 => Verdict::Poor,
            _ => Verdict::Bad,
        }
    }
}

/// The score's parts, in the report as `scoreBreakdown`. A component that was not
/// measured is `null` (None) and counts 0: what was not measured never counts in a key's favour.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Breakdown {
    pub(crate) num_shards: usize,
    /// Scaled down by the share of operations that change the key.
    pub(crate) fan_out: Option<f64>,
    pub(crate) data_spread: Option<f64>,
    pub(crate) load: Option<f64>,
    /// Scaled by the inserts' share of operations when the queries show inserts.
    pub(crate) insert_spread: Option<f64>,
    pub(crate) growth: Option<f64>,
    /// The inserts' share of operations (0..1) the insert penalty was scaled by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) insert_share_of_operations: Option<f64>,
    /// 100 × Σ weight × component, before caps.
    pub(crate) weighted: f64,
    /// The lowest cap that applies, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) capped_by: Option<Capped>,
    /// Capped by `writesFail`: the score were the failing writes fixed (their filters naming
    /// the key's fields), every other cap kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) if_writes_fixed: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cap: Option<f64>,
    /// The share of sampled writes (%) the server would refuse under the key (`writesFail`).
    #[serde(skip)]
    pub(crate) refused_writes_percent: f64,
    /// Each component's quantity in words, for the ranking's comparisons.
    #[serde(skip)]
    pub(crate) words: [String; 5],
}

impl Breakdown {
    /// The component as measured; None when it was not.
    pub(crate) fn measured(&self, c: Component) -> Option<f64> {
        match c {
            Component::FanOut => self.fan_out,
            Component::DataSpread => self.data_spread,
            Component::Load => self.load,
            Component::InsertSpread => self.insert_spread,
            Component::Growth => self.growth,
        }
    }

    /// The component as the score counts it (0 when not measured).
    pub(crate) fn component(&self, c: Component) -> f64 {
        self.measured(c).unwrap_or(0.0)
    }

    pub(super) fn words(&self, c: Component) -> &str {
        &self.words[WEIGHTS.iter().position(|w| w.component == c).unwrap_or(0)]
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Score {
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    /// Problems first, then strengths.
    pub(crate) reasons: Vec<Reason>,
    pub(crate) breakdown: Breakdown,
}
