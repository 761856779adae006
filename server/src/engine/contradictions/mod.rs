//! Contradictions (DESIGN §3, validity in time): a new memory that says
//! otherwise than an older valid memory of the same owner, about the same
//! subject and single-valued attribute, makes the older one no longer true.
//! Nothing is deleted: the older memory gets `valid_to` and names the new
//! one as what replaced it.
//!
//! How a write finds them: the valid memories of its owner the full-text
//! index (and the embedder, when there is one) finds closest to the new
//! one are judged together ([`judge_all`]). Each is judged by what both
//! claim of a single-valued attribute ([`claims`]) and by the frame rules
//! ([`frame`]): the new one is the old one's frame with other values, or
//! puts a value of the same shape in place of one, or is the same short
//! statement with one part swapped. When none of them is judged so and the
//! new one says something changed, the one it holds most of (or, with an
//! embedder, the one closest in meaning) is the one it says changed. With
//! an embedder, when no rule finds one, a logistic model fitted on
//! labelled sequences scores the candidates ([`learned`]). With
//! a language model configured, the model judges the candidates that share
//! something with the new memory instead ([`llm`]), the rules standing
//! when it fails. The candidates are found before the write's transaction
//! and checked again inside it.

mod claims;
mod frame;
mod gists;
mod learned;
mod llm;
pub mod near_duplicates;
mod words;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

pub use claims::{Claim, claims};
pub use frame::Frame;
pub use words::{OWNER, fold, folded};

use gists::Gists;
use near_duplicates::Gist;
use regex::Regex;

use crate::domain::{
    ContradictionPolicy, Memory, MemoryFilter, MemoryLevel, MemoryType, Micros, Scope,
};
use crate::engine::search::Retrieval;
use crate::error::Result;
use crate::index::TextQuery;
use crate::llm::LlmClient;
use crate::store::Store;

/// The content words a candidate shares with a new memory for the model to
/// be shown it (when the rules and the embedder say nothing of it).
const RELATED_WORDS: usize = 2;

/// How many of the closest stored memories a new memory is compared with
/// when an embedder or a model judges too (the vector search finds its
/// own, and the model is shown the closest).
const CANDIDATES: usize = 20;
/// How many when the rules alone judge: they read a change of what one
/// subject is said to be, so the memory changed shares the new one's
/// rarest words (its subject's and value's names, which the search is by)
/// and is among the closest few; reading more would cost every write of a
/// large scope more than it finds.
const RULE_CANDIDATES: usize = 10;
/// How many, when it can only be a near-duplicate of them (the closest
/// few are where a memory saying the same thing is).
const NEAR_CANDIDATES: usize = 5;

/// The most of a new memory's text its candidates are searched by.
const MAX_QUERY_BYTES: usize = 1024;
/// How many of those words, the rarest in the namespace: what the memory
/// is about (names, places, products, numbers) rather than the words
/// every memory has, each of which would visit most of the namespace.
const QUERY_TERMS: usize = 8;

/// An older memory a new one contradicts (or repeats), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contradiction {
    pub id: String,
    pub reason: String,
}

/// What a new memory is to the stored memories of its owner.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The ones it contradicts.
    pub contradictions: Vec<Contradiction>,
    /// The ones of its type it repeats in other words, closest first
    /// ([`near_duplicates`]).
    pub near_duplicates: Vec<Contradiction>,
}

/// What a memory says, as the rules read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    claims: Vec<Claim>,
    frame: Frame,
}

impl Reading {
    /// Whether this memory can contradict anything: it claims something, or
    /// says something changed. Nothing else is ever judged a contradiction,
    /// so a write of anything else looks nothing up (a lookup costs a write
    /// more than the write itself: the swap rule alone, which could judge
    /// an unclaimed statement of no change, does not pay for it).
    pub fn may_contradict(&self) -> bool {
        !self.claims.is_empty() || self.frame.cued()
    }
}

/// Compiles the rules' patterns (on first use otherwise: the first write
/// of a started server would wait for it).
pub fn warm_up() {
    std::hint::black_box(near_duplicates::gist("Alice works at Acme since 2024."));
}

/// Reads `text` for [`judge`]: its first [`MAX_READ_BYTES`] (a claim is a
/// statement, not a document, and a long text must cost no more).
pub fn read(text: &str) -> Reading {
    let text = cut(text, MAX_READ_BYTES);
    read_with(text, claims(text))
}

/// [`read`] with `text`'s claims already read (by [`claims_if_contradicting`]).
fn read_with(text: &str, claims: Vec<Claim>) -> Reading {
    Reading {
        claims,
        frame: frame::frame(text),
    }
}

/// Whether a memory saying `text` can contradict anything, as
/// [`Reading::may_contradict`] tells, but without reading its frame: a
/// write of anything else looks nothing up, and is told so quickly.
pub fn may_contradict(text: &str) -> bool {
    claims_if_contradicting(text).is_some()
}

/// What [`may_contradict`] reads: `text`'s claims when it may contradict
/// anything (for its reading, which is not read twice), else `None`.
fn claims_if_contradicting(text: &str) -> Option<Vec<Claim>> {
    let text = cut(text, MAX_READ_BYTES);
    let claims = claims(text);
    (!claims.is_empty() || frame::cued(text)).then_some(claims)
}

/// The most of a memory's text the rules read.
const MAX_READ_BYTES: usize = 2048;

/// Why `new` contradicts `old`, if it does: by their claims (a claim of
/// both about the same subject and attribute with different values, and
/// none restating `old`'s value; or `new` saying `old`'s value no longer
/// holds), else by their frames ([`frame::judge`]) unless a claim of both
/// agrees.
pub fn judge(new: &Reading, old: &Reading) -> Option<String> {
    let (n, o) = (&new.frame, &old.frame);
    let by_frames = || {
        frame::judge(n, o)
            .or_else(|| frame::judge_shaped(n, o))
            .or_else(|| frame::judge_swapped(n, o))
    };
    match judge_claims(&new.claims, &old.claims) {
        Verdict::Contradicts(reason) => Some(reason),
        Verdict::Agrees => None,
        Verdict::Unknown if other_attributes(new, old) || one_contact(new, old) => None,
        Verdict::Unknown => by_frames(),
    }
}

/// Whether one of two memories gives a phone number or email address and
/// the other none: a contact is told by its shape, so the other says
/// nothing of it (and the digits of a number are no other value).
fn one_contact(new: &Reading, old: &Reading) -> bool {
    let contact = |c: &Claim| c.attribute.starts_with("phone") || c.attribute.starts_with("email");
    new.claims.iter().any(contact) != old.claims.iter().any(contact)
}

/// Whether a claim is told by its shape rather than by what it is said
/// of: a note of a setting ("code freeze: 1 November"), a phone number or
/// email address wherever it is (a contact's, a team's), a day and time.
/// None tells that a memory is of another attribute, or that one restating
/// it says nothing else changed.
fn shaped(c: &Claim) -> bool {
    c.attribute == "setting"
        || c.attribute == "schedule"
        || c.attribute.starts_with("phone")
        || c.attribute.starts_with("email")
}

/// Whether both claim something, of different attributes only ("moved to
/// Berlin", "works at Acme"): not the same thing said otherwise.
fn other_attributes(new: &Reading, old: &Reading) -> bool {
    let named = |c: &&Claim| !shaped(c);
    new.claims.iter().any(|c| named(&c))
        && old.claims.iter().any(|c| named(&c))
        && !new
            .claims
            .iter()
            .any(|n| old.claims.iter().any(|o| same_attribute(n, o)))
}

/// [`judge`] for an older memory whose meaning is as close to the new
/// one's as `cosine` says: above [`CLOSE`], the frame rule lets the newer
/// one leave out a word more of the older one's frame (a paraphrase of its
/// subject rather than another subject).
pub fn judge_close(new: &Reading, old: &Reading, cosine: f32) -> Option<String> {
    judge(new, old).or_else(|| {
        let more = if cosine >= VERY_CLOSE {
            VERY_CLOSE_LEFT_OUT
        } else if cosine >= CLOSE {
            1
        } else {
            return None;
        };
        (!matches!(judge_claims(&new.claims, &old.claims), Verdict::Agrees))
            .then(|| frame::judge_leaving_out(&new.frame, &old.frame, more))
            .flatten()
    })
}

/// What `new` contradicts of `olds` (each with its cosine to `new`, 0
/// without an embedder): each by [`judge_close`]; when that finds none and
/// `new` says something changed, the one it holds the most words and
/// names of ([`frame::cover`]) — at least [`COVERED`] of them and
/// [`COVERED_WORDS`] — is the one it says changed (all of them when
/// several hold as many: one value said twice); when none holds that
/// many, the one closest in meaning, from [`MEANT`] up. Only those
/// [`frame::may_cover`] allows compete, and the winner claiming another
/// attribute than `new` does means no change known. A change said of one
/// thing is said of the thing most like it.
///
/// Without an embedder (`semantic` false) only a `new` that
/// [`Reading::may_contradict`] is judged: the lookup of its candidates
/// would cost any other write more than the write. With one, the vector
/// search finds them anyway, every `new` is judged, and when the rules
/// find nothing the learned judge ([`learned`]) scores the candidates.
pub fn judge_all(new: &Reading, olds: &[(&Reading, f32)], semantic: bool) -> Vec<Option<String>> {
    let mut verdicts = judge_all_at(new, olds, semantic, MEANT);
    if semantic {
        learned::judge(&learned::MODEL, new, olds, &mut verdicts);
    }
    verdicts
}

/// [`judge_all`] with `meant` for [`MEANT`].
fn judge_all_at(
    new: &Reading,
    olds: &[(&Reading, f32)],
    semantic: bool,
    meant: f32,
) -> Vec<Option<String>> {
    if !semantic && !new.may_contradict() {
        return vec![None; olds.len()];
    }
    let mut verdicts: Vec<Option<String>> = olds
        .iter()
        .map(|(old, cosine)| judge_close(new, old, *cosine))
        .collect();
    if verdicts.iter().any(Option::is_some) || !new.frame.cued() {
        return verdicts;
    }
    // The ones it may be saying changed, with how much of each it holds.
    let covers: Vec<Option<f32>> = olds
        .iter()
        .map(|(old, _)| {
            let (shared, of) = frame::cover(&new.frame, &old.frame);
            (frame::may_cover(&new.frame, &old.frame)
                && !matches!(judge_claims(&new.claims, &old.claims), Verdict::Agrees))
            .then(|| {
                if shared >= COVERED_WORDS {
                    shared as f32 / of as f32
                } else {
                    0.0
                }
            })
        })
        .collect();
    // The one most like it claiming another attribute than it does: the
    // change is of that other attribute, of nothing known.
    let vetoed: Vec<bool> = olds
        .iter()
        .map(|(old, _)| other_attributes(new, old))
        .collect();
    let best = covers.iter().flatten().copied().fold(0.0f32, f32::max);
    if best >= COVERED {
        let at_best = |i: usize| covers[i] == Some(best);
        if (0..olds.len()).any(|i| at_best(i) && vetoed[i]) {
            return verdicts;
        }
        for (verdict, cover) in verdicts.iter_mut().zip(&covers) {
            if *cover == Some(best) {
                *verdict = Some(format!(
                    "contradicted: it says what changed of this ({:.0}% of its words)",
                    best * 100.0
                ));
            }
        }
        return verdicts;
    }
    // Else the one closest in meaning, when close enough (with an
    // embedder: without one every cosine is 0).
    let closest = covers
        .iter()
        .zip(olds)
        .enumerate()
        .filter(|(_, (cover, _))| cover.is_some())
        .map(|(i, (_, (_, cosine)))| (i, *cosine))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((i, cosine)) = closest
        && cosine >= meant
        && !vetoed[i]
    {
        verdicts[i] = Some(format!(
            "contradicted: it says what changed of this (cosine {cosine:.2})"
        ));
    }
    verdicts
}

/// The cosine above which the older memory closest in meaning to a newer
/// one that says something changed is the one it says changed, when no
/// rule finds one (all-MiniLM-L6-v2; chosen on the dev set).
pub const MEANT: f32 = 0.5;

/// The least share of an older memory's words and names a newer one that
/// says something changed holds for [`judge_all`] to take it as the one
/// changed (chosen on the dev set).
pub const COVERED: f32 = 0.4;
/// The fewest of them.
pub const COVERED_WORDS: usize = 2;

/// The cosine above which two memories are close enough in meaning for
/// [`judge_close`] (all-MiniLM-L6-v2; chosen on the dev set).
pub const CLOSE: f32 = 0.65;
/// Above this cosine the newer one may leave out up to
/// [`VERY_CLOSE_LEFT_OUT`] words besides the verb.
pub const VERY_CLOSE: f32 = 0.75;
pub const VERY_CLOSE_LEFT_OUT: usize = 3;

/// What the claims of two memories say of each other.
enum Verdict {
    Contradicts(String),
    Agrees,
    Unknown,
}

fn judge_claims(new: &[Claim], old: &[Claim]) -> Verdict {
    let mut found = None;
    for n in new {
        for o in old {
            if !same_attribute(n, o) || o.negated || !same_subject(n, o) {
                continue;
            }
            let agree = overlap(n, o);
            if n.negated {
                if agree {
                    found.get_or_insert_with(|| reason(n, o, "no longer"));
                }
                continue;
            }
            if agree && !shaped(n) {
                // Restated: whatever else it says, it does not replace this.
                return Verdict::Agrees;
            }
            if agree {
                continue;
            }
            if replaces(n, o) {
                found.get_or_insert_with(|| reason(n, o, "now"));
            }
        }
    }
    found.map_or(Verdict::Unknown, Verdict::Contradicts)
}

/// Whether two claims name the same value (one's words within the
/// other's: "Acme" and "Acme Corp").
fn overlap(a: &Claim, b: &Claim) -> bool {
    // A title is the same only when it is all the same ("Senior
    // Engineering Manager" is not "Engineering Manager").
    if a.attribute == "title" {
        return a.value == b.value;
    }
    a.value.is_subset(&b.value) || b.value.is_subset(&a.value)
}

/// Whether `n`'s value replaces `o`'s. A preference replaces another only
/// of the same kind: one rejected by the other ("tabs over spaces"), or
/// the same thing with another qualifier ("dark mode", "light mode").
fn replaces(n: &Claim, o: &Claim) -> bool {
    if n.attribute == "price" {
        // A price in another currency is another market's ("$29 in the
        // US", "£24 in the UK").
        return currency(&n.value_text) == currency(&o.value_text)
            || currency(&n.value_text).is_none()
            || currency(&o.value_text).is_none();
    }
    if !n.attribute.starts_with("preference") {
        return true;
    }
    let rejected = |by: &Claim, other: &Claim| {
        !by.rejected.is_empty()
            && (other.value.is_subset(&by.rejected) || by.rejected.is_subset(&other.value))
    };
    let head = |c: &Claim| {
        words::raw_words(&c.value_text)
            .filter_map(words::fold)
            .last()
    };
    rejected(n, o) || rejected(o, n) || (head(n).is_some() && head(n) == head(o))
}

/// Whether two claims are of one attribute: the same, or a preference and
/// one of what for ("tabs" and "tabs for indentation").
fn same_attribute(a: &Claim, b: &Claim) -> bool {
    a.attribute == b.attribute
        || [a, b].iter().any(|c| c.attribute == "preference")
            && [a, b].iter().all(|c| c.attribute.starts_with("preference"))
}

/// The currency a price is written in, when it says.
fn currency(price: &str) -> Option<&'static str> {
    static CURRENCY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)R\$|A\$|C\$|CHF|Fr\.|[$€£¥]|\b(?:usd|eur|gbp)\b").expect("currency")
    });
    let found = CURRENCY.find(price)?.as_str().to_lowercase();
    Some(match found.as_str() {
        "$" | "usd" => "$",
        "€" | "eur" => "€",
        "£" | "gbp" => "£",
        "¥" => "¥",
        "r$" => "R$",
        "a$" => "A$",
        "c$" => "C$",
        _ => "CHF",
    })
}

/// Whether two claims are about the same subject: the same words, or one
/// leaving out names the other gives ("Alice" and "Alice Chen").
fn same_subject(a: &Claim, b: &Claim) -> bool {
    if a.subject == b.subject {
        return true;
    }
    // What recurs is named loosely ("Maya's piano lessons", "Maya has
    // piano"): one's words among the other's, and no other person's name.
    if a.attribute == "schedule" {
        return (a.subject.is_subset(&b.subject) || b.subject.is_subset(&a.subject))
            && (a.names.is_empty() || b.names.is_empty() || !a.names.is_disjoint(&b.names));
    }
    // A ticket's key names it alone ("the ticket OPS-311", "OPS-311").
    let ticket = |w: &&String| {
        w.split_once('-').is_some_and(|(key, number)| {
            key.len() >= 2
                && key.chars().all(char::is_alphanumeric)
                && !number.is_empty()
                && number.chars().all(|c| c.is_ascii_digit())
        })
    };
    // (A setting's subject is its key: "OPS-311 priority".) A status's
    // subject may be a ticket's number ("#8812").
    let number = |w: &&String| {
        a.attribute == "status" && w.len() >= 3 && w.chars().all(|c| c.is_ascii_digit())
    };
    if a.attribute != "setting"
        && a.subject
            .iter()
            .filter(|w| ticket(w) || number(w))
            .any(|w| b.subject.contains(w))
    {
        return true;
    }
    let (small, big) = if a.subject.len() <= b.subject.len() {
        (a, b)
    } else {
        (b, a)
    };
    !small.subject.is_empty()
        && !small.subject.contains(words::OWNER)
        && small.subject.is_subset(&big.subject)
        && big
            .subject
            .difference(&small.subject)
            .all(|w| big.names.contains(w))
}

fn reason(n: &Claim, o: &Claim, how: &str) -> String {
    let subject: Vec<&str> = n
        .subject
        .iter()
        .map(|w| if w == words::OWNER { "the owner" } else { w })
        .collect();
    if how == "no longer" {
        format!(
            "contradicted: {} of {} is no longer {}",
            n.attribute,
            subject.join(" "),
            o.value_text
        )
    } else {
        format!(
            "contradicted: {} of {} is now {} (was {})",
            n.attribute,
            subject.join(" "),
            n.value_text,
            o.value_text
        )
    }
}

/// Finds what new memories contradict.
pub struct Contradictions {
    store: Arc<dyn Store>,
    retrieval: Arc<Retrieval>,
    /// What a write that does not say does (`--contradictions`).
    default: ContradictionPolicy,
    /// Whether a near-duplicate merges into the memory it repeats
    /// (`--merge-near-duplicates`).
    merge_near_duplicates: bool,
    /// The model that judges the candidates, when one is configured.
    llm: Option<Arc<LlmClient>>,
    /// What the memories written and read lately say, by content: a busy
    /// owner's memories are candidates of one write after another, and
    /// reading one runs every rule's patterns.
    gists: Gists,
}

impl Contradictions {
    pub fn new(
        store: Arc<dyn Store>,
        retrieval: Arc<Retrieval>,
        default: ContradictionPolicy,
        merge_near_duplicates: bool,
        llm: Option<Arc<LlmClient>>,
    ) -> Contradictions {
        Contradictions {
            store,
            retrieval,
            default,
            merge_near_duplicates,
            llm,
            gists: Gists::default(),
        }
    }

    /// What a memory saying `content` says, read once while in use (a
    /// new memory's reading is there when it becomes a candidate itself).
    /// Kept by the part of it that is read, so a long memory costs the
    /// cache no more than that.
    fn gist(&self, content: &str) -> Arc<Gist> {
        let content = cut(content, MAX_READ_BYTES);
        if let Some(found) = self.gists.kept(content) {
            return found;
        }
        self.gists.keep(content, near_duplicates::gist(content))
    }

    /// Whether near-duplicates merge into what they repeat.
    pub fn merges_near_duplicates(&self) -> bool {
        self.merge_near_duplicates
    }

    /// The policy of a write that asked for `asked` (`None`: the default).
    pub fn policy(&self, asked: Option<ContradictionPolicy>) -> ContradictionPolicy {
        asked.unwrap_or(self.default)
    }

    /// The valid memories owned by `scope` at `level` that a new memory of
    /// `memory_type` saying `content`, true from `valid_from`, contradicts
    /// (none for an EVENT) or repeats: of those the full-text index finds
    /// closest to it (and, with an embedder, the vector index), the ones
    /// the rules judge contradicted ([`judge_all`] with their cosines),
    /// and those of its type it repeats in other words
    /// ([`near_duplicates::judge`]).
    pub async fn find(
        &self,
        scope: &Scope,
        level: MemoryLevel,
        memory_type: MemoryType,
        content: &str,
        valid_from: Micros,
        now: Micros,
    ) -> Result<Found> {
        // While the database cannot be reached the write fails at once
        // (UNAVAILABLE): the index must not be waited for first.
        if !*self.store.database_reachable().borrow() {
            return Ok(Found::default());
        }
        // An EVENT neither contradicts nor is contradicted: it is read only
        // to be merged with a near-duplicate.
        if memory_type == MemoryType::Event && !self.merge_near_duplicates {
            return Ok(Found::default());
        }
        let contradictable = memory_type != MemoryType::Event;
        // A memory that claims nothing and says nothing changed contradicts
        // little the rules could tell (the model and, with an embedder, the
        // swap rule may), and without either looks nothing up — the lookup
        // would cost such a write more than the write itself — unless
        // near-duplicates are merged (their closest few are read). So
        // linked near-duplicates are found among the candidates of memories
        // that claim something or say something changed. Which it is, is
        // told from its claims and change words before it is read in full.
        let judged_by_more = self.llm.is_some() || self.retrieval.semantic.is_some();
        let read = cut(content, MAX_READ_BYTES);
        let kept = self.gists.kept(read);
        let mut claims = None;
        let may_contradict = contradictable
            && (judged_by_more
                || match &kept {
                    Some(gist) => gist.reading().may_contradict(),
                    None => {
                        claims = claims_if_contradicting(read);
                        claims.is_some()
                    }
                });
        let limit = if may_contradict && judged_by_more {
            CANDIDATES
        } else if may_contradict {
            RULE_CANDIDATES
        } else if self.merge_near_duplicates {
            NEAR_CANDIDATES
        } else {
            return Ok(Found::default());
        };
        let mut memory_types = CONTRADICTABLE.to_vec();
        if !contradictable {
            memory_types = vec![memory_type];
        }
        let filter = MemoryFilter {
            levels: vec![level],
            memory_types,
            ..Default::default()
        };
        let query = cut(content, MAX_QUERY_BYTES);
        // The rest of the new memory is read while the database reads its
        // candidates (the lookup is polled first, up to that read).
        let read_in_full = async {
            match (kept, claims) {
                (Some(gist), _) => gist,
                (None, Some(claims)) => self.gists.keep(
                    read,
                    near_duplicates::gist_of(read, read_with(read, claims)),
                ),
                (None, None) => self.gist(read),
            }
        };
        let (closest, gist) = futures_util::future::join(
            self.closest(scope, level, &filter, query, limit, now),
            read_in_full,
        )
        .await;
        let (mut candidates, newest) = closest?;
        let new = gist.reading();
        // Of the newest the index has not applied, only those that share a
        // word with it (as the index's matches do): reading what all of
        // them say would cost a write under load more than the write.
        candidates.extend(
            newest
                .into_iter()
                .filter(|m| gist.shares_words_with(&m.content, 1)),
        );
        let mut cosines = HashMap::new();
        // One wait for every vector the check makes: past it, words alone.
        let waited = std::time::Instant::now();
        if let Some(semantic) = &self.retrieval.semantic
            && let Ok(vector) = semantic
                .embedder
                .embed_query(query, Some(EMBEDDING_WAIT))
                .await
        {
            let near = semantic.vectors.search(scope, &filter, now, &vector, limit);
            cosines.extend(near.iter().map(|m| (m.seq, m.cosine)));
            let found: Vec<i64> = candidates.iter().map(|m| m.seq).collect();
            cosines.extend(semantic.vectors.cosines(&scope.namespace, &vector, &found));
            let more: Vec<i64> = near
                .iter()
                .map(|m| m.seq)
                .filter(|seq| !found.contains(seq))
                .collect();
            if !more.is_empty() {
                candidates.extend(
                    self.store
                        .memories_by_seq(scope, &filter, &more, now)
                        .await?,
                );
            }
            // Memories written moments ago may have no vector yet: theirs
            // are made here.
            let unembedded: Vec<&Memory> = candidates
                .iter()
                .filter(|m| !cosines.contains_key(&m.seq) && m.owned_by(scope, level))
                .collect();
            if !unembedded.is_empty() {
                let texts: Vec<String> = unembedded.iter().map(|m| m.content.clone()).collect();
                let left = EMBEDDING_WAIT.saturating_sub(waited.elapsed());
                if let Ok(Ok(vectors)) =
                    tokio::time::timeout(left, semantic.embedder.embed_cached(&texts)).await
                {
                    for (memory, other) in unembedded.iter().zip(vectors) {
                        cosines.insert(memory.seq, crate::embed::dot(&vector, &other));
                    }
                }
            }
        }
        let semantic = self.retrieval.semantic.is_some();
        let mut found = Found::default();
        let mut repeats = Vec::new();
        // The candidates it may contradict, with what they say and how
        // close they are: judged together, as the closest of them matters.
        let mut judged: Vec<(Memory, Arc<Gist>, f32)> = Vec::new();
        for old in candidates {
            if !old.owned_by(scope, level) || old.content == content {
                continue;
            }
            let cosine = cosines.get(&old.seq).copied();
            let semantic_cosine = cosine.filter(|_| semantic);
            let theirs = self.gist(&old.content);
            // Compared in full only when close enough to be one.
            let near = (old.memory_type == memory_type
                && near_duplicates::may_repeat(&gist, &theirs, semantic_cosine))
            .then(|| near_duplicates::judge(&gist, &theirs, semantic_cosine))
            .flatten();
            if let Some(reason) = near {
                repeats.push((cosine.unwrap_or(0.0), Contradiction { id: old.id, reason }));
                continue;
            }
            if may_contradict {
                judged.push((old, theirs, cosine.unwrap_or(0.0)));
            }
        }
        let olds: Vec<(&Reading, f32)> = judged
            .iter()
            .map(|(_, theirs, cosine)| (theirs.reading(), *cosine))
            .collect();
        let verdicts = judge_all(new, &olds, semantic);
        // What the model (when there is one) is shown: the candidates that
        // share something with the new memory, closest first.
        let mut for_the_model: Vec<&Memory> = Vec::new();
        for ((old, theirs, cosine), verdict) in judged.iter().zip(verdicts) {
            let ruled = verdict.map(|reason| Contradiction {
                id: old.id.clone(),
                // Stored earlier but true later (the new one is an older
                // truth): the new one is the one replaced, and the reason
                // is told that way round when the rules can tell it.
                reason: if old.valid_from > valid_from {
                    judge_close(theirs.reading(), new, *cosine).unwrap_or(reason)
                } else {
                    reason
                },
            });
            if self.llm.is_some()
                && for_the_model.len() < llm::MAX_CANDIDATES
                && (ruled.is_some()
                    || *cosine >= CLOSE
                    || gist.shares_words_with(&old.content, RELATED_WORDS))
            {
                for_the_model.push(old);
            }
            found.contradictions.extend(ruled);
        }
        repeats.sort_by(|a, b| b.0.total_cmp(&a.0));
        found.near_duplicates = repeats.into_iter().map(|(_, r)| r).collect();
        if let Some(model) = &self.llm
            && !for_the_model.is_empty()
        {
            let shown: Vec<llm::Shown> = for_the_model
                .iter()
                .map(|m| llm::Shown {
                    id: &m.id,
                    content: &m.content,
                })
                .collect();
            match llm::judge(model, content, &shown).await {
                Ok(judged) => found.contradictions = judged,
                Err(error) => tracing::warn!(
                    %error,
                    "the LLM contradiction judge failed; the rules' verdict stands"
                ),
            }
        }
        Ok(found)
    }

    /// The owner's valid memories of `filter` whose words are closest to
    /// `query`, from the index as far as it has applied the change feed
    /// (without waiting for it, which would make every write wait for the
    /// others in flight); and apart, those of the first [`MAX_UNAPPLIED`]
    /// changes after that (an agent's own last writes, unless a burst of
    /// others' came first: those are missed until the index has them).
    async fn closest(
        &self,
        scope: &Scope,
        level: MemoryLevel,
        filter: &MemoryFilter,
        query: &str,
        limit: usize,
        now: Micros,
    ) -> Result<(Vec<Memory>, Vec<Memory>)> {
        let (matches, applied) = self.retrieval.text.search_applied(&TextQuery {
            scope,
            filter,
            text: query,
            limit,
            now,
            max_terms: Some(QUERY_TERMS),
            extra_terms: &[],
        })?;
        let seqs: Vec<i64> = matches.iter().map(|m| m.seq).collect();
        let closest = if seqs.is_empty() {
            Vec::new()
        } else {
            self.store
                .memories_by_seq(scope, filter, &seqs, now)
                .await?
        };
        // Nothing to read from the feed when the index has applied it all
        // (a quiet server, or one client writing).
        let tail = if self.retrieval.text.lag_behind(applied) == 0 {
            Vec::new()
        } else {
            self.store
                .memories_changed_after(scope, filter, applied, MAX_UNAPPLIED, now)
                .await?
        };
        let tail = tail
            .into_iter()
            .filter(|memory| {
                memory.owned_by(scope, level)
                    && memory.valid_to.is_none()
                    && !closest.iter().any(|m| m.seq == memory.seq)
            })
            .collect();
        Ok((closest, tail))
    }
}

/// The kinds of memory that hold while true, so a newer one can make them
/// no longer true. An EVENT happened at its time and stays so: it neither
/// contradicts nor is contradicted.
pub const CONTRADICTABLE: [MemoryType; 5] = [
    MemoryType::Fact,
    MemoryType::Preference,
    MemoryType::Lesson,
    MemoryType::Decision,
    MemoryType::Note,
];

/// The most changes a write reads from the feed beyond what the index has
/// applied.
const MAX_UNAPPLIED: usize = 16;

/// How long a write waits, in all, for the vectors its contradiction check
/// makes (its own, and those of candidates written moments ago) before it
/// judges by words only.
const EMBEDDING_WAIT: Duration = Duration::from_millis(500);

/// The first `max` bytes of `text`, cut at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

#[cfg(test)]
mod tests;
