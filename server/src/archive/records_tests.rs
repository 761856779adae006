//! The export format's records: their JSON, names and keys.

use engram::v1 as pb;

use super::*;

fn revision(changed_fields: &[&str]) -> Record {
    Record::MemoryRevision(MemoryRevisionRecord {
        namespace: "n".into(),
        memory_id: "m1".into(),
        version: 2,
        action: RevisionAction::Merged,
        time: 7,
        key_id: "k".into(),
        agent_id: "a".into(),
        changed_fields: changed_fields.iter().map(|f| (*f).to_owned()).collect(),
        reason: String::new(),
        replaced_by: String::new(),
    })
}

#[test]
fn revision_actions_are_the_api_s_numbers_and_lower_case_names_in_the_file() {
    for action in RevisionAction::ALL {
        let api = pb::RevisionAction::try_from(action as i32).expect("an API action");
        assert_eq!(
            api.as_str_name(),
            format!("REVISION_ACTION_{}", action.name().to_uppercase())
        );
        assert_eq!(RevisionAction::from_code(action as i32), Some(action));
        assert_eq!(
            serde_json::to_value(action).expect("JSON"),
            serde_json::Value::from(action.name())
        );
    }
    assert_eq!(RevisionAction::from_code(0), None);
}

#[test]
fn a_revision_reads_back_as_written_and_is_named_by_its_memory_version_and_action() {
    let record = revision(&["seen_count", "occurred_at"]);
    let line = serde_json::to_string(&record).expect("JSON");
    let fields = r#"{"kind":"memory_revision","namespace":"n","memory_id":"m1","version":2,"#;
    assert!(line.starts_with(fields), "{line}");
    assert!(line.contains(r#""action":"merged""#), "{line}");
    assert_eq!(
        serde_json::from_str::<Record>(&line).expect("a record"),
        record
    );
    assert_eq!(record.kind(), Kind::MemoryRevision);
    assert_eq!(
        record.describe(),
        "the merged revision (version 2) of memory m1"
    );
    assert_eq!(record.validate(), Ok(()));
}

#[test]
fn a_revision_needs_its_memory_a_version_and_field_names_without_commas() {
    assert_eq!(
        revision(&["content,importance"]).validate(),
        Err(r#"changed_fields must be field names (got "content,importance")"#.into())
    );
    assert_eq!(
        revision(&[" "]).validate(),
        Err(r#"changed_fields must be field names (got " ")"#.into())
    );
    let Record::MemoryRevision(mut r) = revision(&[]) else {
        unreachable!("a revision")
    };
    r.version = 0;
    assert_eq!(
        Record::MemoryRevision(r.clone()).validate(),
        Err("version must be at least 1 (got 0)".into())
    );
    r.version = 1;
    r.memory_id = String::new();
    assert_eq!(
        Record::MemoryRevision(r).validate(),
        Err("memory_id must not be empty".into())
    );
}

#[test]
fn what_a_memory_says_of_its_entities_reads_back_as_written_and_needs_folded_keys() {
    let relation = MemoryRelationRecord {
        namespace: "n".into(),
        memory_id: "m1".into(),
        position: 1,
        subject_key: "zorblax".into(),
        predicate: "led by".into(),
        object: "Mira Okafor".into(),
    };
    let named = Record::MemoryEntity(MemoryEntityRecord {
        namespace: "n".into(),
        memory_id: "m1".into(),
        entity_id: "e1".into(),
    });
    for (record, kind, describe) in [
        (
            Record::MemoryRelation(relation.clone()),
            "memory_relation",
            "relation 1 of memory m1",
        ),
        (named, "memory_entity", "memory m1 naming entity e1"),
    ] {
        let line = serde_json::to_string(&record).expect("JSON");
        assert!(
            line.starts_with(&format!(r#"{{"kind":"{kind}","#)),
            "{line}"
        );
        assert_eq!(
            serde_json::from_str::<Record>(&line).expect("a record"),
            record
        );
        assert_eq!(record.kind().name(), kind);
        assert_eq!(record.describe(), describe);
        assert_eq!(record.validate(), Ok(()));
    }
    let unfolded = MemoryRelationRecord {
        subject_key: "Zorblax".into(),
        ..relation.clone()
    };
    assert_eq!(
        Record::MemoryRelation(unfolded).validate(),
        Err("subject_key must be the case-folded name".into())
    );
    let before_the_first = MemoryRelationRecord {
        position: -1,
        ..relation
    };
    assert_eq!(
        Record::MemoryRelation(before_the_first).validate(),
        Err("position must be at least 0 (got -1)".into())
    );
}
