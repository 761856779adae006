//! Which indexed memories a search may see: the visibility rule of DESIGN §3
//! and the search's filters, decided inside the index.
//!
//! The rule is written once, over keys of any type: strings for the
//! uncommitted tail, and a segment's term ordinals for committed segments
//! (each string is looked up in the segment's dictionary once per search, so
//! checking a document compares integers).

use std::collections::HashSet;
use std::sync::Arc;

use crate::domain::{MemoryFilter, MemoryLevel, Micros, Scope, TimeRange, Validity};

/// Who may see a memory through its agent or user field.
#[derive(Debug, Clone, PartialEq)]
pub enum Owner<K> {
    /// The scope names none: any value is visible.
    Anyone,
    /// The memory must leave the field empty or match this key (`None`: a
    /// key no memory here has, so only empty ones match).
    EmptyOr(Option<K>),
}

/// A search's visibility and filters.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule<K> {
    /// The project whose WORKSPACE memories are visible, if any.
    pub workspace: Option<K>,
    /// The session whose CONVERSATION memories are visible, if any.
    pub conversation: Option<K>,
    pub agent: Owner<K>,
    pub user: Owner<K>,
    /// Allowed type codes as a bit set (bit n = code n); 0 allows all.
    pub types: u64,
    /// Allowed level codes as a bit set; 0 allows all.
    pub levels: u64,
    /// Tags a memory must all have.
    pub tags: Vec<K>,
    /// Metadata entries (`key\0value`) a memory must all have.
    pub metadata: Vec<K>,
    pub min_importance: f64,
    /// Of the create time.
    pub created: TimeRange,
    /// Of the time the remembered thing happened.
    pub occurred: TimeRange,
    /// Memories that expire at or before this are invisible.
    pub now: Micros,
    /// Which memories count as true.
    pub validity: Validity,
    /// Only these memories (those naming the filter's entities), when set.
    pub mentioning: Option<Arc<HashSet<i64>>>,
}

/// What a rule reads of a document.
pub trait DocView<K> {
    fn seq(&self) -> i64;
    fn level(&self) -> u64;
    fn memory_type(&self) -> u64;
    fn project(&self) -> Option<K>;
    fn session(&self) -> Option<K>;
    fn agent(&self) -> Option<K>;
    fn user(&self) -> Option<K>;
    fn has_tag(&self, tag: &K) -> bool;
    fn has_metadata(&self, entry: &K) -> bool;
    fn importance(&self) -> f64;
    fn create_time(&self) -> Micros;
    fn occurred_at(&self) -> Micros;
    fn expire_time(&self) -> Micros;
    /// Since when and until when it is true; `NEVER` for an unset end.
    fn validity(&self) -> (Micros, Micros);
}

const GLOBAL: u64 = MemoryLevel::Global as u64;
const WORKSPACE: u64 = MemoryLevel::Workspace as u64;
const CONVERSATION: u64 = MemoryLevel::Conversation as u64;

fn bits(codes: impl Iterator<Item = i32>) -> u64 {
    codes
        .filter_map(|code| u32::try_from(code).ok().filter(|&c| c < 64))
        .fold(0, |set, code| set | 1 << code)
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}

impl Rule<String> {
    /// The rule of a search from `scope` with `filter` at `now`.
    pub fn new(scope: &Scope, filter: &MemoryFilter, now: Micros) -> Rule<String> {
        let owner = |value: &str| match non_empty(value) {
            None => Owner::Anyone,
            some => Owner::EmptyOr(some),
        };
        Rule {
            workspace: non_empty(&scope.project_id),
            conversation: non_empty(&scope.session_id),
            agent: owner(&scope.agent_id),
            user: owner(&scope.user_id),
            types: bits(filter.memory_types.iter().map(|t| t.code())),
            levels: bits(filter.levels.iter().map(|l| l.code())),
            tags: filter.tags.clone(),
            metadata: filter
                .metadata
                .iter()
                .map(|(key, value)| super::document::metadata_entry(key, value))
                .collect(),
            min_importance: filter.min_importance,
            created: filter.created,
            occurred: filter.occurred,
            now,
            validity: filter.validity,
            mentioning: filter.mentioning.clone(),
        }
    }
}

/// The document field a rule's key is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyField {
    Project,
    Session,
    Agent,
    User,
    Tags,
    Metadata,
}

impl<K: PartialEq> Rule<K> {
    /// The same rule over other keys: `key` maps each key of a field, `None`
    /// where no document has it. `None` when nothing can match (a required
    /// tag or metadata entry no document has).
    pub fn resolve<'s, L>(
        &'s self,
        mut key: impl FnMut(KeyField, &'s K) -> Option<L>,
    ) -> Option<Rule<L>> {
        let mut owner = |field: KeyField, owner: &'s Owner<K>| match owner {
            Owner::Anyone => Owner::Anyone,
            Owner::EmptyOr(k) => Owner::EmptyOr(k.as_ref().and_then(|k| key(field, k))),
        };
        let agent = owner(KeyField::Agent, &self.agent);
        let user = owner(KeyField::User, &self.user);
        let tags = self
            .tags
            .iter()
            .map(|k| key(KeyField::Tags, k))
            .collect::<Option<Vec<L>>>()?;
        let metadata = self
            .metadata
            .iter()
            .map(|k| key(KeyField::Metadata, k))
            .collect::<Option<Vec<L>>>()?;
        Some(Rule {
            workspace: self
                .workspace
                .as_ref()
                .and_then(|k| key(KeyField::Project, k)),
            conversation: self
                .conversation
                .as_ref()
                .and_then(|k| key(KeyField::Session, k)),
            agent,
            user,
            types: self.types,
            levels: self.levels,
            tags,
            metadata,
            min_importance: self.min_importance,
            created: self.created,
            occurred: self.occurred,
            now: self.now,
            validity: self.validity,
            mentioning: self.mentioning.clone(),
        })
    }

    /// Whether a document true from `from` until `to` (`NEVER` for unset)
    /// counts under the rule's validity.
    fn admits(&self, (from, to): (Micros, Micros)) -> bool {
        let to = (to != super::document::NEVER).then_some(to);
        self.validity.admits(from, to, self.now)
    }

    /// Whether `doc` is visible and passes the filters.
    pub fn accepts(&self, doc: &impl DocView<K>) -> bool {
        let level = doc.level();
        let visible = match level {
            GLOBAL => true,
            WORKSPACE => self.workspace.is_some() && doc.project() == self.workspace,
            CONVERSATION => self.conversation.is_some() && doc.session() == self.conversation,
            _ => false,
        };
        visible
            && doc.expire_time() > self.now
            && self
                .mentioning
                .as_ref()
                .is_none_or(|seqs| seqs.contains(&doc.seq()))
            && self.admits(doc.validity())
            && owned(&self.agent, || doc.agent())
            && owned(&self.user, || doc.user())
            && (self.types == 0 || in_set(self.types, doc.memory_type()))
            && (self.levels == 0 || in_set(self.levels, level))
            && (self.min_importance <= 0.0 || doc.importance() >= self.min_importance)
            && in_range(self.created, || doc.create_time())
            && in_range(self.occurred, || doc.occurred_at())
            && self.tags.iter().all(|tag| doc.has_tag(tag))
            && self.metadata.iter().all(|entry| doc.has_metadata(entry))
    }
}

/// Whether `time` is in `range`; read only when the range has an end (a
/// committed segment reads it from a column).
fn in_range(range: TimeRange, time: impl FnOnce() -> Micros) -> bool {
    range.is_open() || range.contains(time())
}

fn owned<K: PartialEq>(owner: &Owner<K>, value: impl FnOnce() -> Option<K>) -> bool {
    match owner {
        Owner::Anyone => true,
        Owner::EmptyOr(key) => match value() {
            None => true,
            Some(value) => key.as_ref() == Some(&value),
        },
    }
}

fn in_set(set: u64, code: u64) -> bool {
    code < 64 && set & (1 << code) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::MemoryType;

    /// A document over string keys.
    #[derive(Clone)]
    struct Doc {
        level: MemoryLevel,
        project: &'static str,
        session: &'static str,
        agent: &'static str,
        user: &'static str,
        memory_type: MemoryType,
        tags: Vec<&'static str>,
        create_time: Micros,
        occurred_at: Micros,
        expire_time: Micros,
    }

    fn some(value: &'static str) -> Option<String> {
        (!value.is_empty()).then(|| value.to_owned())
    }

    impl DocView<String> for Doc {
        fn seq(&self) -> i64 {
            0
        }
        fn level(&self) -> u64 {
            self.level as u64
        }
        fn memory_type(&self) -> u64 {
            self.memory_type as u64
        }
        fn project(&self) -> Option<String> {
            some(self.project)
        }
        fn session(&self) -> Option<String> {
            some(self.session)
        }
        fn agent(&self) -> Option<String> {
            some(self.agent)
        }
        fn user(&self) -> Option<String> {
            some(self.user)
        }
        fn has_tag(&self, tag: &String) -> bool {
            self.tags.contains(&tag.as_str())
        }
        fn has_metadata(&self, _: &String) -> bool {
            false
        }
        fn importance(&self) -> f64 {
            0.5
        }
        fn create_time(&self) -> Micros {
            self.create_time
        }
        fn occurred_at(&self) -> Micros {
            self.occurred_at
        }
        fn expire_time(&self) -> Micros {
            self.expire_time
        }
        fn validity(&self) -> (Micros, Micros) {
            (self.occurred_at, Micros::MAX)
        }
    }

    fn global() -> Doc {
        Doc {
            level: MemoryLevel::Global,
            project: "",
            session: "",
            agent: "",
            user: "",
            memory_type: MemoryType::Fact,
            tags: Vec::new(),
            create_time: 0,
            occurred_at: 0,
            expire_time: Micros::MAX,
        }
    }

    fn rule(scope: Scope, filter: MemoryFilter) -> Rule<String> {
        Rule::new(&scope, &filter, 100)
    }

    fn accepts(rule: &Rule<String>, doc: &Doc) -> bool {
        rule.accepts(doc)
    }

    #[test]
    fn levels_follow_the_scope() {
        let bare = rule(Scope::default(), MemoryFilter::default());
        let in_project = rule(
            Scope {
                project_id: "shop".into(),
                session_id: "s1".into(),
                ..Scope::default()
            },
            MemoryFilter::default(),
        );
        let workspace = Doc {
            level: MemoryLevel::Workspace,
            project: "shop",
            ..global()
        };
        let conversation = Doc {
            level: MemoryLevel::Conversation,
            session: "s1",
            ..global()
        };
        assert!(accepts(&bare, &global()));
        assert!(!accepts(&bare, &workspace));
        assert!(!accepts(&bare, &conversation));
        assert!(accepts(&in_project, &workspace));
        assert!(accepts(&in_project, &conversation));
        let other = Doc {
            project: "bank",
            ..workspace
        };
        assert!(!accepts(&in_project, &other));
    }

    #[test]
    fn agents_and_users_see_their_own_and_unowned_memories() {
        let alice = rule(
            Scope {
                user_id: "alice".into(),
                ..Scope::default()
            },
            MemoryFilter::default(),
        );
        assert!(accepts(&alice, &global()));
        assert!(accepts(
            &alice,
            &Doc {
                user: "alice",
                ..global()
            }
        ));
        assert!(!accepts(
            &alice,
            &Doc {
                user: "bob",
                ..global()
            }
        ));
        let anyone = rule(Scope::default(), MemoryFilter::default());
        assert!(accepts(
            &anyone,
            &Doc {
                user: "bob",
                ..global()
            }
        ));
    }

    #[test]
    fn expired_memories_are_invisible() {
        let rule = rule(Scope::default(), MemoryFilter::default());
        assert!(!accepts(
            &rule,
            &Doc {
                expire_time: 100,
                ..global()
            }
        ));
        assert!(accepts(
            &rule,
            &Doc {
                expire_time: 101,
                ..global()
            }
        ));
    }

    #[test]
    fn filters_narrow_by_type_and_tag() {
        let lessons = rule(
            Scope::default(),
            MemoryFilter {
                memory_types: vec![MemoryType::Lesson],
                tags: vec!["ci".into()],
                ..MemoryFilter::default()
            },
        );
        let lesson = Doc {
            memory_type: MemoryType::Lesson,
            tags: vec!["ci", "web"],
            ..global()
        };
        assert!(accepts(&lessons, &lesson));
        assert!(!accepts(
            &lessons,
            &Doc {
                tags: vec!["web"],
                ..lesson.clone()
            }
        ));
        assert!(!accepts(
            &lessons,
            &Doc {
                memory_type: MemoryType::Fact,
                ..lesson
            }
        ));
    }

    #[test]
    fn time_ranges_include_their_start_and_exclude_their_end() {
        // Imported a year after it happened.
        let imported = Doc {
            create_time: 400,
            occurred_at: 30,
            ..global()
        };
        let occurred = |after, before| {
            rule(
                Scope::default(),
                MemoryFilter {
                    occurred: TimeRange { after, before },
                    ..MemoryFilter::default()
                },
            )
        };
        assert!(accepts(&occurred(Some(30), Some(31)), &imported));
        assert!(accepts(&occurred(None, Some(31)), &imported));
        assert!(!accepts(&occurred(Some(31), None), &imported));
        assert!(!accepts(&occurred(None, Some(30)), &imported));
        // The created range reads the create time, not when it happened.
        let created_early = rule(
            Scope::default(),
            MemoryFilter {
                created: TimeRange {
                    after: None,
                    before: Some(100),
                },
                ..MemoryFilter::default()
            },
        );
        assert!(!accepts(&created_early, &imported));
        let both = rule(
            Scope::default(),
            MemoryFilter {
                created: TimeRange {
                    after: Some(400),
                    before: None,
                },
                occurred: TimeRange {
                    after: Some(0),
                    before: Some(100),
                },
                ..MemoryFilter::default()
            },
        );
        assert!(accepts(&both, &imported));
    }

    #[test]
    fn a_required_tag_no_document_has_matches_nothing() {
        let rule = rule(
            Scope::default(),
            MemoryFilter {
                tags: vec!["ci".into()],
                ..MemoryFilter::default()
            },
        );
        assert!(rule.resolve(|_, _| None::<u64>).is_none());
    }
}
