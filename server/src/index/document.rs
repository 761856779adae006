//! What the full-text index keeps of a memory, and its tantivy schema.
//!
//! Every term is indexed as `namespace\0term`: each namespace has a term
//! space of its own, so a search only ever touches its own namespace's
//! postings (and block-max WAND keeps working, which a namespace filter
//! clause beside the words would switch off), and document frequencies are
//! per namespace for free. Neither a namespace nor a term can contain `\0`
//! (namespaces have no control characters; terms are letters and digits), so
//! the spaces never overlap. Everything else a search filters or re-scores by
//! is a fast field; nothing is stored, since the database holds the memory.

use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, TantivyDocument, Term};

use super::analyzer::{self, DocTerms};
use crate::domain::dates::{self, TimeSpan};
use crate::domain::{Memory, Micros};

/// The version of the schema and of the analysis. An index written with
/// another version is rebuilt at start. 2: `occurred_at` replaces
/// `update_time` (recency and the occurred range filter read it). 3: the
/// times a memory's text mentions are terms (`dates::stored_terms`).
pub const FORMAT: u32 = 3;

/// The tokenizer of the text field: see [`TermList`].
const TERM_LIST: &str = "engram_term_list";

/// Stands for "never expires" in the `expire_time` fast field.
pub const NEVER: Micros = Micros::MAX;

/// What the index holds of one memory.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedDoc {
    pub seq: i64,
    pub namespace: String,
    pub agent_id: String,
    pub user_id: String,
    pub project_id: String,
    pub session_id: String,
    /// `MemoryLevel` code.
    pub level: u64,
    /// `MemoryType` code.
    pub memory_type: u64,
    pub tags: Vec<String>,
    /// `key\0value` for each metadata entry.
    pub metadata: Vec<String>,
    pub importance: f64,
    pub create_time: Micros,
    pub occurred_at: Micros,
    /// [`NEVER`] when the memory does not expire.
    pub expire_time: Micros,
    pub valid_from: Micros,
    /// [`NEVER`] while the memory is still true.
    pub valid_to: Micros,
    /// The terms of its content, summary and tags.
    pub terms: DocTerms,
    /// The terms of the times its content and summary mention, resolved
    /// against `occurred_at` (`dates::stored_terms`).
    pub times: DocTerms,
}

impl IndexedDoc {
    /// Analyses `memory` into what the index keeps.
    pub fn new(memory: &Memory) -> IndexedDoc {
        let said = [memory.content.as_str(), memory.summary.as_str()];
        let text = said
            .into_iter()
            .chain(memory.tags.iter().map(String::as_str));
        let mentioned: Vec<TimeSpan> = said
            .iter()
            .flat_map(|text| dates::find(text, memory.occurred_at))
            .collect();
        IndexedDoc {
            seq: memory.seq,
            namespace: memory.scope.namespace.clone(),
            agent_id: memory.scope.agent_id.clone(),
            user_id: memory.scope.user_id.clone(),
            project_id: memory.scope.project_id.clone(),
            session_id: memory.scope.session_id.clone(),
            level: code(memory.level.code()),
            memory_type: code(memory.memory_type.code()),
            tags: memory.tags.clone(),
            metadata: memory
                .metadata
                .iter()
                .map(|(key, value)| metadata_entry(key, value))
                .collect(),
            importance: memory.importance,
            create_time: memory.create_time,
            occurred_at: memory.occurred_at,
            expire_time: memory.expire_time.unwrap_or(NEVER),
            valid_from: memory.valid_from,
            valid_to: memory.valid_to.unwrap_or(NEVER),
            terms: analyzer::doc_terms(text),
            times: DocTerms::counted(dates::stored_terms(&mentioned)),
        }
    }

    /// How often `term` (a word's or a time's) occurs in the memory.
    pub fn frequency(&self, term: &str) -> u32 {
        if dates::is_term(term) {
            self.times.frequency(term)
        } else {
            self.terms.frequency(term)
        }
    }
}

/// An enum code as a fast-field value.
pub fn code(code: i32) -> u64 {
    u64::try_from(code).unwrap_or(0)
}

/// A metadata entry as the `metadata` fast field holds it.
pub fn metadata_entry(key: &str, value: &str) -> String {
    format!("{key}\0{value}")
}

/// The indexed form of `term` in `namespace`.
pub fn namespaced(namespace: &str, term: &str) -> String {
    let mut text = String::with_capacity(namespace.len() + 1 + term.len());
    text.push_str(namespace);
    text.push('\0');
    text.push_str(term);
    text
}

/// The fields of the index.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// The memory's sequence number: indexed (to delete by it) and fast.
    pub seq: Field,
    /// The namespaced terms of content, summary and tags, with frequencies
    /// and lengths (no positions: there are no phrase queries).
    pub text: Field,
    /// The namespaced terms of the times the memory mentions, with
    /// frequencies and no lengths (every memory weighs as one of average
    /// length).
    pub times: Field,
    pub namespace: Field,
    pub agent_id: Field,
    pub user_id: Field,
    pub project_id: Field,
    pub session_id: Field,
    pub level: Field,
    pub memory_type: Field,
    pub tags: Field,
    pub metadata: Field,
    pub importance: Field,
    pub create_time: Field,
    pub occurred_at: Field,
    pub expire_time: Field,
    pub valid_from: Field,
    pub valid_to: Field,
}

/// Field names, which the fast-field readers are opened by.
pub mod names {
    pub const NAMESPACE: &str = "namespace";
    pub const AGENT_ID: &str = "agent_id";
    pub const USER_ID: &str = "user_id";
    pub const PROJECT_ID: &str = "project_id";
    pub const SESSION_ID: &str = "session_id";
    pub const TAGS: &str = "tags";
    pub const METADATA: &str = "metadata";
    pub const SEQ: &str = "seq";
    pub const LEVEL: &str = "level";
    pub const MEMORY_TYPE: &str = "memory_type";
    pub const IMPORTANCE: &str = "importance";
    pub const CREATE_TIME: &str = "create_time";
    pub const OCCURRED_AT: &str = "occurred_at";
    pub const EXPIRE_TIME: &str = "expire_time";
    pub const VALID_FROM: &str = "valid_from";
    pub const VALID_TO: &str = "valid_to";
}

/// The index's schema and its fields.
pub fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let fast_text = || TextOptions::default().set_fast("raw");
    let fast_number = || NumericOptions::default().set_fast();
    let term_list = |lengths: bool| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TERM_LIST)
                .set_index_option(IndexRecordOption::WithFreqs)
                .set_fieldnorms(lengths),
        )
    };
    let fields = Fields {
        seq: builder.add_i64_field(names::SEQ, INDEXED | FAST),
        text: builder.add_text_field("text", term_list(true)),
        times: builder.add_text_field("times", term_list(false)),
        namespace: builder.add_text_field(names::NAMESPACE, fast_text()),
        agent_id: builder.add_text_field(names::AGENT_ID, fast_text()),
        user_id: builder.add_text_field(names::USER_ID, fast_text()),
        project_id: builder.add_text_field(names::PROJECT_ID, fast_text()),
        session_id: builder.add_text_field(names::SESSION_ID, fast_text()),
        level: builder.add_u64_field(names::LEVEL, fast_number()),
        memory_type: builder.add_u64_field(names::MEMORY_TYPE, fast_number()),
        tags: builder.add_text_field(names::TAGS, fast_text()),
        metadata: builder.add_text_field(names::METADATA, fast_text()),
        importance: builder.add_f64_field(names::IMPORTANCE, fast_number()),
        create_time: builder.add_i64_field(names::CREATE_TIME, fast_number()),
        occurred_at: builder.add_i64_field(names::OCCURRED_AT, fast_number()),
        expire_time: builder.add_i64_field(names::EXPIRE_TIME, fast_number()),
        valid_from: builder.add_i64_field(names::VALID_FROM, fast_number()),
        valid_to: builder.add_i64_field(names::VALID_TO, fast_number()),
    };
    (builder.build(), fields)
}

impl Fields {
    /// The term that names the memory `seq` (to delete it).
    pub fn seq_term(&self, seq: i64) -> Term {
        Term::from_field_i64(self.seq, seq)
    }

    /// The term `term` of `namespace`: in the times field when it is a
    /// time's, else in the text field.
    pub fn term(&self, namespace: &str, term: &str) -> Term {
        let field = if dates::is_term(term) {
            self.times
        } else {
            self.text
        };
        Term::from_field_text(field, &namespaced(namespace, term))
    }

    /// `doc` as a tantivy document. Empty scope fields are left out (a
    /// missing value reads as empty).
    pub fn document(&self, doc: &IndexedDoc) -> TantivyDocument {
        let mut out = TantivyDocument::default();
        out.add_i64(self.seq, doc.seq);
        out.add_text(self.text, term_list(&doc.namespace, &doc.terms));
        if !doc.times.terms.is_empty() {
            out.add_text(self.times, term_list(&doc.namespace, &doc.times));
        }
        out.add_text(self.namespace, &doc.namespace);
        for (field, value) in [
            (self.agent_id, &doc.agent_id),
            (self.user_id, &doc.user_id),
            (self.project_id, &doc.project_id),
            (self.session_id, &doc.session_id),
        ] {
            if !value.is_empty() {
                out.add_text(field, value);
            }
        }
        out.add_u64(self.level, doc.level);
        out.add_u64(self.memory_type, doc.memory_type);
        for tag in &doc.tags {
            out.add_text(self.tags, tag);
        }
        for entry in &doc.metadata {
            out.add_text(self.metadata, entry);
        }
        out.add_f64(self.importance, doc.importance);
        out.add_i64(self.create_time, doc.create_time);
        out.add_i64(self.occurred_at, doc.occurred_at);
        out.add_i64(self.expire_time, doc.expire_time);
        out.add_i64(self.valid_from, doc.valid_from);
        out.add_i64(self.valid_to, doc.valid_to);
        out
    }
}

/// Registers the index's own tokenizer on `index` (needed before writing).
pub fn register_tokenizer(index: &Index) {
    index.tokenizers().register(TERM_LIST, TermList);
}

/// A document's terms as the text field's value: `namespace\0term term …`,
/// each term as many times as it occurs. [`TermList`] turns it back into
/// namespaced terms; the analysis itself happened once, in
/// [`IndexedDoc::new`].
fn term_list(namespace: &str, terms: &DocTerms) -> String {
    let mut text = String::with_capacity(namespace.len() + 1 + terms.length as usize * 8);
    text.push_str(namespace);
    text.push('\0');
    for (term, frequency) in &terms.terms {
        for _ in 0..*frequency {
            text.push_str(term);
            text.push(' ');
        }
    }
    text
}

/// Reads a [`term_list`] back into namespaced terms. (Handing tantivy
/// pre-tokenized text instead costs a JSON round trip per document.)
#[derive(Clone)]
struct TermList;

impl Tokenizer for TermList {
    type TokenStream<'a> = TermListStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> TermListStream<'a> {
        let (namespace, terms) = text.split_once('\0').unwrap_or(("", text));
        TermListStream {
            namespace,
            terms: terms.split(' '),
            token: Token::default(),
        }
    }
}

struct TermListStream<'a> {
    namespace: &'a str,
    terms: std::str::Split<'a, char>,
    token: Token,
}

impl TokenStream for TermListStream<'_> {
    fn advance(&mut self) -> bool {
        for term in self.terms.by_ref() {
            if term.is_empty() {
                continue;
            }
            self.token.text.clear();
            self.token.text.push_str(self.namespace);
            self.token.text.push('\0');
            self.token.text.push_str(term);
            self.token.position = self.token.position.wrapping_add(1);
            return true;
        }
        false
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_list_reads_back_as_namespaced_terms() {
        let doc = DocTerms {
            terms: vec![("deploy".into(), 2), ("東京".into(), 1)],
            length: 3,
        };
        let mut tokens = Vec::new();
        let text = term_list("tenant-a", &doc);
        let mut tokenizer = TermList;
        let mut stream = tokenizer.token_stream(&text);
        while stream.advance() {
            tokens.push(stream.token().text.clone());
        }
        assert_eq!(
            tokens,
            [
                namespaced("tenant-a", "deploy"),
                namespaced("tenant-a", "deploy"),
                namespaced("tenant-a", "東京")
            ]
        );
    }

    #[test]
    fn the_times_a_memory_mentions_are_terms_that_do_not_lengthen_its_text() {
        let mut memory = Memory::plain(1, "a", "Caroline went to the support group yesterday");
        memory.occurred_at = dates::days(2023, 5, 8) * 86_400_000_000;
        let doc = IndexedDoc::new(&memory);
        let words = analyzer::doc_terms([memory.content.as_str()]);
        assert_eq!(doc.terms, words, "the words alone make the text's length");
        for term in ["@2023-05-07", "@w2023-05-01", "@2023-05", "@2023"] {
            assert_eq!(doc.frequency(term), 1, "{term}");
        }
        assert_eq!(doc.frequency("support"), 1);
        assert_eq!(doc.frequency("@2023-05-08"), 0);
        let fields = schema().1;
        assert_eq!(fields.term("a", "@2023").field(), fields.times);
        assert_eq!(fields.term("a", "support").field(), fields.text);
    }
}
