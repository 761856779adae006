//! The rules' decisions, alone and with the labelled examples' vote.

use super::shapes::{ACKNOWLEDGED_CUE, LESSON_SHAPE_CUE, STATEMENT_CUE};
use super::timing::{EVENT_CUE, FOR_LATER_CUE, happened_at_a_time};
use super::*;

/// A vote of `probability` for `label` and `none` for "not worth
/// keeping" (the same when `label` is `None`), the rest spread evenly over
/// the other types.
fn vote_for(label: Option<MemoryType>, probability: f64, none: f64) -> Vote {
    let class = label.map_or(0, |t| t.code() as usize);
    let others = if class == 0 { 6.0 } else { 5.0 };
    let rest = (1.0 - probability - if class == 0 { 0.0 } else { none }) / others;
    let mut probabilities = [rest; 7];
    probabilities[0] = none;
    probabilities[class] = probability;
    Vote { probabilities }
}

/// The rules' decision alone.
fn classify(transcript: &str, scope: &Scope, task_id: &str) -> Decision {
    classify_with_vote(transcript, scope, task_id, None)
}

fn decide(transcript: &str) -> Decision {
    classify(transcript, &Scope::default(), "")
}

#[test]
fn preferences_are_global_and_important() {
    let d = decide("User: I prefer tabs over spaces in every repo.");
    assert!(d.should_store);
    assert_eq!(d.memory_type, MemoryType::Preference);
    assert!(d.importance >= 0.7);
    assert_eq!(d.level, MemoryLevel::Global);
    assert_eq!(d.summary, "I prefer tabs over spaces in every repo.");
    assert_eq!(d.reason, "matched preference cue 'i prefer'");
}

#[test]
fn negated_and_hedged_cues_are_not_knowledge() {
    for transcript in [
        "I don't prefer anything in particular.",
        "We haven't decided yet.",
        "Maybe we should use Redis? Not sure.",
        "Did we ever find the root cause?",
        "No preference, you pick.",
        "Always happy to help!",
    ] {
        assert!(!decide(transcript).should_store, "{transcript}");
    }
}

#[test]
fn chatter_and_tool_noise_are_not_stored() {
    for transcript in [
        "Hi there! Thanks a lot.",
        "Compiling serde v1.0.200\n   Compiling tokio v1.40.0",
        "ok",
    ] {
        let d = decide(transcript);
        assert!(!d.should_store, "{transcript}");
        assert_eq!(d.importance, 0.0);
    }
}

#[test]
fn the_strongest_kind_of_cue_decides() {
    let d = decide("We deployed on Monday. Lesson learned: run migrations before the deploy.");
    assert_eq!(d.memory_type, MemoryType::Lesson);
    assert_eq!(
        d.summary,
        "Lesson learned: run migrations before the deploy."
    );
}

#[test]
fn levels_never_go_narrower_than_the_scope() {
    let project = Scope {
        project_id: "shop".into(),
        ..Scope::default()
    };
    let d = classify("We decided to use Postgres for orders.", &project, "t1");
    assert_eq!(
        (d.memory_type, d.level),
        (MemoryType::Decision, MemoryLevel::Workspace)
    );
    assert_eq!(d.metadata.get("task_id").map(String::as_str), Some("t1"));
    let d = classify(
        "We decided to use Postgres for orders.",
        &Scope::default(),
        "",
    );
    assert_eq!(d.level, MemoryLevel::Global);
    let chat = Scope {
        session_id: "s".into(),
        ..Scope::default()
    };
    assert_eq!(
        classify("FYI the demo moved to 3pm.", &chat, "").level,
        MemoryLevel::Conversation
    );
}

#[test]
fn the_shape_of_an_exchange_decides_where_no_marker_does() {
    let cases = [
        (
            "The nightly import failed because the CSV came with a BOM. Strip the BOM before parsing.",
            MemoryType::Lesson,
            LESSON_SHAPE_CUE,
        ),
        (
            "User: Invoices: PDF, one page, no logo.\nAssistant: Understood — all future invoices will look like that.",
            MemoryType::Preference,
            ACKNOWLEDGED_CUE,
        ),
        (
            "User: ask the landlord about the deposit in March.",
            MemoryType::Note,
            FOR_LATER_CUE,
        ),
        (
            "User: the vendor migration finished on 3 June, two days late.",
            MemoryType::Event,
            EVENT_CUE,
        ),
        (
            "Assistant: The certificate was renewed at 09:12 UTC.",
            MemoryType::Event,
            EVENT_CUE,
        ),
        (
            "User (nurse): For night shifts, send the handover as bullet points.",
            MemoryType::Preference,
            "send",
        ),
    ];
    for (transcript, memory_type, cue) in cases {
        let d = decide(transcript);
        assert!(d.should_store, "{transcript}");
        assert_eq!(d.memory_type, memory_type, "{transcript}");
        assert_eq!(d.metadata["cue"], cue, "{transcript}");
    }
}

#[test]
fn states_schedules_one_off_choices_and_narration_are_not_events_or_decisions() {
    assert!(!happened_at_a_time(
        "the feature store is refreshed nightly at 02:00 utc."
    ));
    assert!(!happened_at_a_time("quiet hours are sacred before 10:30."));
    assert!(!happened_at_a_time(
        "got it, i'll hold your calendar until 10:30."
    ));
    assert!(happened_at_a_time(
        "we signed with the new landlord on 2 may."
    ));
    // What is to be done by a time is a to-do.
    assert!(!happened_at_a_time(
        "chase the signed contract by friday, we can't ship until it's signed."
    ));
    assert!(!happened_at_a_time(
        "remind me before the renewal on 1 june, the card expired."
    ));
    assert!(happened_at_a_time(
        "the contract was signed by friday's call at 16:00."
    ));
    for transcript in [
        "User: let's go with the second one.",
        "User: between the two logos I prefer the darker one.",
        "Assistant: I decided to split the file into chunks.",
        "2025-01-09 10:22:31 WARN [worker-2] retrying job 8812 after 250ms",
        "User: remind me in 5 minutes to check the oven.",
    ] {
        assert!(!decide(transcript).should_store, "{transcript}");
    }
}

#[test]
fn a_note_is_kept_even_when_it_asks_or_hedges() {
    let d = decide(
        "User: open question for the spring planning: do we need a second region? Not sure yet.",
    );
    assert!(d.should_store);
    assert_eq!(d.memory_type, MemoryType::Note);
}

#[test]
fn the_vote_fills_gaps_decides_weak_cues_and_overrules_phrases_only_when_sure() {
    let with = |transcript: &str, voted: Option<MemoryType>, probability: f64, none: f64| {
        let vote = vote_for(voted, probability, none);
        classify_with_vote(transcript, &Scope::default(), "", Some(&vote))
    };
    let kept = |d: &Decision| d.should_store.then_some(d.memory_type);
    // No cue at all: likely enough worth keeping keeps it, as the vote's
    // likeliest type.
    let gap = "User: the quarterly numbers look rough for the east region.";
    assert_eq!(kept(&decide(gap)), None);
    let d = with(gap, Some(MemoryType::Note), 0.6, 0.3);
    assert_eq!(kept(&d), Some(MemoryType::Note), "{d:?}");
    assert_eq!(d.metadata["classifier"], "rules+examples");
    assert_eq!(d.metadata["vote"], "NOTE 0.60");
    assert_eq!(
        d.summary,
        "the quarterly numbers look rough for the east region."
    );
    assert_eq!(kept(&with(gap, Some(MemoryType::Note), 0.2, 0.75)), None);
    // A plain statement and a bare imperative: the vote decides whether
    // and as what.
    for (weak, ruled, cue) in [
        (
            "User: the build server is in the basement rack.",
            MemoryType::Fact,
            STATEMENT_CUE,
        ),
        (
            "User: use the blue one for the header.",
            MemoryType::Preference,
            "use",
        ),
    ] {
        let d = decide(weak);
        assert_eq!((kept(&d), d.metadata["cue"].as_str()), (Some(ruled), cue));
        let d = with(weak, Some(MemoryType::Event), 0.6, 0.2);
        assert_eq!(kept(&d), Some(MemoryType::Event), "{d:?}");
        assert_eq!(kept(&with(weak, Some(ruled), 0.3, 0.6)), Some(ruled));
        let d = with(weak, None, 0.8, 0.8);
        assert_eq!(kept(&d), None, "{weak}");
        assert_eq!(d.metadata["vote"], "NOT_STORED 0.80");
    }
    // A cue phrase stands unless the vote is sure: all but certain it is
    // not worth keeping drops it, clearly another type retypes it.
    let phrase = "User: always use tabs in this repo.";
    assert_eq!(kept(&decide(phrase)), Some(MemoryType::Preference));
    assert_eq!(kept(&with(phrase, None, 0.97, 0.97)), None);
    assert_eq!(
        kept(&with(phrase, None, 0.9, 0.9)),
        Some(MemoryType::Preference)
    );
    assert_eq!(
        kept(&with(phrase, Some(MemoryType::Lesson), 0.8, 0.1)),
        Some(MemoryType::Lesson)
    );
    assert_eq!(
        kept(&with(phrase, Some(MemoryType::Lesson), 0.5, 0.1)),
        Some(MemoryType::Preference)
    );
    // Explicit markers stand.
    for (transcript, memory_type) in [
        (
            "User: I prefer tabs for indentation.",
            MemoryType::Preference,
        ),
        (
            "User: lesson learned: run migrations before the deploy.",
            MemoryType::Lesson,
        ),
    ] {
        assert_eq!(
            kept(&with(transcript, None, 0.99, 0.99)),
            Some(memory_type),
            "{transcript}"
        );
        assert_eq!(
            kept(&with(transcript, Some(MemoryType::Fact), 0.99, 0.0)),
            Some(memory_type),
            "{transcript}"
        );
    }
}

#[test]
fn the_vote_keeps_nothing_that_names_a_credential_the_rules_would_not() {
    let vote = vote_for(Some(MemoryType::Fact), 0.9, 0.05);
    for (transcript, kept) in [
        (
            "User: the quarterly numbers look rough for the east region.",
            true,
        ),
        (
            "User: set the redis requirepass to `sunflower-42-Q` for a while",
            false,
        ),
        (
            "Nutzer: das Passwort vom Gäste-WLAN klebt am Kühlschrank",
            false,
        ),
    ] {
        let d = classify_with_vote(transcript, &Scope::default(), "", Some(&vote));
        assert_eq!(d.should_store, kept, "{transcript}: {d:?}");
    }
}

#[test]
fn long_summaries_are_cut_to_300_characters() {
    let d = decide(&format!(
        "Lesson learned: {}",
        "very long explanation ".repeat(30)
    ));
    assert!(d.summary.chars().count() <= MAX_SUMMARY_CHARS);
}

#[test]
fn german_french_and_spanish_cues_decide_as_english_ones_do() {
    for (transcript, memory_type, summary) in [
        (
            "Nutzer: Ich bevorzuge kurze Antworten ohne Einleitung.\nAssistent: Verstanden.",
            MemoryType::Preference,
            "Ich bevorzuge kurze Antworten ohne Einleitung.",
        ),
        (
            "Utilisateur : Nous avons décidé de garder Postgres pour la facturation.",
            MemoryType::Decision,
            "Nous avons décidé de garder Postgres pour la facturation.",
        ),
        (
            "Usuario: Lo que aprendimos: sin copia de seguridad no se despliega.",
            MemoryType::Lesson,
            "Lo que aprendimos: sin copia de seguridad no se despliega.",
        ),
        (
            "Ich: Erinnere mich bitte im März an die Steuererklärung.",
            MemoryType::Note,
            "Erinnere mich bitte im März an die Steuererklärung.",
        ),
        (
            "Moi : Ma femme Claire est allergique aux noix.",
            MemoryType::Fact,
            "Ma femme Claire est allergique aux noix.",
        ),
        (
            "Yo: Ayer lanzamos la tienda nueva en Sevilla.",
            MemoryType::Event,
            "Ayer lanzamos la tienda nueva en Sevilla.",
        ),
    ] {
        let d = decide(transcript);
        assert!(d.should_store, "{transcript}: {}", d.reason);
        assert_eq!(d.memory_type, memory_type, "{transcript}");
        assert!(
            d.summary.starts_with(summary),
            "{transcript}: the speaker's label is not kept, got {:?}",
            d.summary
        );
    }
    for hedged in [
        "Nutzer: Vielleicht nehmen wir Redis, ich weiß nicht.",
        "Utilisateur : On verra si on garde Postgres.",
        "Usuario: Tal vez prefiero el modo oscuro.",
    ] {
        assert!(!decide(hedged).should_store, "{hedged}");
    }
}

#[test]
fn what_a_user_takes_back_is_not_kept() {
    for retracted in [
        "User: remember that the demo is on Thursday.\nAssistant: Noted.\nUser: wait, forget it, they cancelled.",
        "Nutzer: Merk dir, dass die Demo am Donnerstag ist.\nAssistent: Notiert.\nNutzer: Vergiss es, sie ist abgesagt.",
        "Usuario: Apunta que la demo es el jueves.\nAsistente: Apuntado.\nUsuario: No, bórralo, la cancelaron.",
    ] {
        let d = decide(retracted);
        assert!(!d.should_store, "{retracted}: {}", d.reason);
    }
    // What follows the retraction still counts; the assistant retracts
    // nothing of the user's.
    let d =
        decide("User: use tabs.\nUser: scratch that.\nUser: we decided to use spaces everywhere.");
    assert_eq!(d.memory_type, MemoryType::Decision);
    assert_eq!(d.summary, "we decided to use spaces everywhere.");
    let d = decide(
        "User: I prefer dark mode in every editor.\nAssistant: Never mind the old theme, switching now.",
    );
    assert_eq!(d.memory_type, MemoryType::Preference);
    // Not a retraction: a longer word, or a negated one.
    for kept in [
        "User: remind me to file the VAT return, I'll forget it's due on the 7th.",
        "User: remind me to file the VAT return. Don't forget it, the fine is steep.",
    ] {
        let d = decide(kept);
        assert!(d.should_store, "{kept}: {}", d.reason);
        assert_eq!(d.memory_type, MemoryType::Note, "{kept}");
    }
}

#[test]
fn thanks_is_courtesy_unless_a_marker_says_more() {
    for courtesy in [
        "User: thanks for yesterday, the launch went down well",
        "Nutzer: Danke für gestern!",
        "Utilisateur : Merci pour ton aide hier soir.",
        "User: ty for yesterday, the deploy went fine",
    ] {
        assert!(!decide(courtesy).should_store, "{courtesy}");
    }
    let d = decide("User: Thanks! We decided to use Kafka for the event bus.");
    assert_eq!(d.memory_type, MemoryType::Decision);
    let d = decide("User: thanks, and note to self: renew the TLS certificate in May.");
    assert_eq!(d.memory_type, MemoryType::Note);
    let d = decide("User: Thanksgiving dinner is at my sister's house in Ohio every year.");
    assert!(d.should_store, "{}", d.reason);
    assert_eq!(d.memory_type, MemoryType::Fact);
}
