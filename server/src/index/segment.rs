//! A committed segment as searches read it: its fast-field columns, opened
//! once per reload rather than once per search, and how many documents and
//! terms each namespace has in it (the per-namespace BM25 statistics).

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::columnar::{Column, StrColumn};
use tantivy::fieldnorm::FieldNormReader;
use tantivy::index::SegmentId;
use tantivy::{DocId, SegmentReader};

use super::document::{Fields, names};
use super::filter::DocView;
use crate::domain::Micros;

/// Documents and terms of one namespace. Deleted documents count until a
/// merge drops them, as tantivy counts them in document frequencies too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub docs: u64,
    pub terms: u64,
}

/// One segment's columns and per-namespace counts.
pub struct SegmentView {
    pub id: SegmentId,
    pub seq: Column<i64>,
    pub importance: Column<f64>,
    pub occurred_at: Column<i64>,
    level: Column<u64>,
    memory_type: Column<u64>,
    create_time: Column<i64>,
    expire_time: Column<i64>,
    valid_from: Column<i64>,
    valid_to: Column<i64>,
    pub agent_id: Option<StrColumn>,
    pub user_id: Option<StrColumn>,
    pub project_id: Option<StrColumn>,
    pub session_id: Option<StrColumn>,
    pub tags: Option<StrColumn>,
    pub metadata: Option<StrColumn>,
    /// Per namespace; never changes for a segment, so it is carried over
    /// from one reload to the next.
    pub namespaces: Arc<HashMap<String, Counts>>,
}

impl SegmentView {
    /// Opens the columns of `reader`; counts its namespaces unless `counted`
    /// (the same segment's counts from an earlier reload) is given.
    pub fn open(
        reader: &SegmentReader,
        fields: &Fields,
        counted: Option<Arc<HashMap<String, Counts>>>,
    ) -> tantivy::Result<SegmentView> {
        let fast = reader.fast_fields();
        let namespaces = match counted {
            Some(counted) => counted,
            None => Arc::new(count_namespaces(
                reader,
                fast.str(names::NAMESPACE)?,
                reader.get_fieldnorms_reader(fields.text)?,
            )?),
        };
        Ok(SegmentView {
            id: reader.segment_id(),
            seq: fast.i64(names::SEQ)?,
            importance: fast.f64(names::IMPORTANCE)?,
            occurred_at: fast.i64(names::OCCURRED_AT)?,
            level: fast.u64(names::LEVEL)?,
            memory_type: fast.u64(names::MEMORY_TYPE)?,
            create_time: fast.i64(names::CREATE_TIME)?,
            expire_time: fast.i64(names::EXPIRE_TIME)?,
            valid_from: fast.i64(names::VALID_FROM)?,
            valid_to: fast.i64(names::VALID_TO)?,
            agent_id: fast.str(names::AGENT_ID)?,
            user_id: fast.str(names::USER_ID)?,
            project_id: fast.str(names::PROJECT_ID)?,
            session_id: fast.str(names::SESSION_ID)?,
            tags: fast.str(names::TAGS)?,
            metadata: fast.str(names::METADATA)?,
            namespaces,
        })
    }

    /// The counts of `namespace` in this segment.
    pub fn counts(&self, namespace: &str) -> Counts {
        self.namespaces.get(namespace).copied().unwrap_or_default()
    }

    /// The ordinal of `value` in a string column of this segment, if any
    /// document here has it.
    pub fn ordinal(column: &Option<StrColumn>, value: &str) -> Option<u64> {
        column
            .as_ref()?
            .dictionary()
            .term_ord(value.as_bytes())
            .ok()
            .flatten()
    }

    /// The document `doc` of this segment, for a [`super::filter::Rule`].
    pub fn doc(&self, doc: DocId) -> SegmentDoc<'_> {
        SegmentDoc { view: self, doc }
    }
}

fn count_namespaces(
    reader: &SegmentReader,
    namespace: Option<StrColumn>,
    norms: FieldNormReader,
) -> tantivy::Result<HashMap<String, Counts>> {
    let Some(namespace) = namespace else {
        return Ok(HashMap::new());
    };
    let mut by_ordinal = vec![Counts::default(); namespace.num_terms()];
    for doc in 0..reader.max_doc() {
        if let Some(counts) = namespace
            .ords()
            .first(doc)
            .and_then(|ord| by_ordinal.get_mut(usize::try_from(ord).ok()?))
        {
            counts.docs += 1;
            counts.terms += u64::from(norms.fieldnorm(doc));
        }
    }
    let mut counted = HashMap::with_capacity(by_ordinal.len());
    let mut name = Vec::new();
    for (ord, counts) in by_ordinal.into_iter().enumerate() {
        name.clear();
        if namespace.ord_to_bytes(ord as u64, &mut name)? {
            counted.insert(String::from_utf8_lossy(&name).into_owned(), counts);
        }
    }
    Ok(counted)
}

/// A committed document as a filter reads it: term ordinals of its segment.
pub struct SegmentDoc<'a> {
    view: &'a SegmentView,
    doc: DocId,
}

fn first_ordinal(column: &Option<StrColumn>, doc: DocId) -> Option<u64> {
    column.as_ref()?.ords().first(doc)
}

fn has_ordinal(column: &Option<StrColumn>, doc: DocId, wanted: u64) -> bool {
    column
        .as_ref()
        .is_some_and(|c| c.ords().values_for_doc(doc).any(|ord| ord == wanted))
}

impl DocView<u64> for SegmentDoc<'_> {
    fn seq(&self) -> i64 {
        self.view.seq.first(self.doc).unwrap_or(-1)
    }
    fn level(&self) -> u64 {
        self.view.level.first(self.doc).unwrap_or(0)
    }
    fn memory_type(&self) -> u64 {
        self.view.memory_type.first(self.doc).unwrap_or(0)
    }
    fn project(&self) -> Option<u64> {
        first_ordinal(&self.view.project_id, self.doc)
    }
    fn session(&self) -> Option<u64> {
        first_ordinal(&self.view.session_id, self.doc)
    }
    fn agent(&self) -> Option<u64> {
        first_ordinal(&self.view.agent_id, self.doc)
    }
    fn user(&self) -> Option<u64> {
        first_ordinal(&self.view.user_id, self.doc)
    }
    fn has_tag(&self, tag: &u64) -> bool {
        has_ordinal(&self.view.tags, self.doc, *tag)
    }
    fn has_metadata(&self, entry: &u64) -> bool {
        has_ordinal(&self.view.metadata, self.doc, *entry)
    }
    fn importance(&self) -> f64 {
        self.view.importance.first(self.doc).unwrap_or(0.0)
    }
    fn create_time(&self) -> Micros {
        self.view.create_time.first(self.doc).unwrap_or(0)
    }
    fn occurred_at(&self) -> Micros {
        self.view.occurred_at.first(self.doc).unwrap_or(0)
    }
    fn expire_time(&self) -> Micros {
        // A document without the field is treated as expired: never shown.
        self.view.expire_time.first(self.doc).unwrap_or(Micros::MIN)
    }
    fn validity(&self) -> (Micros, Micros) {
        (
            self.view.valid_from.first(self.doc).unwrap_or(0),
            self.view.valid_to.first(self.doc).unwrap_or(Micros::MAX),
        )
    }
}
