//! How text becomes search terms, the same way for what is stored and for
//! what is asked.
//!
//! Words are runs of letters and digits (anything else separates them),
//! lower-cased, folded to ASCII where a letter has an ASCII form (`café` →
//! `cafe`) and reduced to their English Snowball stem (`deployment`,
//! `deploys` → `deploy`). A word whose stem differs is also kept as written
//! (`=deployment`), so that a memory with the very word a query uses ranks
//! above one that only shares its stem (as Elasticsearch's keyword_repeat
//! does). Scripts written without spaces cannot be split into
//! words without a dictionary, so a run of Chinese, Japanese or Korean
//! characters becomes its overlapping character pairs (`東京タワー` → `東京`,
//! `京タ`, `タワ`, `ワー`), as Lucene's CJK analyzer does: a word of two or
//! more characters inside a sentence is found by its pairs. Stored text also
//! indexes each such character alone, so a one-character query finds it too.
//!
//! Stop words are indexed but left out of queries, unless a query has nothing
//! else.

use std::cell::RefCell;

use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Words longer than this many bytes (before stemming) are not indexed: they
/// are blobs (hashes, encoded data) rather than words anyone searches for.
pub const MAX_WORD_BYTES: usize = 100;
/// The most distinct terms a query uses; longer queries keep their first terms.
pub const MAX_QUERY_TERMS: usize = 64;

/// English words too common to say anything about relevance (sorted).
pub const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The terms of a stored text: each distinct term with its count, and the
/// number of terms in all (the length BM25 normalises by).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocTerms {
    /// Distinct terms, sorted, with how often each occurs.
    pub terms: Vec<(String, u32)>,
    /// The number of term occurrences.
    pub length: u32,
}

impl DocTerms {
    /// `terms` counted: each distinct one with how often it occurs.
    pub fn counted(mut terms: Vec<String>) -> DocTerms {
        let length = u32::try_from(terms.len()).unwrap_or(u32::MAX);
        terms.sort_unstable();
        let mut counted: Vec<(String, u32)> = Vec::new();
        for term in terms {
            match counted.last_mut() {
                Some((last, count)) if *last == term => *count += 1,
                _ => counted.push((term, 1)),
            }
        }
        DocTerms {
            terms: counted,
            length,
        }
    }

    /// How often `term` occurs (0 when it does not).
    pub fn frequency(&self, term: &str) -> u32 {
        self.terms
            .binary_search_by(|(t, _)| t.as_str().cmp(term))
            .map_or(0, |i| self.terms[i].1)
    }
}

/// The terms of stored text made of several parts (content, summary, tags).
pub fn doc_terms<'a>(parts: impl IntoIterator<Item = &'a str>) -> DocTerms {
    ANALYSIS.with(|analysis| {
        let mut analysis = analysis.borrow_mut();
        let mut all: Vec<String> = Vec::new();
        for part in parts {
            analysis.words(part, Mode::Index, &mut |word, _| {
                all.push(word);
            });
        }
        DocTerms::counted(all)
    })
}

/// The distinct terms of a query, in the order they appear: stop words left
/// out unless nothing else remains, at most [`MAX_QUERY_TERMS`]. Empty when
/// the query has no words at all.
pub fn query_terms(text: &str) -> Vec<String> {
    ANALYSIS.with(|analysis| {
        let mut analysis = analysis.borrow_mut();
        let mut content = Vec::new();
        let mut all = Vec::new();
        analysis.words(text, Mode::Query, &mut |term, stop_word| {
            if !stop_word && content.len() < MAX_QUERY_TERMS && !content.contains(&term) {
                content.push(term.clone());
            }
            if all.len() < MAX_QUERY_TERMS && !all.contains(&term) {
                all.push(term);
            }
        });
        if content.is_empty() { all } else { content }
    })
}

thread_local! {
    static ANALYSIS: RefCell<Analysis> = RefCell::new(Analysis::new());
}

/// The analysis pipeline: words (and CJK pairs), lower-cased and folded to
/// ASCII, then stemmed.
struct Analysis {
    folding: TextAnalyzer,
    stemmer: frostem::Stemmer,
}

impl Analysis {
    fn new() -> Analysis {
        Analysis {
            folding: TextAnalyzer::builder(WordTokenizer)
                .filter(LowerCaser)
                .filter(AsciiFoldingFilter)
                .filter(RemoveLongFilter::limit(MAX_WORD_BYTES + 1))
                .build(),
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
        }
    }

    /// Calls `emit` with each term of `text` and whether its word is a stop word.
    fn words(&mut self, text: &str, mode: Mode, emit: &mut dyn FnMut(String, bool)) {
        let mut stream = self.folding.token_stream(text);
        while stream.advance() {
            let token = stream.token_mut();
            if token.position_length == CJK_SINGLE && mode == Mode::Query {
                continue;
            }
            let word = std::mem::take(&mut token.text);
            let stop_word = STOP_WORDS.binary_search(&word.as_str()).is_ok();
            let stemmed = self.stemmer.stem(&word);
            if stemmed != word {
                let stemmed = stemmed.into_owned();
                emit(exact(&word), stop_word);
                emit(stemmed, stop_word);
            } else {
                emit(word, stop_word);
            }
        }
    }
}

/// The term of a word exactly as written (folded), beside its stem: `=` is
/// not a letter or digit, so it can never be a stem.
fn exact(word: &str) -> String {
    format!("{EXACT}{word}")
}

/// Marks a word's exact form.
const EXACT: char = '=';

/// Marks (as a token's position length) a single CJK character of a longer
/// run, which only stored text indexes.
const CJK_SINGLE: usize = 0;

/// Whether CJK runs also yield their single characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Stored text: pairs and single characters.
    Index,
    /// Queries: pairs only (a single character when the run has one).
    Query,
}

/// Splits text into words, CJK character pairs and the single characters
/// of CJK runs (the latter marked [`CJK_SINGLE`] unless the run is one
/// character long).
#[derive(Clone)]
struct WordTokenizer;

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = Tokens;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens {
        Tokens {
            tokens: split(text),
            next: 0,
        }
    }
}

/// The tokens of one text, produced eagerly.
struct Tokens {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for Tokens {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CharClass {
    Cjk,
    Word,
    Separator,
}

fn class(c: char) -> CharClass {
    if is_cjk(c) {
        CharClass::Cjk
    } else if c.is_alphanumeric() {
        CharClass::Word
    } else {
        CharClass::Separator
    }
}

/// Han ideographs, kana, Hangul and their marks: scripts whose words are not
/// separated by spaces (Korean usually is, but pairs do it no harm).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF     // Hangul Jamo
        | 0x2E80..=0x2FDF   // CJK and Kangxi radicals
        | 0x3005..=0x3007   // 々 〆 〇
        | 0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3100..=0x312F   // Bopomofo
        | 0x3130..=0x318F   // Hangul compatibility Jamo
        | 0x31F0..=0x31FF   // Katakana phonetic extensions
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xA960..=0xA97F   // Hangul Jamo extended A
        | 0xAC00..=0xD7FF   // Hangul syllables, Jamo extended B
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0xFF66..=0xFF9F   // half-width Katakana
        | 0x20000..=0x3134F // CJK extensions B to G
    )
}

fn split(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        let run_class = class(c);
        let mut run: Vec<(usize, char)> = Vec::new();
        while let Some(&(at, c)) = chars.peek() {
            if class(c) != run_class {
                break;
            }
            run.push((at, c));
            chars.next();
        }
        let end = chars.peek().map_or(text.len(), |&(at, _)| at);
        match run_class {
            CharClass::Separator => {}
            CharClass::Word => push(&mut tokens, text, start, end, 1),
            CharClass::Cjk => cjk_tokens(&mut tokens, text, &run, end),
        }
    }
    tokens
}

fn cjk_tokens(tokens: &mut Vec<Token>, text: &str, run: &[(usize, char)], end: usize) {
    let end_of = |i: usize| run.get(i + 1).map_or(end, |&(at, _)| at);
    let single = if run.len() == 1 { 1 } else { CJK_SINGLE };
    for (i, &(at, _)) in run.iter().enumerate() {
        push(tokens, text, at, end_of(i), single);
    }
    for i in 1..run.len() {
        push(tokens, text, run[i - 1].0, end_of(i), 1);
    }
}

fn push(tokens: &mut Vec<Token>, text: &str, from: usize, to: usize, position_length: usize) {
    tokens.push(Token {
        offset_from: from,
        offset_to: to,
        position: tokens.len(),
        text: text[from..to].to_owned(),
        position_length,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        doc_terms([text])
            .terms
            .into_iter()
            .map(|(t, _)| t)
            .collect()
    }

    #[test]
    fn words_are_lower_cased_folded_and_stemmed() {
        assert_eq!(
            terms("Deploys of the CAFÉ deployment"),
            ["=deployment", "=deploys", "cafe", "deploy", "of", "the"]
        );
        let stored = doc_terms(["deploy deploys deployed"]);
        assert_eq!(stored.frequency("deploy"), 3);
        assert_eq!(stored.frequency("=deploys"), 1);
        assert_eq!(stored.frequency("=deploy"), 0);
        assert_eq!(doc_terms(["a b, c-d"]).length, 4);
        assert_eq!(doc_terms(["a b, c-d"]).length, 4);
    }

    #[test]
    fn deployment_and_deploys_share_a_stem_and_keep_their_own_form() {
        assert_eq!(query_terms("deployment"), ["=deployment", "deploy"]);
        assert_eq!(query_terms("deploys"), ["=deploys", "deploy"]);
        assert_eq!(query_terms("deploy"), ["deploy"]);
    }

    #[test]
    fn cjk_runs_become_pairs_and_stored_text_also_single_characters() {
        assert_eq!(
            terms("東京タワー"),
            ["タ", "タワ", "ワ", "ワー", "ー", "京", "京タ", "東", "東京"]
                .map(String::from)
                .into_iter()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
        assert_eq!(query_terms("東京タワー"), ["東京", "京タ", "タワ", "ワー"]);
        assert_eq!(query_terms("猫"), ["猫"]);
        // Mixed text: the CJK run and the Latin word are separate.
        assert_eq!(query_terms("Rust言語"), ["rust", "言語"]);
    }

    #[test]
    fn a_cjk_word_inside_a_sentence_is_found_by_its_pairs() {
        let stored = doc_terms(["私は東京に住んでいます"]);
        for term in query_terms("東京") {
            assert!(stored.frequency(&term) > 0, "{term}");
        }
    }

    #[test]
    fn queries_drop_stop_words_unless_nothing_else_remains() {
        assert_eq!(
            query_terms("What is the user's favourite DB?"),
            ["user", "s", "=favourite", "favourit", "db"]
        );
        assert_eq!(query_terms("the THE"), ["the"]);
        assert!(query_terms(" ?! -- ").is_empty());
    }

    #[test]
    fn query_syntax_is_plain_text() {
        assert_eq!(
            query_terms("content:rust NEAR(\"a\" b*) OR -x"),
            ["content", "rust", "near", "b", "x"]
        );
    }

    #[test]
    fn queries_keep_their_first_terms() {
        let long: String = (0..200).map(|i| format!("w{i} ")).collect();
        let terms = query_terms(&long);
        assert_eq!(terms.len(), MAX_QUERY_TERMS);
        assert_eq!(terms[0], "w0");
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn blobs_are_not_terms() {
        let blob = "x".repeat(MAX_WORD_BYTES + 1);
        assert_eq!(terms(&format!("key {blob}")), ["key"]);
        assert!(!terms(&"y".repeat(MAX_WORD_BYTES)).is_empty());
    }
}
