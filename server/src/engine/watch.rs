//! WatchMemories (DESIGN §4, §7): which changes of its namespace's feed a
//! watcher is shown, and following that feed from a position as it grows.
//!
//! The change feed is the one ordered record: a watch reads it from its
//! position on and wakes when its namespace changes ([`Wakeups`]), but a
//! wake-up is only that — whatever caused it, the watch reads the feed
//! itself, so nothing is missed if a wake-up is spurious (or a notification
//! is lost, on a backend whose head moves by notification). A watcher of a
//! quiet namespace costs no query however much the others write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::domain::{
    Actor, ChangeAction, FeedEvent, Memory, MemoryLevel, MemoryType, Micros, Scope, Subject,
    now_micros,
};
use crate::error::{Error, Result};
use crate::store::Store;

/// How many changes are read from the store at a time. Each carries its
/// memory, so this bounds what one watcher holds while it sorts a batch
/// (the edge then sends at most 3 MiB of it, see `grpc::watch`).
pub const FEED_BATCH: usize = 100;

/// The least time between two reads of the feed by one watcher while it
/// waits for changes: the commits of a burst are read in one query rather
/// than one each, so however fast the server writes, a watcher costs at most
/// this many queries a second. (A change after a quiet spell is read at
/// once.)
const MIN_READ_INTERVAL: Duration = Duration::from_millis(20);

/// Above this many changes between two looks at the head (an import, a
/// Forget), every watcher is woken rather than the changes' namespaces
/// read: a watcher's own read then finds what is its.
const WAKE_ALL_ABOVE: i64 = 10_000;

/// Wakes the watchers of a namespace when a change of it is committed. One
/// task follows the feed's head for the whole server: when the head moves
/// and anyone watches, it reads which namespaces the new changes are of
/// (one query, at most one per [`MIN_READ_INTERVAL`]) and wakes only their
/// watchers.
pub struct Wakeups {
    /// Each watched namespace's signal, dropped with its last watcher
    /// (pruned as the head moves). The value is the head when it was sent.
    namespaces: Mutex<HashMap<String, Weak<watch::Sender<i64>>>>,
}

/// A watcher's wake-up: changes when its namespace may have a change after
/// what the watcher read before it looked at this.
pub struct Wakeup {
    receiver: watch::Receiver<i64>,
    /// Keeps the namespace's signal registered while the watch lives.
    _sender: Arc<watch::Sender<i64>>,
}

impl Wakeups {
    /// Starts following `store`'s feed head; the task ends with the last
    /// handle or with the store (it holds neither alive).
    pub fn spawn(store: &Arc<dyn Store>) -> Arc<Wakeups> {
        let wakeups = Arc::new(Wakeups {
            namespaces: Mutex::default(),
        });
        let mut head = store.feed_head();
        let (handle, store) = (Arc::downgrade(&wakeups), Arc::downgrade(store));
        tokio::spawn(async move {
            let mut seen = *head.borrow_and_update();
            while head.changed().await.is_ok() {
                let (Some(wakeups), Some(store)) = (handle.upgrade(), store.upgrade()) else {
                    return;
                };
                let read_at = Instant::now();
                let newest = *head.borrow_and_update();
                wakeups.wake(&*store, seen, newest).await;
                seen = newest;
                drop((wakeups, store));
                tokio::time::sleep_until(read_at + MIN_READ_INTERVAL).await;
            }
        });
        wakeups
    }

    /// A wake-up for a watcher of `namespace`, registered from now on.
    pub fn subscribe(&self, namespace: &str) -> Wakeup {
        let mut namespaces = self.lock();
        let sender = match namespaces.get(namespace).and_then(Weak::upgrade) {
            Some(sender) => sender,
            None => {
                let sender = Arc::new(watch::Sender::new(0));
                namespaces.insert(namespace.to_owned(), Arc::downgrade(&sender));
                sender
            }
        };
        Wakeup {
            receiver: sender.subscribe(),
            _sender: sender,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Weak<watch::Sender<i64>>>> {
        self.namespaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the watchers of the namespaces changed in `(after, upto]`:
    /// all of them when that range is long, or cannot be read.
    async fn wake(&self, store: &dyn Store, after: i64, upto: i64) {
        let watched = {
            let mut namespaces = self.lock();
            namespaces.retain(|_, sender| sender.strong_count() > 0);
            namespaces.len()
        };
        if watched == 0 {
            return;
        }
        let changed = if upto - after > WAKE_ALL_ABOVE {
            None
        } else {
            match store.changed_namespaces(after, upto).await {
                Ok(changed) => Some(changed),
                Err(err) => {
                    tracing::warn!(error = %err, "reading which namespaces changed failed; waking every watcher");
                    None
                }
            }
        };
        let namespaces = self.lock();
        let woken: Vec<Arc<watch::Sender<i64>>> = match changed {
            Some(changed) => changed
                .iter()
                .filter_map(|namespace| namespaces.get(namespace)?.upgrade())
                .collect(),
            None => namespaces.values().filter_map(Weak::upgrade).collect(),
        };
        drop(namespaces);
        for sender in woken {
            sender.send_replace(upto);
        }
    }
}

/// Only events of memories that match every set field, as ListMemories'
/// filter of the same name does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchFilter {
    pub memory_types: Vec<MemoryType>,
    pub levels: Vec<MemoryLevel>,
    /// A memory must carry all of them.
    pub tags: Vec<String>,
}

impl WatchFilter {
    fn matches(&self, subject: &Subject) -> bool {
        (self.memory_types.is_empty() || self.memory_types.contains(&subject.memory_type()))
            && (self.levels.is_empty() || self.levels.contains(&subject.level()))
            && self.tags.iter().all(|tag| subject.tags().contains(tag))
    }
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// After the newest committed change: whatever is committed from now on.
    Now,
    /// After the change with this number (a position a watch handed out).
    After(i64),
}

/// A validated WatchMemories request.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchRequest {
    pub scope: Scope,
    pub filter: WatchFilter,
    pub start: Start,
}

/// A change as a watcher is shown it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The change's number in the feed: a watch resumed after it goes on
    /// with the next change.
    pub seq: i64,
    pub memory_id: String,
    pub action: ChangeAction,
    pub time: Option<Micros>,
    pub actor: Actor,
    pub changed_fields: Vec<String>,
    /// The memory as GetMemory would return it now: the state this change
    /// left it in, or a later one. `None` once it is removed or expired.
    pub memory: Option<Memory>,
    /// Whether the memory changed again after this change (or was removed):
    /// the events of those changes follow.
    pub superseded: bool,
}

/// What a watcher of `scope` with `filter` is shown of `event`, if
/// anything. Visibility is the memory's (DESIGN §3) — one that is gone is
/// judged by its tombstone — and the filter is matched against the memory
/// as it is now (as it was when it went, for a removed one), since that is
/// the state the event shows.
pub fn shown(scope: &Scope, filter: &WatchFilter, event: FeedEvent, now: Micros) -> Option<Event> {
    let subject = &event.subject;
    if !scope.sees(subject.level(), subject.scope()) || !filter.matches(subject) {
        return None;
    }
    let (memory, superseded) = match event.subject {
        Subject::Stored(memory) => {
            let superseded = memory.version != event.version;
            // An expired memory is never returned (DESIGN §3), here neither.
            let current = memory.expire_time.is_none_or(|expiry| expiry > now);
            (current.then_some(*memory), superseded)
        }
        Subject::Removed(_) => (None, !event.action.removes()),
    };
    Some(Event {
        seq: event.seq,
        memory_id: event.memory_id,
        action: event.action,
        time: event.time,
        actor: event.actor,
        changed_fields: event.changed_fields,
        memory,
        superseded,
    })
}

/// Events for a watcher, and how far the feed was read for them.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// Oldest first; empty when the watch went quiet.
    pub events: Vec<Event>,
    /// The number of the last change read: past every event, and past the
    /// changes after them that the watcher is not shown.
    pub end: i64,
}

/// A watcher following one namespace's feed from a position.
pub struct Watch {
    store: Arc<dyn Store>,
    scope: Scope,
    filter: WatchFilter,
    /// Every change up to it has been shown, or is not for this watcher.
    position: i64,
    wakeup: Wakeup,
    /// Whether the last read found nothing more after the position: the
    /// next one waits for a wake-up.
    caught_up: bool,
    /// When the feed was last read.
    read_at: Instant,
}

impl Watch {
    /// A watch of `request`'s namespace from its start. A position ahead of
    /// the feed cannot have come from this database (it is
    /// INVALID_ARGUMENT); one before what the feed still keeps cannot go on
    /// without a gap (FAILED_PRECONDITION).
    pub async fn start(
        store: Arc<dyn Store>,
        wakeups: &Wakeups,
        request: WatchRequest,
    ) -> Result<Watch> {
        // Subscribed before the feed is read, so no commit after the start
        // goes by unnoticed.
        let wakeup = wakeups.subscribe(&request.scope.namespace);
        let bounds = store.feed_bounds().await?;
        let position = match request.start {
            Start::Now => bounds.newest,
            Start::After(seq) if seq > bounds.newest => {
                return Err(Error::invalid(
                    "cursor",
                    "is ahead of this database's change feed: it comes from another database",
                ));
            }
            Start::After(seq) if seq < bounds.oldest => {
                return Err(Error::FailedPrecondition(
                    "the cursor is older than the change feed still keeps, so changes after it \
                     are lost: list the memories again and watch from now (without a cursor)"
                        .into(),
                ));
            }
            Start::After(seq) => seq,
        };
        Ok(Watch {
            store,
            scope: request.scope,
            filter: request.filter,
            position,
            wakeup,
            caught_up: false,
            read_at: Instant::now(),
        })
    }

    /// Every change up to this number has been shown, or is not for this
    /// watcher: the watch goes on after it.
    pub fn position(&self) -> i64 {
        self.position
    }

    /// Records that the events up to the change `seq` were delivered.
    pub fn advance(&mut self, seq: i64) {
        self.position = self.position.max(seq);
    }

    /// The next events for this watcher after its position: as soon as
    /// there are any (at most [`FEED_BATCH`] changes' worth), or none once
    /// `quiet` has passed without one (also while it is still reading a
    /// backlog of changes it is not shown). The position moves only past changes
    /// the watcher is not shown ([`Watch::advance`] moves it past events),
    /// so dropping the future at any await loses nothing.
    pub async fn next(&mut self, quiet: Duration) -> Result<Batch> {
        let give_up = Instant::now() + quiet;
        loop {
            if self.caught_up {
                // Nothing of its namespace was committed since the last
                // read: wait for a change (or for `quiet` to pass).
                tokio::select! {
                    biased;
                    () = tokio::time::sleep_until(give_up) => {
                        return Ok(Batch { events: Vec::new(), end: self.position });
                    }
                    // Never closed: this watch holds its namespace's signal.
                    _ = self.wakeup.receiver.changed() => {}
                }
                // Seen now: should the future be dropped before the read,
                // the next call reads all the same.
                self.caught_up = false;
                tokio::time::sleep_until(self.read_at + MIN_READ_INTERVAL).await;
            }
            // Whatever is committed after this wakes the wait above.
            self.wakeup.receiver.borrow_and_update();
            self.read_at = Instant::now();
            crate::metrics::recorders().watch_reads.inc();
            let events = self
                .store
                .memory_events(&self.scope.namespace, self.position, FEED_BATCH)
                .await?;
            let caught_up = events.len() < FEED_BATCH;
            let end = events.last().map_or(self.position, |event| event.seq);
            let now = now_micros();
            let events: Vec<Event> = events
                .into_iter()
                .filter_map(|event| shown(&self.scope, &self.filter, event, now))
                .collect();
            if !events.is_empty() {
                // Read again next time: the caller may take only some of
                // them, and more may follow.
                return Ok(Batch { events, end });
            }
            self.position = end;
            self.caught_up = caught_up;
            // A long backlog of changes this watcher is not shown is read a
            // batch at a time, with a heartbeat (carrying how far it got) at
            // least every `quiet`.
            if !caught_up && Instant::now() >= give_up {
                return Ok(Batch {
                    events: Vec::new(),
                    end: self.position,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Tombstone;

    fn owner(namespace: &str) -> Scope {
        Scope {
            namespace: namespace.into(),
            ..Scope::default()
        }
    }

    fn stored(level: MemoryLevel, scope: Scope, version: i64) -> Subject {
        Subject::Stored(Box::new(Memory {
            scope,
            level,
            version,
            tags: vec!["deploy".into()],
            ..Memory::plain(1, "ns", "content")
        }))
    }

    fn event(action: ChangeAction, version: i64, subject: Subject) -> FeedEvent {
        FeedEvent {
            seq: 7,
            memory_id: "m1".into(),
            action,
            version,
            time: Some(1),
            actor: Actor::default(),
            changed_fields: Vec::new(),
            subject,
        }
    }

    #[test]
    fn visibility_follows_the_memory_even_once_it_is_gone() {
        let session = Scope {
            session_id: "s1".into(),
            ..owner("ns")
        };
        let tombstone = Subject::Removed(Tombstone {
            scope: session.clone(),
            level: MemoryLevel::Conversation,
            memory_type: MemoryType::Fact,
            tags: Vec::new(),
        });
        let deleted = || event(ChangeAction::Deleted, 2, tombstone.clone());
        let any = WatchFilter::default();
        assert!(shown(&session, &any, deleted(), 0).is_some());
        let elsewhere = Scope {
            session_id: "s2".into(),
            ..owner("ns")
        };
        assert_eq!(shown(&elsewhere, &any, deleted(), 0), None);
        assert_eq!(shown(&owner("other"), &any, deleted(), 0), None);
    }

    #[test]
    fn the_memory_is_shown_as_it_is_now_and_an_older_change_says_it_was_superseded() {
        let any = WatchFilter::default();
        let now = stored(MemoryLevel::Global, owner("ns"), 3);
        let latest = shown(
            &owner("ns"),
            &any,
            event(ChangeAction::Updated, 3, now.clone()),
            0,
        );
        let latest = latest.expect("shown");
        assert!(!latest.superseded);
        assert_eq!(latest.memory.map(|m| m.version), Some(3));
        let older = shown(&owner("ns"), &any, event(ChangeAction::Created, 1, now), 0);
        let older = older.expect("shown");
        assert!(older.superseded, "version 3 followed");
        assert_eq!(older.memory.map(|m| m.version), Some(3));

        let gone = Subject::Removed(Tombstone {
            scope: owner("ns"),
            level: MemoryLevel::Global,
            memory_type: MemoryType::Fact,
            tags: Vec::new(),
        });
        let created = shown(
            &owner("ns"),
            &any,
            event(ChangeAction::Created, 1, gone.clone()),
            0,
        );
        assert_eq!(
            created.as_ref().map(|e| (e.superseded, e.memory.is_none())),
            Some((true, true))
        );
        let deleted = shown(&owner("ns"), &any, event(ChangeAction::Deleted, 1, gone), 0);
        assert_eq!(
            deleted.map(|e| e.superseded),
            Some(false),
            "nothing follows a removal"
        );
    }

    #[test]
    fn an_expired_memory_is_not_shown_but_its_event_is() {
        let mut memory = Memory::plain(1, "ns", "soon gone");
        memory.expire_time = Some(100);
        let event = event(ChangeAction::Created, 1, Subject::Stored(Box::new(memory)));
        let before = shown(&owner("ns"), &WatchFilter::default(), event.clone(), 99);
        assert!(before.and_then(|e| e.memory).is_some());
        let after = shown(&owner("ns"), &WatchFilter::default(), event, 100);
        assert_eq!(after.map(|e| e.memory), Some(None));
    }

    #[test]
    fn filters_match_types_levels_and_every_tag() {
        let subject = stored(MemoryLevel::Global, owner("ns"), 1);
        let matches = |filter: WatchFilter| {
            shown(
                &owner("ns"),
                &filter,
                event(ChangeAction::Created, 1, subject.clone()),
                0,
            )
            .is_some()
        };
        assert!(matches(WatchFilter::default()));
        assert!(matches(WatchFilter {
            memory_types: vec![MemoryType::Note, MemoryType::Fact],
            levels: vec![MemoryLevel::Global],
            tags: vec!["deploy".into()],
        }));
        assert!(!matches(WatchFilter {
            memory_types: vec![MemoryType::Note],
            ..WatchFilter::default()
        }));
        assert!(!matches(WatchFilter {
            levels: vec![MemoryLevel::Workspace],
            ..WatchFilter::default()
        }));
        assert!(!matches(WatchFilter {
            tags: vec!["deploy".into(), "db".into()],
            ..WatchFilter::default()
        }));
    }
}
