//! Planning a write of memories (DESIGN §3): what each new memory
//! contradicts or repeats among its owner's stored memories and the items
//! before it in its batch, found before the write's transaction (which
//! checks it again).

use std::collections::{BTreeSet, HashMap};

use futures_util::{StreamExt as _, TryStreamExt as _};

use crate::domain::{ContradictionPolicy, MemoryType, Micros, NewMemory};
use crate::engine::contradictions::{
    CONTRADICTABLE, Contradiction, Contradictions, Found, Reading, folded, judge, read,
};
use crate::engine::entities;
use crate::engine::memories::{Write, prepare};
use crate::error::Result;

/// `new` as writes, each with what it contradicts under `policy` (to
/// invalidate, or to link as conflicting) and what it repeats: the stored
/// memories of its owner (see [`Contradictions::find`], looked up for
/// [`LOOKUPS_AT_ONCE`] items at a time) and the memories before it in
/// `new` of the same owner; `also` are more the first invalidates (what a
/// Remember supersedes), whatever the policy.
pub async fn plan(
    finder: &Contradictions,
    new: Vec<NewMemory>,
    also: Vec<Contradiction>,
    policy: ContradictionPolicy,
    now: Micros,
) -> Result<Vec<Write>> {
    // The entities each names are read while the database reads their
    // candidates (the lookups are polled first, up to that read).
    let mentions = async {
        new.iter()
            .map(|memory| entities::mentions(&memory.content))
            .collect::<Vec<_>>()
    };
    let (found, mentions) =
        futures_util::future::join(lookups(finder, &new, policy, now), mentions).await;
    let found = found?;
    let in_batch: Vec<Vec<(usize, String)>> = if policy != ContradictionPolicy::Off && new.len() > 1
    {
        let batch = InBatch::new(&new);
        (0..new.len()).map(|at| batch.contradicted_by(at)).collect()
    } else {
        vec![Vec::new(); new.len()]
    };
    let mut writes: Vec<Write> = Vec::with_capacity(new.len());
    let mut also = Some(also);
    for (((memory, found), in_batch), mentions) in
        new.into_iter().zip(found).zip(in_batch).zip(mentions)
    {
        let mut contradicts = also.take().unwrap_or_default();
        let mut found_here: Vec<Contradiction> = found
            .contradictions
            .into_iter()
            .filter(|f| !contradicts.iter().any(|c| c.id == f.id))
            .collect();
        // Items of a batch contradict earlier items too.
        for (earlier, reason) in in_batch {
            found_here.push(Contradiction {
                id: writes[earlier].insert.id.clone(),
                reason,
            });
        }
        let conflicts = if policy == ContradictionPolicy::Link {
            found_here
        } else {
            contradicts.append(&mut found_here);
            Vec::new()
        };
        writes.push(Write {
            mentions,
            insert: prepare(memory),
            contradicts,
            conflicts,
            near_duplicates: found.near_duplicates,
            merge: finder.merges_near_duplicates(),
        });
    }
    Ok(writes)
}

/// What each of `new` contradicts or repeats among its owner's stored
/// memories ([`Contradictions::find`]), nothing under policy `Off`.
async fn lookups(
    finder: &Contradictions,
    new: &[NewMemory],
    policy: ContradictionPolicy,
    now: Micros,
) -> Result<Vec<Found>> {
    if policy == ContradictionPolicy::Off {
        return Ok(vec![Found::default(); new.len()]);
    }
    let lookups: Vec<_> = new
        .iter()
        .map(|memory| {
            finder.find(
                &memory.scope,
                memory.level,
                memory.memory_type,
                &memory.content,
                memory.occurred_at.unwrap_or(now),
                now,
            )
        })
        .collect();
    futures_util::stream::iter(lookups)
        .buffered(LOOKUPS_AT_ONCE)
        .try_collect()
        .await
}

/// How many items of a batch look up what they contradict at once.
const LOOKUPS_AT_ONCE: usize = 8;

/// The items of a batch as the contradiction rules read them, with the
/// items each folded word is in: an item is judged only against the
/// earlier ones it shares a word with (two memories sharing none say
/// nothing of the same subject), not against every one before it.
#[derive(Default)]
struct InBatch<'a> {
    items: Vec<(&'a NewMemory, Reading, BTreeSet<String>)>,
    with_word: HashMap<String, Vec<usize>>,
}

impl<'a> InBatch<'a> {
    fn new(new: &'a [NewMemory]) -> InBatch<'a> {
        let mut batch = InBatch::default();
        for (at, memory) in new.iter().enumerate() {
            let words = folded(&memory.content);
            for word in &words {
                batch.with_word.entry(word.clone()).or_default().push(at);
            }
            batch.items.push((memory, read(&memory.content), words));
        }
        batch
    }

    /// The earlier items item `at` contradicts, and why.
    fn contradicted_by(&self, at: usize) -> Vec<(usize, String)> {
        let Some((memory, mine, words)) = self.items.get(at) else {
            return Vec::new();
        };
        let contradictable = |t: MemoryType| CONTRADICTABLE.contains(&t);
        if !contradictable(memory.memory_type) {
            return Vec::new();
        }
        let sharing: BTreeSet<usize> = words
            .iter()
            .filter_map(|word| self.with_word.get(word))
            .flat_map(|items| items.iter().copied().take_while(|&i| i < at))
            .collect();
        sharing
            .into_iter()
            .filter_map(|earlier| {
                let (them, theirs, _) = &self.items[earlier];
                (contradictable(them.memory_type)
                    && them.scope == memory.scope
                    && them.level == memory.level
                    && them.content != memory.content)
                    .then(|| judge(mine, theirs))
                    .flatten()
                    .map(|reason| (earlier, reason))
            })
            .collect()
    }
}
