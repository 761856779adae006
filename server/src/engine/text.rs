//! Sentences of free text, cut one way for everything that reads them: the
//! policy's rules, the secrets screen and the injection screen.

use std::ops::Range;

/// What ends a sentence when white space or the end of its line follows:
/// "v1.2", "config.yaml" and "Maple!Fox42" end none.
const END_MARKS: [char; 4] = ['.', '!', '?', ';'];

/// The byte ranges of `text`'s sentences, in order. A sentence takes its
/// end mark and the white space after it, so that joining a line's
/// sentences gives the line back; a line break ends a sentence too and
/// belongs to none.
pub fn sentence_ranges(text: &str) -> Vec<Range<usize>> {
    let mut sentences = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        let mut start = line_start;
        let mut chars = line.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let ends =
                END_MARKS.contains(&c) && chars.peek().is_none_or(|(_, n)| n.is_whitespace());
            if !ends {
                continue;
            }
            let mut end = line_start + at + c.len_utf8();
            while let Some((at, space)) = chars.next_if(|(_, n)| n.is_whitespace()) {
                end = line_start + at + space.len_utf8();
            }
            sentences.push(start..end);
            start = end;
        }
        let line_end = line_start + line.len();
        if start < line_end {
            sentences.push(start..line_end);
        }
        line_start = line_end + 1;
    }
    sentences
}

/// The sentences of `line` (see [`sentence_ranges`]).
pub fn sentences(line: &str) -> impl Iterator<Item = &str> {
    sentence_ranges(line).into_iter().map(|range| &line[range])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_ends_at_a_mark_before_white_space_and_keeps_that_space() {
        let line = "We ship v1.2 today.  Really?! Yes;\tsee config.yaml";
        assert_eq!(
            sentences(line).collect::<Vec<_>>(),
            [
                "We ship v1.2 today.  ",
                "Really?! ",
                "Yes;\t",
                "see config.yaml"
            ]
        );
        assert_eq!(sentences(line).collect::<String>(), line);
        assert_eq!(sentences("").count(), 0);
    }

    #[test]
    fn a_line_break_ends_a_sentence_and_belongs_to_none() {
        let text = "User: hi. My pw is x\nAssistant: ok";
        let cut: Vec<&str> = sentence_ranges(text)
            .into_iter()
            .map(|range| &text[range])
            .collect();
        assert_eq!(cut, ["User: hi. ", "My pw is x", "Assistant: ok"]);
    }
}
