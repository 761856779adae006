//! Reading a text's tokens for names: how far its capitals can be
//! trusted, and the rules that join, type and reject runs of words.

use super::{BEFORE_LANGUAGE, Known, LEXICON, REGION, Token, WORDS, WordSet, host_prefix};
use crate::domain::entity::{EntityType, Mention};

/// How far capital letters can be trusted in this text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Casing {
    Normal,
    /// All lower case, chat style: "lisa from the berlin office".
    Lower,
    /// Title Case or ALL CAPS for emphasis: capitals say nothing.
    Shouting,
}

#[derive(Clone, Copy)]
pub(super) struct Context {
    casing: Casing,
    /// German capitalizes every noun, so a capital alone proves little.
    german: bool,
}

impl Context {
    pub(super) fn of(tokens: &[Token]) -> Self {
        let german = tokens
            .iter()
            .filter(|t| WORDS.german.contains(t.lower()))
            .count()
            >= 2;
        let words: Vec<&Token> = tokens
            .iter()
            .filter(|t| t.text.chars().count() > 1 && t.text.chars().all(char::is_alphabetic))
            .collect();
        let share = |n: usize| n * 10 >= words.len() * 6;
        let capitals = words.iter().filter(|t| t.capitalized()).count();
        let all_caps = words
            .iter()
            .filter(|t| t.text.chars().all(char::is_uppercase))
            .count();
        // Title Case capitalizes small words too ("Never Push On Fridays"),
        // which prose, even prose full of names, does not.
        let small_capitals = words
            .iter()
            .filter(|t| !t.sentence_start && t.capitalized() && t.text.len() <= 5)
            .filter(|t| WORDS.start_stop.contains(t.lower()))
            .count();
        let title_case = share(capitals) && small_capitals >= 2;
        let casing = if capitals == 0 && tokens.iter().all(|t| !t.capitalized()) {
            Casing::Lower
        } else if !german && words.len() >= 3 && (share(all_caps) || title_case) {
            Casing::Shouting
        } else {
            Casing::Normal
        };
        Context { casing, german }
    }
}

/// How one unit of text (a lexicon phrase or a single token) reads.
#[derive(Clone, Copy)]
enum Shape {
    /// In the tool, vendor or place lists.
    Known(Known),
    /// A strong pattern: service or host name, cloud region, code identifier.
    Pattern(EntityType),
    /// A capitalized word not in the lists.
    Word,
    /// Capitals only ("API", "SEV1s"): generic unless listed.
    Acronym,
    /// Anything else: lower-case words, numbers, stop words.
    Plain,
}

#[derive(Clone, Copy)]
struct Unit {
    first: usize,
    last: usize,
    /// Byte offset where the name ends: before a possessive "'s" or the
    /// plural "s" of a listed acronym ("Intel NUCs").
    end: usize,
    shape: Shape,
}

impl Unit {
    /// Can be part of a capitalized multi-word name.
    fn nameish(&self, tokens: &[Token]) -> bool {
        match self.shape {
            Shape::Word => true,
            Shape::Known(_) => tokens[self.first].text.chars().any(char::is_uppercase),
            _ => false,
        }
    }
}

/// Walks the tokens of one text and collects the entities they name.
pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    pub(super) tokens: &'a [Token<'a>],
    pub(super) ctx: Context,
    pub(super) found: Vec<(usize, Mention)>,
}

impl Reader<'_> {
    pub(super) fn read(&mut self) {
        let units = self.units();
        let mut i = 0;
        while i < units.len() {
            let len = if self.ctx.casing == Casing::Shouting {
                1
            } else {
                self.run_len(&units[i..])
            };
            self.read_run(&units[i..i + len]);
            i += len;
        }
    }

    fn units(&self) -> Vec<Unit> {
        let mut units = Vec::with_capacity(self.tokens.len());
        let mut i = 0;
        while i < self.tokens.len() {
            let unit = match self.lookup(i) {
                Some((last, end, known)) => Unit {
                    first: i,
                    last,
                    end,
                    shape: Shape::Known(known),
                },
                None => {
                    let token = &self.tokens[i];
                    let end = token.start + token.base().len();
                    Unit {
                        first: i,
                        last: i,
                        end,
                        shape: self.shape(i),
                    }
                }
            };
            i = unit.last + 1;
            units.push(unit);
        }
        units
    }

    /// The longest listed phrase starting at token `i` that counts here, as
    /// (last token, end of name, entry).
    fn lookup(&self, i: usize) -> Option<(usize, usize, Known)> {
        let found = self.lookup_phrase(i, self.tokens[i].lower()).or_else(|| {
            // German inflects names: "mit der Deutschen Bahn" for "Deutsche Bahn".
            let stem = self.tokens[i]
                .lower()
                .strip_suffix('n')
                .filter(|s| s.ends_with('e'))?;
            self.lookup_phrase(i, stem).filter(|&(last, ..)| last > i)
        });
        found.filter(|&(last, _, known)| self.counts_here(i, last, known))
    }

    /// The longest listed phrase of tokens from `i`, reading the first as `first`.
    fn lookup_phrase(&self, i: usize, first: &str) -> Option<(usize, usize, Known)> {
        let head = &self.tokens[i];
        let width = if LEXICON.phrase_starts.contains(first) {
            4
        } else {
            1
        };
        let mut best = if first == head.lower() {
            known_word("", head).map(|(end, known)| (i, end, known))
        } else {
            None
        };
        if width == 1 {
            return best;
        }
        let mut prefix = first.to_string();
        for (j, token) in self.tokens.iter().enumerate().skip(i + 1).take(width - 1) {
            if token.gap != " " {
                break;
            }
            prefix.push(' ');
            if let Some((end, known)) = known_word(&prefix, token) {
                best = Some((j, end, known));
            }
            prefix.push_str(token.lower());
        }
        best
    }

    /// Case and context rules for a listed phrase spanning tokens `i..=last`.
    fn counts_here(&self, i: usize, last: usize, known: Known) -> bool {
        let token = &self.tokens[i];
        if !known.cap_only {
            return true;
        }
        if self.ctx.casing == Casing::Shouting {
            return false;
        }
        if !token.capitalized() {
            // "node 20", "go 1.22": a version shows the tool is meant.
            let versioned = |n: &Token| {
                n.gap == " " && (is_version(n.text) || n.text.bytes().all(|b| b.is_ascii_digit()))
            };
            return !known.acronym && self.tokens.get(last + 1).is_some_and(versioned);
        }
        let all_caps = |t: &Token| {
            t.base()
                .chars()
                .filter(|c| c.is_alphabetic())
                .all(char::is_uppercase)
        };
        if known.acronym && !self.tokens[i..=last].iter().all(all_caps) {
            return false;
        }
        let prev = i.checked_sub(1).map(|p| self.tokens[p].lower());
        let next = self.tokens.get(last + 1).map(|t| t.lower());
        if token.text.chars().count() == 1 {
            // "C", "R": only as a language after "in C", "and R", ...
            return prev.is_some_and(|p| BEFORE_LANGUAGE.contains(&p));
        }
        let verb_like = WORDS.start_stop.contains(token.lower())
            || WORDS.ambiguous_names.contains(token.lower());
        if token.sentence_start && last == i && verb_like {
            // "Go ahead", "Make sure", "Nice work" versus "Go files", "Swift on the server".
            return next.is_some_and(|n| WORDS.tech_followers.contains(n));
        }
        true
    }

    fn shape(&self, i: usize) -> Shape {
        let token = &self.tokens[i];
        if let Some(kind) = self.pattern(i) {
            return Shape::Pattern(kind);
        }
        let lower = token.lower();
        let single_letter = token.base().chars().nth(1).is_none() && !WORDS.titles.contains(lower);
        if WORDS.always_stop.contains(lower) || single_letter || self.in_menu_path(i) {
            Shape::Plain
        } else if is_acronym(token.base()) {
            if WORDS.generic_acronyms.contains(lower) {
                Shape::Plain
            } else {
                Shape::Acronym
            }
        } else if token.capitalized() {
            Shape::Word
        } else {
            Shape::Plain
        }
    }

    /// "Billing > Refunds" is a place in an app's menus, not a name.
    fn in_menu_path(&self, i: usize) -> bool {
        let after = self.tokens.get(i + 1).map_or("", |t| t.gap);
        self.tokens[i].gap.contains('>') || after.contains('>')
    }

    /// Names recognisable by their form alone.
    fn pattern(&self, i: usize) -> Option<EntityType> {
        let word = self.tokens[i].base();
        let hyphen = word.contains('-');
        let digit_end = word.ends_with(|c: char| c.is_ascii_digit());
        if hyphen && digit_end && REGION.is_match(word) {
            return Some(EntityType::Place);
        }
        let lower = self.tokens[i].lower();
        if is_identifier(word)
            && !WORDS.always_stop.contains(lower)
            && !WORDS.org_suffixes.contains(lower)
        {
            return Some(EntityType::Other);
        }
        if self.lower_case_tool(i) {
            return Some(EntityType::Tool);
        }
        let host = if digit_end { host_prefix(word) } else { None };
        if host.is_some_and(|prefix| !WORDS.not_hosts.contains(prefix)) {
            return Some(EntityType::Service);
        }
        if hyphen { self.hyphenated(i) } else { None }
    }

    /// Unlisted lower-case tools named by their context: "the op CLI",
    /// "pins httpx 0.27".
    fn lower_case_tool(&self, i: usize) -> bool {
        let token = &self.tokens[i];
        let prev = i.checked_sub(1).map(|p| self.tokens[p].lower());
        let next = self.tokens.get(i + 1);
        let cli = next.is_some_and(|n| n.lower() == "cli" && n.gap == " ");
        let pinned = next.is_some_and(|n| is_version(n.text) && n.gap == " ")
            && prev.is_some_and(|p| WORDS.dependency_verbs.contains(p));
        (cli || pinned)
            && token
                .text
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-')
            && !WORDS.start_stop.contains(token.lower())
            && !WORDS.generic_acronyms.contains(token.lower())
    }

    /// Lower-case hyphenated names: services ("payments-api", "batch-01") and
    /// repos ("acme-sdk-py"), told apart from compounds ("on-call") by their
    /// parts and the words around them.
    fn hyphenated(&self, i: usize) -> Option<EntityType> {
        let word = self.tokens[i].base();
        let parts: Vec<&str> = word.split('-').collect();
        let well_formed = parts.len() >= 2
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
            && parts[0].starts_with(|c: char| c.is_ascii_lowercase());
        let modifier = parts
            .last()
            .is_some_and(|p| WORDS.hyphen_modifiers.contains(*p));
        if !well_formed || modifier {
            return None;
        }
        let around = [i.checked_sub(1), Some(i + 1)];
        let near = |set: &WordSet| {
            around
                .iter()
                .flatten()
                .filter_map(|&j| self.tokens.get(j))
                .any(|t| set.contains(t.lower()))
        };
        let is_year = |p: &&str| p.len() == 4 && (p.starts_with("19") || p.starts_with("20"));
        if near(&WORDS.project_cues) || parts.iter().any(is_year) {
            return Some(EntityType::Project);
        }
        let numbered = !WORDS.not_hosts.contains(parts[0])
            && parts[1..]
                .iter()
                .any(|p| p.chars().any(|c| c.is_ascii_digit()));
        let suffix = parts
            .last()
            .is_some_and(|p| WORDS.service_suffixes.contains(*p));
        (numbered || suffix || near(&WORDS.service_cues)).then_some(EntityType::Service)
    }

    /// How many units from the first form one capitalized name.
    fn run_len(&self, units: &[Unit]) -> usize {
        let head = units[0];
        if !head.nameish(self.tokens) && !matches!(head.shape, Shape::Acronym) {
            return 1;
        }
        let mut len = 1;
        while let Some(&next) = units.get(len) {
            let last = units[len - 1];
            if self.tokens[last.last].possessive() {
                // "St. Mary's Hospital", but not "Rebecca's Notes".
                if next.nameish(self.tokens) && self.joins(next) && self.is_suffix(next) {
                    len += 1;
                    continue;
                }
                break;
            }
            if self.joins(next) && self.extends(head, len, next) {
                len += 1;
            } else if let Some(&after) = units.get(len + 1)
                && self.connects(last, next, after)
            {
                len += 2;
            } else {
                break;
            }
        }
        len
    }

    /// Whether `next` continues the name `head` starts, `len` units long so
    /// far: "JR Pass", "Zoho CRM", "Backblaze B2", "Marriott Bonvoy".
    fn extends(&self, head: Unit, len: usize, next: Unit) -> bool {
        match head.shape {
            Shape::Acronym if len == 1 => matches!(next.shape, Shape::Word),
            _ if len == 1 && is_vendor(head) => {
                next.nameish(self.tokens) || matches!(next.shape, Shape::Acronym)
            }
            _ => next.nameish(self.tokens),
        }
    }

    /// Whether `b` follows the unit before it within one name: one space,
    /// an abbreviation's full stop ("St. Mary's") or "&" ("Okafor & Partners").
    fn joins(&self, b: Unit) -> bool {
        let next = &self.tokens[b.first];
        matches!(next.gap, " " | " & ") || (next.gap == ". " && !next.sentence_start)
    }

    /// "Bank of Lisbon", "Rio de Janeiro": a small word between two parts.
    fn connects(&self, a: Unit, c: Unit, b: Unit) -> bool {
        let word = &self.tokens[c.first];
        !self.ctx.german
            && c.first == c.last
            && WORDS.connectors.contains(word.lower())
            && !matches!(a.shape, Shape::Known(_))
            && b.nameish(self.tokens)
            && self.joins(c)
            && self.joins(b)
    }

    /// Words that may follow a possessive inside a name: "St. Mary's Hospital".
    fn is_suffix(&self, unit: Unit) -> bool {
        let word = self.tokens[unit.last].lower();
        WORDS.org_suffixes.contains(word) || WORDS.place_suffixes.contains(word)
    }

    /// Reads one run of units: a single word, or a capitalized multi-word name.
    fn read_run(&mut self, run: &[Unit]) {
        let mut run = run;
        let mut sentence_start = self.tokens[run[0].first].sentence_start;
        let (mut person, mut cue) = (false, None);
        while let [head, rest @ ..] = run {
            if rest.is_empty() || !matches!(head.shape, Shape::Word) {
                break;
            }
            let word = self.tokens[head.first].lower();
            if word == "project" && !self.ctx.german {
                cue = Some(EntityType::Project);
                break;
            } else if WORDS.titles.contains(word) {
                person = true;
            } else if WORDS.org_cues.contains(word) {
                cue = Some(EntityType::Organization);
            } else if WORDS.project_cues.contains(word) {
                cue = Some(EntityType::Project);
            } else if word != "the"
                && !WORDS.common_nouns.contains(word)
                && !(sentence_start
                    && (is_ordinary_start(word) || self.leads_into_name(word, rest[0])))
            {
                break;
            }
            run = rest;
            sentence_start = false;
        }
        match run {
            [] => {}
            [unit] => {
                if let Some(kind) = self.judge(*unit, sentence_start, person, cue) {
                    self.emit(unit.first, unit.end, kind);
                }
            }
            [first, .., last] => {
                let words = run
                    .iter()
                    .any(|u| matches!(u.shape, Shape::Word | Shape::Acronym));
                if (words || is_vendor(*first)) && self.accept_name(run, person, cue) {
                    let kind = self.classify(run, person, cue);
                    self.emit(first.first, last.end, kind);
                } else {
                    for unit in run.iter().filter(|u| matches!(u.shape, Shape::Known(_))) {
                        self.read_run(std::slice::from_ref(unit));
                    }
                }
            }
        }
    }

    /// A sentence's unlisted first word before a listed tool or a given
    /// name is a verb, not part of the name: "Replace Jenkins…", "Remind Sarah…".
    fn leads_into_name(&self, word: &str, next: Unit) -> bool {
        let next_word = self.tokens[next.first].lower();
        let listed = match next.shape {
            Shape::Known(known) => known.kind != EntityType::Place,
            Shape::Word => {
                WORDS.given.contains(next_word) && !WORDS.ambiguous_names.contains(next_word)
            }
            _ => false,
        };
        listed && !WORDS.given.contains(word)
    }

    /// German capitalizes nouns, so there a multi-word run needs a sign it
    /// is a name: a given name, a title or cue, or an organization suffix.
    fn accept_name(&self, run: &[Unit], person: bool, cue: Option<EntityType>) -> bool {
        if self.names_group(run[run.len() - 1]) {
            return false;
        }
        if !self.ctx.german || person || cue.is_some() {
            return true;
        }
        let first = self.tokens[run[0].first].lower();
        let last = self.tokens[run[run.len() - 1].last].lower();
        WORDS.given.contains(first) || WORDS.org_suffixes.contains(last)
    }

    /// "the Billing team", "the Data Platform folks": a group, not a name.
    fn names_group(&self, last: Unit) -> bool {
        self.tokens
            .get(last.last + 1)
            .is_some_and(|t| t.gap == " " && WORDS.group_words.contains(t.lower()))
    }

    /// Whether a single unit names something here, and what.
    fn judge(
        &self,
        unit: Unit,
        sentence_start: bool,
        person: bool,
        cue: Option<EntityType>,
    ) -> Option<EntityType> {
        let token = &self.tokens[unit.first];
        let word = token.lower();
        match unit.shape {
            Shape::Known(known) => return Some(self.known_kind(unit, known)),
            Shape::Pattern(kind) => return Some(kind),
            Shape::Plain if self.ctx.casing == Casing::Lower => {
                let name = WORDS.given.contains(word) && !WORDS.ambiguous_names.contains(word);
                return name.then_some(EntityType::Person);
            }
            Shape::Plain | Shape::Acronym => return None,
            Shape::Word => {}
        }
        if WORDS.common_nouns.contains(word) && !person {
            return None;
        }
        if person || cue.is_some() {
            return cue.or(Some(EntityType::Person));
        }
        if WORDS.ambiguous_names.contains(word) {
            return self.ambiguous_name(unit, sentence_start);
        }
        if WORDS.given.contains(word) {
            return Some(EntityType::Person);
        }
        let prev = unit.first.checked_sub(1).map(|i| self.tokens[i].lower());
        let cued = self.after_project_cue(unit) || prev.is_some_and(|p| WORDS.org_cues.contains(p));
        let next = self.tokens.get(unit.last + 1);
        let acts = token.possessive()
            || next.is_some_and(|n| WORDS.subject_verbs.contains(n.lower()))
            || self.comes_from(unit);
        let plausible = match self.ctx.casing {
            Casing::Shouting => false,
            _ if sentence_start && is_ordinary_start(word) => false,
            _ if WORDS.common_nouns.contains(word) || self.names_group(unit) => false,
            _ if self.ctx.german => cued,
            _ => !sentence_start || acts || cued,
        };
        plausible.then(|| self.classify(std::slice::from_ref(&unit), false, None))
    }

    /// "Tavares from finance …": someone from a team or place.
    fn comes_from(&self, unit: Unit) -> bool {
        let mut after = self.tokens.iter().skip(unit.last + 1);
        let from = after
            .next()
            .is_some_and(|t| t.lower() == "from" && t.gap == " ");
        from && after
            .next()
            .is_some_and(|t| !t.capitalized() && !t.is_number())
    }

    /// A listed name's type here: "project Atlas" is a project, and "sits
    /// with Hugo" names a person, not the site generator.
    fn known_kind(&self, unit: Unit, known: Known) -> EntityType {
        let token = &self.tokens[unit.first];
        let given = unit.first == unit.last && WORDS.given.contains(token.lower());
        if self.after_project_cue(unit) {
            EntityType::Project
        } else if given && token.capitalized() && self.person_context(unit) {
            EntityType::Person
        } else {
            known.kind
        }
    }

    /// "project Orion", "proyecto Atlas".
    fn after_project_cue(&self, unit: Unit) -> bool {
        let prev = unit.first.checked_sub(1).map(|i| &self.tokens[i]);
        prev.is_some_and(|p| WORDS.project_cues.contains(p.lower()) && !p.capitalized())
    }

    /// A lone unlisted word reads as a person when people surround it
    /// ("Ingrid, Tariq, Mei") or it does what people do ("Hamid takes over").
    fn person_context(&self, unit: Unit) -> bool {
        let near = [
            unit.first.checked_sub(2),
            unit.first.checked_sub(1),
            Some(unit.last + 1),
            Some(unit.last + 2),
        ];
        let named = near
            .iter()
            .flatten()
            .filter_map(|&i| self.tokens.get(i))
            .any(|t| {
                t.capitalized()
                    && WORDS.given.contains(t.lower())
                    && !WORDS.ambiguous_names.contains(t.lower())
            });
        let prev = unit.first.checked_sub(1).map(|i| self.tokens[i].lower());
        let next = self.tokens.get(unit.last + 1).map(|t| t.lower());
        named
            || self.comes_from(unit)
            || prev.is_some_and(|p| WORDS.person_before.contains(p))
            || next.is_some_and(|n| WORDS.person_after.contains(n))
    }

    /// "May is taking over … in May", "Will asked", "Mark the test as flaky".
    fn ambiguous_name(&self, unit: Unit, sentence_start: bool) -> Option<EntityType> {
        let token = &self.tokens[unit.first];
        let prev = unit.first.checked_sub(1).map(|i| &self.tokens[i]);
        let next = self.tokens.get(unit.last + 1);
        let dated = prev.is_some_and(|p| WORDS.date_words.contains(p.lower()) || p.is_number())
            || next.is_some_and(Token::is_number);
        if dated && ["may", "april", "june", "jan"].contains(&token.lower()) {
            return None;
        }
        let acts =
            token.possessive() || next.is_some_and(|n| WORDS.subject_verbs.contains(n.lower()));
        (!sentence_start || acts).then_some(EntityType::Person)
    }

    /// The type of a capitalized name, from its words and the word before it.
    fn classify(&self, run: &[Unit], person: bool, cue: Option<EntityType>) -> EntityType {
        if person {
            return EntityType::Person;
        }
        if let Some(kind) = cue {
            return kind;
        }
        let (head, tail) = (run[0], run[run.len() - 1]);
        let first = self.tokens[head.first].lower();
        let last = self.tokens[tail.last].lower();
        let prev = head.first.checked_sub(1).map(|i| self.tokens[i].lower());
        let multi = tail.last > head.first;
        let known = run.iter().find_map(|u| match u.shape {
            Shape::Known(k) => Some(k.kind),
            _ => None,
        });
        let hyphenated_first = self.tokens[head.first].text.contains('-');
        if prev.is_some_and(|p| WORDS.project_cues.contains(p)) {
            EntityType::Project
        } else if WORDS.given.contains(first) || (multi && hyphenated_first) {
            EntityType::Person
        } else if multi && WORDS.event_suffixes.contains(last) {
            EntityType::Other
        } else if multi && WORDS.place_suffixes.contains(last) {
            EntityType::Place
        } else if multi && (WORDS.org_suffixes.contains(last) || WORDS.org_suffixes.contains(first))
        {
            EntityType::Organization
        } else if multi && is_vendor(head) {
            // A vendor's product line: "Zoho CRM", "Apple Reminders".
            EntityType::Tool
        } else if let Some(kind) = known {
            kind
        } else if self.person_context(Unit {
            last: tail.last,
            ..head
        }) {
            EntityType::Person
        } else if prev.is_some_and(|p| WORDS.place_preps.contains(p)) {
            EntityType::Place
        } else {
            EntityType::Organization
        }
    }

    fn emit(&mut self, first: usize, end: usize, entity_type: EntityType) {
        let start = self.tokens[first].start;
        let name = self.text[start..end].to_string();
        self.found.push((start, Mention { name, entity_type }));
    }
}

/// A sentence's first word that is an ordinary word: listed, or shaped
/// like a verb or adverb ("Trying", "Visited", "Usually").
fn is_ordinary_start(word: &str) -> bool {
    let inflected =
        word.chars().count() > 4 && ["ing", "ed", "ly"].iter().any(|s| word.ends_with(s));
    WORDS.start_stop.contains(word) || (inflected && !WORDS.given.contains(word))
}

/// A listed vendor or cloud service, whose product lines follow its name.
fn is_vendor(unit: Unit) -> bool {
    matches!(
        unit.shape,
        Shape::Known(Known {
            kind: EntityType::Organization | EntityType::Service,
            ..
        })
    )
}

/// Looks `prefix` + `token` up as written, without a possessive "'s", and
/// without the plural "s" of an acronym; returns where the name ends.
fn known_word(prefix: &str, token: &Token) -> Option<(usize, Known)> {
    let find = |word: &str| {
        LEXICON
            .known
            .get(&format!("{prefix}{}", word.to_lowercase()))
            .copied()
    };
    let as_written = if prefix.is_empty() && !token.possessive() {
        LEXICON.known.get(token.lower()).copied()
    } else {
        find(token.text)
    };
    if let Some(known) = as_written {
        return Some((token.end, known));
    }
    let base = token.base();
    let singular = base
        .strip_suffix('s')
        .filter(|s| s.len() >= 2 && s.chars().all(|c| c.is_uppercase() || c.is_ascii_digit()));
    [Some(base), singular]
        .into_iter()
        .flatten()
        .filter(|w| w.len() < token.text.len())
        .find_map(|w| find(w).map(|known| (token.start + w.len(), known)))
}

/// "0.27", "3.12.1", "v2.1": a version number.
fn is_version(word: &str) -> bool {
    let digits = word.strip_prefix('v').unwrap_or(word);
    digits.contains('.')
        && digits
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// "API", "SEV1s", "PRs": two or more capitals and no lower case but a plural "s".
fn is_acronym(word: &str) -> bool {
    let stem = word.strip_suffix('s').unwrap_or(word);
    stem.chars().filter(|c| c.is_uppercase()).count() >= 2 && !stem.chars().any(char::is_lowercase)
}

/// camelCase and PascalCase identifiers ("useAuthSession", "OrderService",
/// "DateUtils.parse"), but not names like "McDonald".
fn is_identifier(word: &str) -> bool {
    let hump = word
        .chars()
        .zip(word.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let surname = word.starts_with("Mc") || word.starts_with("Mac");
    hump && !surname && !is_acronym(word) && !word.contains(['\'', '’', '-'])
}
