//! What the learned decider (issue 28) reads of a transcript: its
//! sentences' vectors pooled three ways (their mean, their element-wise
//! maximum and the vector of the sentence the rules would summarise), and
//! a few dozen numbers the rules and the text's shape give — the deciding
//! cue's strength, type, speaker and place, which kinds of cue fired
//! anywhere, who speaks, how much is tool output, questions, hedges, code,
//! digits, a redacted secret, other alphabets.

use super::rules::{self, Cue, Deciding, Strength};
use super::shapes::{ACKNOWLEDGED_CUE, LESSON_SHAPE_CUE, STATEMENT_CUE};
use super::timing::{EVENT_CUE, FOR_LATER_CUE};
use super::transcript::{self, Sentence, Speaker};
use crate::domain::MemoryType;
use crate::engine::secrets;

/// The most sentences of a transcript that are embedded: the deciding one,
/// those with a cue, then the earliest. Long sessions cost no more than
/// this many short texts.
pub(super) const MAX_EMBEDDED_SENTENCES: usize = 12;

/// The numbers beside the pooled vectors (see [`scalars`]).
pub(super) const SCALARS: usize = 40;

/// The pooled vectors: mean, maximum, the summarised sentence.
const POOLS: usize = 3;

/// How long a text's logarithm scales against.
const LONG_TEXT_CHARS: f32 = 4096.0;
const MANY_SENTENCES: f32 = 64.0;

/// The cue strengths in the order the features one-hot them.
const STRENGTHS: [Strength; 4] = [
    Strength::Statement,
    Strength::Imperative,
    Strength::Phrase,
    Strength::Marker,
];

/// The speakers in the order the features one-hot them.
const SPEAKERS: [Speaker; 4] = [
    Speaker::User,
    Speaker::Assistant,
    Speaker::Named,
    Speaker::Unknown,
];

/// The cues that name a shape of a sentence or an exchange rather than a
/// phrase of the lexicon.
const SHAPES: [&str; 5] = [
    STATEMENT_CUE,
    EVENT_CUE,
    FOR_LATER_CUE,
    LESSON_SHAPE_CUE,
    ACKNOWLEDGED_CUE,
];

/// A screened transcript as the decider reads it, before its vectors.
pub(super) struct Reading {
    pub sentences: Vec<Sentence>,
    /// Each sentence's strongest cue.
    cues: Vec<Option<Cue>>,
    pub deciding: Option<Deciding>,
    /// The sentence a decision would be summarised from: the deciding one,
    /// else the first not said by the assistant nor hedged.
    pub focus: Option<usize>,
    /// The sentences to embed, in order.
    pub embedded: Vec<usize>,
    lines: usize,
    tool_lines: usize,
    chars: usize,
}

/// Reads `transcript` (screened).
pub(super) fn read(transcript: &str) -> Reading {
    let sentences = transcript::sentences(transcript);
    let cues: Vec<Option<Cue>> = sentences.iter().map(rules::strongest_cue).collect();
    let deciding = rules::deciding_cue(&sentences);
    let focus = deciding.map(|d| d.sentence).or_else(|| {
        sentences
            .iter()
            .position(|s| s.speaker != Speaker::Assistant && !s.hedged)
    });
    let mut embedded: Vec<usize> = focus.into_iter().collect();
    let with_cue = (0..sentences.len()).filter(|&i| cues[i].is_some());
    let without = (0..sentences.len()).filter(|&i| cues[i].is_none());
    for index in with_cue.chain(without) {
        if embedded.len() == MAX_EMBEDDED_SENTENCES {
            break;
        }
        if !embedded.contains(&index) {
            embedded.push(index);
        }
    }
    embedded.sort_unstable();
    let lines: Vec<&str> = transcript
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    Reading {
        tool_lines: lines
            .iter()
            .filter(|l| transcript::is_tool_noise(l))
            .count(),
        lines: lines.len(),
        chars: transcript.chars().count(),
        sentences,
        cues,
        deciding,
        focus,
        embedded,
    }
}

impl Reading {
    /// The texts to embed, one per sentence of `embedded`.
    pub fn texts(&self) -> Vec<String> {
        self.embedded
            .iter()
            .map(|&i| self.sentences[i].text.clone())
            .collect()
    }

    /// The decider's input: the pooled `vectors` (one per embedded
    /// sentence, normalised, all of `dimensions`) and the scalars. A
    /// transcript with no sentence pools to zeros.
    pub fn features(&self, vectors: &[Vec<f32>], dimensions: usize) -> Vec<f32> {
        let mut mean = vec![0.0f32; dimensions];
        let mut max = vec![f32::NEG_INFINITY; dimensions];
        let mut focus = vec![0.0f32; dimensions];
        for (&index, vector) in self.embedded.iter().zip(vectors) {
            for ((m, x), v) in mean.iter_mut().zip(max.iter_mut()).zip(vector) {
                *m += v;
                *x = x.max(*v);
            }
            if Some(index) == self.focus {
                focus.clone_from(vector);
            }
        }
        let count = vectors.len().max(1) as f32;
        mean.iter_mut().for_each(|m| *m /= count);
        max.iter_mut()
            .for_each(|x| *x = if x.is_finite() { *x } else { 0.0 });
        let mut features = Vec::with_capacity(POOLS * dimensions + SCALARS);
        features.extend(mean);
        features.extend(max);
        features.extend(focus);
        features.extend(self.scalars());
        features
    }

    /// The numbers the rules and the text's shape give, each 0 to 1.
    fn scalars(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(SCALARS);
        let n = self.sentences.len().max(1) as f32;
        let share = |count: usize| count as f32 / n;
        let deciding = self.deciding.map(|d| d.cue);
        // The deciding cue: its strength (none first), type, shape, its
        // sentence's speaker and place.
        let strength = deciding.and_then(|c| STRENGTHS.iter().position(|&s| s == c.strength));
        one_hot(&mut out, strength.map_or(Some(0), |s| Some(s + 1)), 5);
        one_hot(&mut out, deciding.map(|c| type_index(c.memory_type)), 6);
        out.push(flag(deciding.is_some_and(|c| SHAPES.contains(&c.phrase))));
        let speaker = self.deciding.map(|d| self.sentences[d.sentence].speaker);
        one_hot(
            &mut out,
            speaker.and_then(|s| SPEAKERS.iter().position(|&k| k == s)),
            4,
        );
        out.push(self.deciding.map_or(0.0, |d| {
            d.sentence as f32 / (self.sentences.len().max(2) - 1) as f32
        }));
        // The kinds of cue anywhere, and how strong.
        for memory_type in (1..).map_while(MemoryType::from_code) {
            out.push(share(
                self.cues
                    .iter()
                    .flatten()
                    .filter(|c| c.memory_type == memory_type)
                    .count(),
            ));
        }
        for strength in [Strength::Marker, Strength::Phrase] {
            out.push(flag(
                self.cues.iter().flatten().any(|c| c.strength == strength),
            ));
        }
        // Who speaks.
        for speaker in SPEAKERS {
            out.push(share(
                self.sentences
                    .iter()
                    .filter(|s| s.speaker == speaker)
                    .count(),
            ));
        }
        // The text's shape.
        out.push(scaled_log(self.sentences.len(), MANY_SENTENCES));
        out.push(scaled_log(self.chars, LONG_TEXT_CHARS));
        out.push(self.tool_lines as f32 / self.lines.max(1) as f32);
        out.push(share(
            self.sentences
                .iter()
                .filter(|s| s.text.ends_with('?'))
                .count(),
        ));
        out.push(share(self.sentences.iter().filter(|s| s.hedged).count()));
        out.push(share(
            self.sentences
                .iter()
                .filter(|s| s.text.ends_with('!'))
                .count(),
        ));
        let text: String = self.sentences.iter().map(|s| s.text.as_str()).collect();
        let chars = text.chars().count().max(1) as f32;
        let count = |f: fn(char) -> bool| text.chars().filter(|&c| f(c)).count() as f32 / chars;
        out.push(count(|c| "`{}()[];=<>/\\_|$".contains(c)));
        out.push(count(|c| c.is_ascii_digit()));
        out.push(count(|c| c.is_alphabetic() && !c.is_ascii()));
        out.push(flag(text.contains(secrets::REDACTED)));
        let words = text.split_whitespace().count() as f32;
        out.push(scaled_log(
            (words / n) as usize,
            MANY_SENTENCES, // words per sentence
        ));
        debug_assert_eq!(out.len(), SCALARS);
        out
    }
}

/// The index of a memory type among the six.
fn type_index(memory_type: MemoryType) -> usize {
    memory_type.code() as usize - 1
}

/// `size` numbers, the `hot`th 1 and the others 0.
fn one_hot(out: &mut Vec<f32>, hot: Option<usize>, size: usize) {
    out.extend((0..size).map(|i| if Some(i) == hot { 1.0 } else { 0.0 }));
}

fn flag(on: bool) -> f32 {
    if on { 1.0 } else { 0.0 }
}

/// `ln(1 + count) / ln(1 + scale)`, at most 1.
fn scaled_log(count: usize, scale: f32) -> f32 {
    ((1.0 + count as f32).ln() / (1.0 + scale).ln()).min(1.0)
}

/// How many features a transcript has with vectors of `dimensions`.
pub(super) fn width(dimensions: usize) -> usize {
    POOLS * dimensions + SCALARS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_pools_the_sentences_and_says_what_the_rules_found() {
        let reading = read(
            "User: hi!\nPriya: the deploy is at noon?\nUser: I prefer tabs over spaces.\n$ cargo build",
        );
        assert_eq!(reading.sentences.len(), 3);
        assert_eq!(reading.focus, Some(2));
        assert_eq!(reading.embedded, [0, 1, 2]);
        let vectors = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![0.5, -1.0]];
        let features = reading.features(&vectors, 2);
        assert_eq!(features.len(), width(2));
        // Mean, maximum, the deciding sentence.
        assert_eq!(features[..6], [0.5, 0.0, 1.0, 1.0, 0.5, -1.0]);
        let scalars = &features[6..];
        assert!(
            scalars.iter().all(|x| (0.0..=1.0).contains(x)),
            "{scalars:?}"
        );
        // A marker decided; a preference; said by the user, last.
        assert_eq!(scalars[..5], [0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(scalars[5 + type_index(MemoryType::Preference)], 1.0);
        assert_eq!(scalars[12..16], [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(scalars[16], 1.0);
        // One line of four is tool output; one sentence of three asks.
        assert_eq!(scalars[31..34], [0.25, 1.0 / 3.0, 0.0]);
    }

    #[test]
    fn a_long_session_embeds_its_deciding_sentence_and_at_most_the_cap() {
        let mut transcript: String = (0..30)
            .map(|i| format!("Assistant: step {i} is running fine now.\n"))
            .collect();
        transcript.push_str("User: we decided to move the event bus to Kafka.\n");
        let reading = read(&transcript);
        assert_eq!(reading.embedded.len(), MAX_EMBEDDED_SENTENCES);
        let deciding = reading.deciding.unwrap().sentence;
        assert!(reading.embedded.contains(&deciding));
        assert!(reading.embedded.is_sorted());
        let empty = read("").features(&[], 3);
        assert_eq!(empty.len(), width(3));
        assert!(empty[..9].iter().all(|&x| x == 0.0), "{empty:?}");
    }
}
