//! The embedder tier's learned judge: when no rule finds what a new
//! memory replaces, a logistic model of what the rules read of each pair
//! and how close in meaning they are scores the candidates, and the best
//! of them, above [`Model::threshold`], is the one replaced. Its weights
//! were fitted on the tuning sets of tests/data/contradictions (never on
//! held-out) by the `fit_the_learned_judge` test, which prints them.

use super::{Reading, Verdict, frame, judge_claims, one_contact, other_attributes};
use super::{same_attribute, same_subject};

/// What the model reads of a pair, in order.
pub const FEATURES: [&str; 33] = [
    "bias",
    "cosine",
    "cosine above the other candidates'",
    "closest of the candidates",
    "says something changed",
    "says something changed, times cosine",
    "both claim one attribute of one subject",
    "both claim, of other attributes only",
    "only one gives a contact",
    "the new one claims something",
    "the old one claims something",
    "frame words shared",
    "subject words of the old one the new one has",
    "values gone",
    "values that came",
    "values shared",
    "a value in place of one of its shape",
    "frame words and names of the old one covered",
    "adds",
    "the old one is one of many",
    "contrasted (staging, production…)",
    "other subjects",
    "the new one's length",
    "the old one's length",
    "tokens shared",
    "a value in place of one in its slot",
    "subject words of the new one the old one says",
    "cosine squared",
    "closest, and says something changed",
    "one of how many candidates",
    "closest, times cosine",
    "a value in place of one of its shape or slot, times cosine",
    "frame words covered, times cosine",
];

/// A fitted logistic model: weights of [`FEATURES`], and the least score
/// (log-odds) at which its best candidate is judged replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub weights: [f32; FEATURES.len()],
    pub threshold: f32,
}

/// The model in use (all-MiniLM-L6-v2's cosines; fitted by
/// `fit_the_learned_judge` on the six tuning sets). Its threshold is the
/// lowest at which each set, scored by a model fitted on the other five,
/// keeps a precision of 0.97 (0.972, recall 0.600 against the rules'
/// 0.557 without it).
pub const MODEL: Model = Model {
    weights: [
        -3.126, 1.099, -0.384, 1.190, 1.311, 0.361, -0.157, -0.479, -0.622, -0.301, -0.407, -0.156,
        -0.162, -0.808, 0.647, 0.712, 0.150, 0.244, -2.030, -0.141, -1.148, -0.301, 2.370, 0.321,
        -1.534, -0.618, 0.695, 0.978, 1.861, -2.666, 2.049, 1.814, 0.398,
    ],
    threshold: 2.0,
};

/// What [`Model`] reads of `new` and `old`, `cosine` apart in meaning,
/// when the closest other of the `candidates` judged is `best_other`.
pub fn features(
    new: &Reading,
    old: &Reading,
    cosine: f32,
    best_other: f32,
    candidates: usize,
) -> [f32; FEATURES.len()] {
    let flag = |b: bool| f32::from(u8::from(b));
    let cued = new.frame.cued();
    let one_attribute = new.claims.iter().any(|n| {
        old.claims
            .iter()
            .any(|o| same_attribute(n, o) && same_subject(n, o))
    });
    let mut x = [0.0; FEATURES.len()];
    let head = [
        1.0,
        cosine,
        (cosine - best_other).clamp(-1.0, 1.0),
        flag(cosine >= best_other),
        flag(cued),
        flag(cued) * cosine,
        flag(one_attribute),
        flag(other_attributes(new, old)),
        flag(one_contact(new, old)),
        flag(!new.claims.is_empty()),
        flag(!old.claims.is_empty()),
    ];
    x[..head.len()].copy_from_slice(&head);
    let framed = frame::pair_features(&new.frame, &old.frame);
    x[head.len()..head.len() + framed.len()].copy_from_slice(&framed);
    let tail = [
        cosine * cosine,
        flag(cued && cosine >= best_other),
        1.0 / candidates as f32,
        flag(cosine >= best_other) * cosine,
        framed[frame::RESHAPED].max(framed[frame::RESLOTTED]) * cosine,
        framed[frame::COVER_SHARE] * cosine,
    ];
    x[head.len() + framed.len()..].copy_from_slice(&tail);
    x
}

/// The highest cosine of the candidates `olds` but the `i`th (0 when it
/// is alone).
pub fn best_other<T>(olds: &[(T, f32)], i: usize) -> f32 {
    olds.iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, (_, c))| *c)
        .fold(0.0f32, f32::max)
}

/// Whether the model judges `old` for `new`: both are statements (it was
/// fitted on them, not on a conversation's turns) and their claims do not
/// restate each other.
pub fn judged(new: &Reading, old: &Reading) -> bool {
    frame::statement(&new.frame)
        && frame::statement(&old.frame)
        && !matches!(judge_claims(&new.claims, &old.claims), Verdict::Agrees)
}

/// The model's score (log-odds) of `x`.
pub fn score(model: &Model, x: &[f32; FEATURES.len()]) -> f32 {
    model.weights.iter().zip(x).map(|(w, v)| w * v).sum()
}

/// Adds to `verdicts` (the rules' of `olds`, each with its cosine to
/// `new`) the one `model` judges replaced, when the rules judged none: the
/// best scored candidate it judges ([`judged`]), from the threshold up.
pub fn judge(
    model: &Model,
    new: &Reading,
    olds: &[(&Reading, f32)],
    verdicts: &mut [Option<String>],
) {
    if verdicts.iter().any(Option::is_some) || !frame::statement(&new.frame) {
        return;
    }
    let best = olds
        .iter()
        .enumerate()
        .filter(|(_, (old, _))| judged(new, old))
        .map(|(i, (old, cosine))| {
            (
                i,
                score(
                    model,
                    &features(new, old, *cosine, best_other(olds, i), olds.len()),
                ),
            )
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((i, s)) = best
        && s >= model.threshold
    {
        verdicts[i] = Some(format!(
            "contradicted: the learned judge finds it replaced (score {s:.2}, cosine {:.2})",
            olds[i].1
        ));
    }
}

#[cfg(test)]
mod tests;
