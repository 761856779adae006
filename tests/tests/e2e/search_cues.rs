//! What a search reads in a query beyond its words (issue 28): a date it
//! names finds the memories that speak of it and lifts what happened then, a speaker it names lifts what they said,
//! the answer after a matching question is lifted more than the turn
//! before it, and BuildContext says when an event happened and what its
//! "yesterday" was.

use engram_client::Engram;
use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, create, hit_contents, input, scope};

/// Noon UTC of a day.
fn noon(year: i32, month: u32, day: u32) -> prost_types::Timestamp {
    format!("{year:04}-{month:02}-{day:02}T12:00:00Z")
        .parse()
        .expect("a valid date")
}

fn happened(
    memory_type: MemoryType,
    content: &str,
    at: prost_types::Timestamp,
) -> proto::MemoryInput {
    proto::MemoryInput {
        occurred_at: Some(at),
        ..input(memory_type, content)
    }
}

async fn search(engram: &Engram, ns: &proto::Scope, query: &str) -> Vec<String> {
    let response = engram
        .memory()
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(ns.clone()),
            query: query.into(),
            limit: 10,
            ..Default::default()
        })
        .await
        .expect("search");
    hit_contents(&response)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Unrelated memories, so that the words that matter are rare.
async fn filler(engram: &Engram, ns: &proto::Scope) {
    for content in [
        "The office plants need water on Mondays",
        "The printer on the second floor jams often",
        "Team lunch moved to the Thai place",
        "The quarterly report is due in April",
    ] {
        create(engram, ns, input(MemoryType::Fact, content)).await;
    }
}

#[tokio::test]
async fn a_date_in_the_query_lifts_what_happened_that_day() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("cues-date");
    filler(&engram, &ns).await;
    let lake = "Melanie painted a lake at dawn";
    let sunset = "Melanie painted a sunset over the bay";
    create(
        &engram,
        &ns,
        happened(MemoryType::Event, sunset, noon(2023, 10, 13)),
    )
    .await;
    // Shorter, so its words weigh more.
    create(
        &engram,
        &ns,
        happened(MemoryType::Event, lake, noon(2023, 11, 2)),
    )
    .await;
    let undated = search(&engram, &ns, "What did Melanie paint?").await;
    assert_eq!(undated[..2], [lake, sunset]);
    for query in [
        "What did Melanie paint on October 13, 2023?",
        "what did melanie paint on 13 october 2023",
        "What did Melanie paint in October 2023?",
    ] {
        let dated = search(&engram, &ns, query).await;
        assert_eq!(dated[..2], [sunset, lake], "{query}");
    }
}

/// Midnight UTC of a day.
fn midnight(year: i32, month: u32, day: u32) -> prost_types::Timestamp {
    format!("{year:04}-{month:02}-{day:02}T00:00:00Z")
        .parse()
        .expect("a valid date")
}

/// The first hit of `query`, if any.
async fn first_hit(engram: &Engram, ns: &proto::Scope, query: &str) -> Option<String> {
    search(engram, ns, query).await.into_iter().next()
}

/// A memory's relative dates are resolved against its `occurred_at` when it
/// is written: `time_mentions` shows them, and a query naming that day,
/// its week, month or year finds the memory though they share no word. An
/// update of the content resolves them again.
#[tokio::test]
async fn a_relative_date_is_resolved_when_written_and_found_by_the_time_it_names() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("cues-mentioned");
    filler(&engram, &ns).await;
    let support = "Caroline went to the LGBTQ support group yesterday";
    let created = create(
        &engram,
        &ns,
        happened(MemoryType::Event, support, noon(2023, 5, 8)),
    )
    .await
    .memory
    .expect("the memory");
    let elsewhere = "Caroline bought a new bike";
    create(
        &engram,
        &ns,
        happened(MemoryType::Event, elsewhere, noon(2023, 6, 20)),
    )
    .await;

    let memory = engram
        .memory()
        .get_memory(proto::GetMemoryRequest {
            scope: Some(ns.clone()),
            id: created.id.clone(),
        })
        .await
        .expect("get");
    assert_eq!(
        memory.time_mentions,
        [proto::TimeMention {
            text: "yesterday".into(),
            start_time: Some(midnight(2023, 5, 7)),
            end_time: Some(midnight(2023, 5, 8)),
            grain: proto::TimeGrain::Day as i32,
            label: "7 May 2023".into(),
            relative: true,
        }]
    );
    assert_eq!(created.time_mentions, memory.time_mentions);

    for query in [
        "What happened on 7 May 2023?",
        "what happened on May 7, 2023",
        "What happened in May 2023?",
    ] {
        assert_eq!(
            first_hit(&engram, &ns, query).await.as_deref(),
            Some(support),
            "{query}"
        );
    }
    // Other days say nothing of it.
    assert_eq!(
        search(&engram, &ns, "What happened on 6 May 2023?").await,
        Vec::<String>::new()
    );
    // Words still count beside the day: both name Caroline, one the day.
    let both = search(&engram, &ns, "What did Caroline do on 7 May 2023?").await;
    assert_eq!(both, [support, elsewhere]);

    // An update of the content resolves its dates again.
    let moved = "Caroline went to the LGBTQ support group two days ago";
    engram
        .memory()
        .update_memory(proto::UpdateMemoryRequest {
            scope: Some(ns.clone()),
            id: created.id.clone(),
            memory: Some(proto::MemoryInput {
                content: moved.into(),
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["content".into()],
            }),
            ..Default::default()
        })
        .await
        .expect("update");
    assert_eq!(
        first_hit(&engram, &ns, "What happened on 6 May 2023?")
            .await
            .as_deref(),
        Some(moved)
    );
    assert_eq!(
        search(&engram, &ns, "What happened on 7 May 2023?").await,
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn a_speaker_named_in_the_query_lifts_what_they_said() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("cues-speaker");
    filler(&engram, &ns).await;
    let melanie = "Melanie: we went hiking in the mountains with the kids";
    let caroline = "Caroline: we went hiking in the mountains last summer";
    create(&engram, &ns, input(MemoryType::Fact, melanie)).await;
    // Newer, so it wins a tie of words.
    create(&engram, &ns, input(MemoryType::Fact, caroline)).await;
    let anyone = search(&engram, &ns, "who went hiking in the mountains").await;
    assert_eq!(anyone[..2], [caroline, melanie]);
    let named = search(
        &engram,
        &ns,
        "Where did Melanie go hiking in the mountains?",
    )
    .await;
    assert_eq!(named[..2], [melanie, caroline]);
}

#[tokio::test]
async fn the_answer_after_a_matching_question_outranks_the_turn_before_it() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("cues-answer");
    filler(&engram, &ns).await;
    let session = proto::Scope {
        session_id: "chat-1".into(),
        ..ns.clone()
    };
    let before = "Jon: I went out with friends yesterday";
    let question = "Gina: What was the poetry reading about?";
    let answer = "Jon: Stories of people finding their voice";
    for turn in [before, question, answer] {
        let memory = proto::MemoryInput {
            level: proto::MemoryLevel::Global.into(),
            ..input(MemoryType::Event, turn)
        };
        create(&engram, &session, memory).await;
    }
    // The answer gets all of its question's relevance, the turn before
    // only the share.
    let found = search(&engram, &ns, "what was the poetry reading about").await;
    let mut first_two = found[..2].to_vec();
    first_two.sort();
    assert_eq!(first_two, [question, answer], "{found:?}");
    assert_eq!(found[2], before, "{found:?}");
}

#[tokio::test]
async fn context_lines_say_when_an_event_happened_and_resolve_relative_days() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("cues-context");
    let event = "Caroline went to the LGBTQ support group yesterday";
    create(
        &engram,
        &ns,
        happened(MemoryType::Event, event, noon(2023, 5, 8)),
    )
    .await;
    let fact = "Caroline moved from Sweden four years ago";
    create(
        &engram,
        &ns,
        happened(MemoryType::Fact, fact, noon(2023, 6, 9)),
    )
    .await;
    let context = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(ns.clone()),
            query: "Caroline support group Sweden".into(),
            ..Default::default()
        })
        .await
        .expect("build context");
    assert!(
        context.text.contains(
            "- [EVENT, 8 May 2023] Caroline went to the LGBTQ support group yesterday (7 May 2023)\n"
        ),
        "{}",
        context.text
    );
    assert!(
        context
            .text
            .contains("- [FACT] Caroline moved from Sweden four years ago (2019)\n"),
        "{}",
        context.text
    );
}

/// With the `entity` weight, a query naming an entity — by any of its
/// names — lifts the memories that name it, by whichever name; without
/// it, words alone decide.
#[tokio::test]
async fn the_entity_weight_lifts_memories_naming_the_entity_by_any_name() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("cues-entity");
    filler(&engram, &ns).await;
    let named = "The billing service is run by Globex";
    let unnamed = "The payments team owns billing and owns the invoices";
    for content in [named, unnamed, "The team wiki is hosted by Initech"] {
        create(&engram, &ns, input(MemoryType::Fact, content)).await;
    }
    // Initech is another name of Globex from now on.
    engram
        .memory()
        .merge_entities(proto::MergeEntitiesRequest {
            scope: Some(ns.clone()),
            entity: "Globex".into(),
            duplicate: "Initech".into(),
        })
        .await
        .expect("merge");
    let ranked = |entity: f64| {
        let (engram, ns) = (engram.clone(), ns.clone());
        async move {
            let hits = engram_tests::search(
                &engram,
                proto::SearchMemoriesRequest {
                    scope: Some(ns),
                    query: "who owns billing at Initech?".into(),
                    limit: 10,
                    weights: Some(proto::SearchWeights {
                        entity: Some(entity),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            )
            .await;
            hits.into_iter()
                .map(|h| h.memory.expect("memory").content)
                .collect::<Vec<_>>()
        }
    };
    let at = |list: &[String], content: &str| {
        list.iter()
            .position(|c| c == content)
            .unwrap_or_else(|| panic!("{content:?} is not among {list:?}"))
    };
    let words = ranked(0.0).await;
    assert!(
        at(&words, unnamed) < at(&words, named),
        "by words alone the payments team's memory leads: {words:?}"
    );
    // The query names Globex as Initech; the memory names it as Globex.
    let lifted = ranked(1.0).await;
    assert!(
        at(&lifted, named) < at(&lifted, unnamed),
        "with the entity weight the memory naming Globex leads: {lifted:?}"
    );
}
