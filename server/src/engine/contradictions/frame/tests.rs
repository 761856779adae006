use super::*;

fn replaces(new: &str, old: &str) -> bool {
    judge(&frame(new), &frame(old)).is_some()
}

fn swapped(new: &str, old: &str) -> bool {
    judge_swapped(&frame(new), &frame(old)).is_some()
}

#[test]
fn the_same_statement_with_a_part_swapped_after_its_verb_is_swapped() {
    assert!(swapped(
        "Tyrell Corp is on standard support.",
        "Tyrell Corp is on premium support."
    ));
    assert!(swapped(
        "Send the weekly report as a Google Doc link.",
        "Send the weekly report as a PDF."
    ));
    assert!(swapped(
        "Camila Rojas vive en Lima.",
        "Camila Rojas vive en Santiago de Chile."
    ));
    // Before the verb: another subject.
    assert!(!swapped(
        "Service 7 talks to the payments API.",
        "Service 3 talks to the payments API."
    ));
    // Right after the verb, nothing marks what the part is.
    assert!(!swapped(
        "I prefer concise answers.",
        "I prefer tabs for indentation."
    ));
    // Another attribute ("on the team", "a title").
    assert!(!swapped(
        "Yara is a staff engineer.",
        "Yara is on the storage team."
    ));
    // One of many.
    assert!(!swapped("Alice speaks German.", "Alice speaks French."));
    // A story, not a statement.
    assert!(!swapped(
        "Alice said that the deploy on Friday went fine and that she would look at the flaky test in the billing service on Monday before the standup.",
        "Alice said that the deploy on Friday went fine and that she would look at the flaky test in the billing service on Tuesday before the standup."
    ));
}

#[test]
fn the_same_frame_with_another_value_replaces_it() {
    assert!(replaces(
        "Primary MySQL host is now db-prod-7.dc3.example.net after the DC2 decommission.",
        "Primary MySQL host: db-prod-1.dc2.example.net"
    ));
    assert!(replaces(
        "Alice works at Globex now.",
        "Alice works at Acme."
    ));
    assert!(!replaces("Alice speaks German.", "Alice speaks French."));
    assert!(replaces(
        "The cluster has 4 nodes now.",
        "The cluster has 8 nodes."
    ));
    // Another value without a cue: a second thing, not a change.
    assert!(!replaces(
        "alpha fact 4 from before the backup",
        "alpha fact 3 from before the backup"
    ));
    assert!(!replaces(
        "Contoso's CTO is Priyanka Shah.",
        "Contoso's CEO is David Olsen."
    ));
    // The older frame is not all in the newer one.
    assert!(!replaces(
        "The admin dashboard builds with Node 20.",
        "The marketing site builds with Node 18."
    ));
}
