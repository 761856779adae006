//! Learning from outcomes over the real server (DESIGN §5): heuristics for
//! strategies that work, anti-patterns for errors that recur, agent learning
//! scopes, forgetting, statistics, and the context block's Heuristics and
//! Anti-patterns sections.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use engram_client::proto::{self, ContextItemKind, ForgetKind, LearningChange, StepResult};
use engram_client::{Code, Engram, Error, LearningClient};
use engram_tests::{Server, assert_close, assert_rejects, scope, uuid_v7};

/// The learning service over the client's connection.
fn learning(engram: &Engram) -> LearningClient {
    engram.learning()
}

const API: &str = "api_testing";
const FORMS: &str = "form_testing";
const GENERAL: &str = "general";
/// The task reported by outcomes that name their task type.
const TASK: &str = "Run the nightly checks";
const RETRY: &str = "retry with exponential backoff";
const RETRY_REWORDED: &str = "use exponential backoff retry";
const CACHE: &str = "cache responses in redis";
const FILL: &str = "fill the form field by field";
const BURST: &str = "send all requests at once";

/// `namespace` with `agent_id` named.
fn agent(namespace: &str, agent_id: &str) -> proto::Scope {
    proto::Scope {
        namespace: namespace.to_owned(),
        agent_id: agent_id.to_owned(),
        ..Default::default()
    }
}

/// An attempt at TASK with an explicit task type, nothing else reported.
fn attempt(
    scope: &proto::Scope,
    task_type: &str,
    strategy: &str,
    success: bool,
) -> proto::RecordOutcomeRequest {
    proto::RecordOutcomeRequest {
        scope: Some(scope.clone()),
        task: TASK.to_owned(),
        task_type: task_type.to_owned(),
        success,
        strategy: strategy.to_owned(),
        ..Default::default()
    }
}

/// A failed attempt that met `error`.
fn failure(
    scope: &proto::Scope,
    task_type: &str,
    strategy: &str,
    error: &str,
) -> proto::RecordOutcomeRequest {
    proto::RecordOutcomeRequest {
        error: error.to_owned(),
        ..attempt(scope, task_type, strategy, false)
    }
}

/// A successful attempt at `task`, its task type left to inference.
fn task_attempt(scope: &proto::Scope, task: &str, strategy: &str) -> proto::RecordOutcomeRequest {
    proto::RecordOutcomeRequest {
        scope: Some(scope.clone()),
        task: task.to_owned(),
        success: true,
        strategy: strategy.to_owned(),
        ..Default::default()
    }
}

async fn record(
    engram: &Engram,
    request: proto::RecordOutcomeRequest,
) -> Result<proto::RecordOutcomeResponse, Error> {
    learning(engram).record_outcome(request).await
}

async fn recorded(
    engram: &Engram,
    request: proto::RecordOutcomeRequest,
) -> proto::RecordOutcomeResponse {
    record(engram, request).await.expect("record outcome")
}

/// Records `request` `times` times; the last response.
async fn record_times(
    engram: &Engram,
    request: proto::RecordOutcomeRequest,
    times: usize,
) -> proto::RecordOutcomeResponse {
    let mut last = None;
    for _ in 0..times {
        last = Some(recorded(engram, request.clone()).await);
    }
    last.expect("recorded at least once")
}

/// The heuristic the response reports, asserting how it changed.
fn heuristic(response: &proto::RecordOutcomeResponse, change: LearningChange) -> proto::Heuristic {
    assert_eq!(response.heuristic_change(), change, "{response:?}");
    response
        .heuristic
        .clone()
        .expect("the heuristic that changed")
}

fn assert_no_heuristic(response: &proto::RecordOutcomeResponse) {
    assert_eq!(
        response.heuristic_change(),
        LearningChange::Unspecified,
        "{response:?}"
    );
    assert!(response.heuristic.is_none(), "{response:?}");
}

/// The anti-pattern the response reports, asserting how it changed.
fn anti_pattern(
    response: &proto::RecordOutcomeResponse,
    change: LearningChange,
) -> proto::AntiPattern {
    assert_eq!(response.anti_pattern_change(), change, "{response:?}");
    response
        .anti_pattern
        .clone()
        .expect("the anti-pattern that changed")
}

fn assert_no_anti_pattern(response: &proto::RecordOutcomeResponse) {
    assert_eq!(
        response.anti_pattern_change(),
        LearningChange::Unspecified,
        "{response:?}"
    );
    assert!(response.anti_pattern.is_none(), "{response:?}");
}

/// Every outcome the request lists, through all pages.
async fn list_outcomes(
    engram: &Engram,
    mut request: proto::ListOutcomesRequest,
) -> Vec<proto::Outcome> {
    let mut all = Vec::new();
    loop {
        let page = learning(engram)
            .list_outcomes(request.clone())
            .await
            .expect("list outcomes");
        all.extend(page.outcomes);
        if page.next_page_token.is_empty() {
            return all;
        }
        request.page_token = page.next_page_token;
    }
}

/// Every heuristic the request lists, through all pages.
async fn list_heuristics(
    engram: &Engram,
    mut request: proto::ListHeuristicsRequest,
) -> Vec<proto::Heuristic> {
    let mut all = Vec::new();
    loop {
        let page = learning(engram)
            .list_heuristics(request.clone())
            .await
            .expect("list heuristics");
        all.extend(page.heuristics);
        if page.next_page_token.is_empty() {
            return all;
        }
        request.page_token = page.next_page_token;
    }
}

/// Every anti-pattern the request lists, through all pages.
async fn list_anti_patterns(
    engram: &Engram,
    mut request: proto::ListAntiPatternsRequest,
) -> Vec<proto::AntiPattern> {
    let mut all = Vec::new();
    loop {
        let page = learning(engram)
            .list_anti_patterns(request.clone())
            .await
            .expect("list anti-patterns");
        all.extend(page.anti_patterns);
        if page.next_page_token.is_empty() {
            return all;
        }
        request.page_token = page.next_page_token;
    }
}

/// Every outcome visible from `scope`, newest first.
async fn outcomes_in(engram: &Engram, scope: &proto::Scope) -> Vec<proto::Outcome> {
    list_outcomes(
        engram,
        proto::ListOutcomesRequest {
            scope: Some(scope.clone()),
            ..Default::default()
        },
    )
    .await
}

/// Every heuristic visible from `scope`, most confident first.
async fn heuristics_in(engram: &Engram, scope: &proto::Scope) -> Vec<proto::Heuristic> {
    list_heuristics(
        engram,
        proto::ListHeuristicsRequest {
            scope: Some(scope.clone()),
            ..Default::default()
        },
    )
    .await
}

/// Every anti-pattern visible from `scope`, most frequent first.
async fn anti_patterns_in(engram: &Engram, scope: &proto::Scope) -> Vec<proto::AntiPattern> {
    list_anti_patterns(
        engram,
        proto::ListAntiPatternsRequest {
            scope: Some(scope.clone()),
            ..Default::default()
        },
    )
    .await
}

fn strategies(outcomes: &[proto::Outcome]) -> Vec<&str> {
    outcomes.iter().map(|o| o.strategy.as_str()).collect()
}

fn outcome_ids(outcomes: &[proto::Outcome]) -> Vec<String> {
    outcomes.iter().map(|o| o.id.clone()).collect()
}

fn heuristic_ids(heuristics: &[proto::Heuristic]) -> Vec<String> {
    heuristics.iter().map(|h| h.id.clone()).collect()
}

async fn set_agent_scope(
    engram: &Engram,
    request: proto::SetAgentScopeRequest,
) -> Result<proto::AgentScope, Error> {
    learning(engram)
        .set_agent_scope(request)
        .await
        .map(|r| r.agent_scope.expect("the agent scope"))
}

async fn get_agent_scope(
    engram: &Engram,
    scope: &proto::Scope,
) -> Result<proto::AgentScope, Error> {
    learning(engram)
        .get_agent_scope(proto::GetAgentScopeRequest {
            scope: Some(scope.clone()),
        })
        .await
        .map(|r| r.agent_scope.expect("the agent scope"))
}

async fn forget(
    engram: &Engram,
    request: proto::ForgetRequest,
) -> Result<proto::ForgetResponse, Error> {
    learning(engram).forget(request).await
}

async fn stats(engram: &Engram, scope: &proto::Scope) -> proto::GetStatsResponse {
    learning(engram)
        .get_stats(proto::GetStatsRequest {
            scope: Some(scope.clone()),
        })
        .await
        .expect("get stats")
}

/// Per task type: (task type, outcomes, successes, heuristics, anti-patterns).
fn task_type_counts(stats: &proto::GetStatsResponse) -> Vec<(&str, i64, i64, i64, i64)> {
    stats
        .task_types
        .iter()
        .map(|t| {
            (
                t.task_type.as_str(),
                t.outcomes,
                t.successes,
                t.heuristics,
                t.anti_patterns,
            )
        })
        .collect()
}

async fn build_context(
    engram: &Engram,
    request: proto::BuildContextRequest,
) -> proto::BuildContextResponse {
    engram
        .memory()
        .build_context(request)
        .await
        .expect("build context")
}

/// The lines joined as the context block shows them, each ending in a newline.
fn block(lines: &[&str]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// A duration of `seconds`.
fn seconds(seconds: i64) -> Option<prost_types::Duration> {
    Some(prost_types::Duration { seconds, nanos: 0 })
}

/// Common English words that say nothing about a strategy.
const STOP_WORDS: &str = "a about above after again against all am an and any are as at be \
    because been before being below between both but by can could did do does doing down during \
    each few for from further had has have having he her here hers herself him himself his how i \
    if in into is it its itself just me more most my myself no nor not now of off on once only or \
    other our ours ourselves out over own same she should so some such than that the their theirs \
    them themselves then there these they this those through to too under until up very was we \
    were what when where which while who whom why will with would you your yours yourself \
    yourselves";

/// The lower-cased alphanumeric words of `text`, without stop words.
fn content_words(text: &str) -> HashSet<String> {
    let stop: HashSet<&str> = STOP_WORDS.split_whitespace().collect();
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !stop.contains(w.as_str()))
        .collect()
}

/// Two strategies are similar when they share at least min(3, ⌈n/2⌉) content
/// words, n being the smaller word count (and n > 0).
fn similar_strategies(a: &str, b: &str) -> bool {
    let (a, b) = (content_words(a), content_words(b));
    let n = a.len().min(b.len());
    n > 0 && a.intersection(&b).count() >= n.div_ceil(2).min(3)
}

#[tokio::test]
async fn three_similar_successes_create_one_heuristic_and_a_fourth_updates_it_in_place() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "heuristic-lifecycle";
    let planner = agent(ns, "planner");

    let first = recorded(
        &engram,
        proto::RecordOutcomeRequest {
            duration_ms: Some(1200),
            feedback: "worked on the second try".into(),
            ..attempt(&planner, API, RETRY, true)
        },
    )
    .await;
    let outcome = first.outcome.clone().expect("the stored outcome");
    uuid_v7(&outcome.id);
    assert_eq!(outcome.scope, Some(planner.clone()));
    assert_eq!(
        (
            outcome.task.as_str(),
            outcome.task_type.as_str(),
            outcome.task_type_inferred,
            outcome.success,
            outcome.strategy.as_str(),
        ),
        (TASK, API, false, true, RETRY)
    );
    assert_eq!(outcome.duration_ms, Some(1200));
    assert_eq!(outcome.error, "");
    assert_eq!(outcome.feedback, "worked on the second try");
    assert!(outcome.create_time.is_some());
    assert_eq!(outcome.update_time, outcome.create_time);
    assert_no_heuristic(&first);
    assert_no_anti_pattern(&first);

    let second = recorded(&engram, attempt(&planner, API, RETRY_REWORDED, true)).await;
    assert_no_heuristic(&second);
    assert!(
        heuristics_in(&engram, &planner).await.is_empty(),
        "two outcomes are not enough"
    );

    let third_wording = "retry the request with exponential backoff";
    let third = recorded(&engram, attempt(&planner, API, third_wording, true)).await;
    let created = heuristic(&third, LearningChange::Created);
    assert_no_anti_pattern(&third);
    uuid_v7(&created.id);
    assert_eq!(created.scope, Some(planner.clone()));
    assert_eq!(created.task_type, API);
    assert_eq!(created.strategy, third_wording, "worded as the latest");
    assert_eq!((created.occurrence_count, created.success_count), (3, 3));
    assert_close(created.confidence, 1.0, "confidence after 3 of 3");
    assert!(created.last_validated_time.is_some());
    assert!(created.create_time.is_some());
    assert!(!created.etag.is_empty());

    // A failure without an error: the heuristic absorbs it, no anti-pattern.
    let fourth = recorded(&engram, attempt(&planner, API, RETRY, false)).await;
    let updated = heuristic(&fourth, LearningChange::Updated);
    assert_no_anti_pattern(&fourth);
    assert_eq!(updated.id, created.id, "updated in place");
    assert_eq!(updated.strategy, RETRY, "worded as the latest");
    assert_eq!((updated.occurrence_count, updated.success_count), (4, 3));
    assert_close(updated.confidence, 0.75, "confidence after 3 of 4");
    assert_ne!(updated.etag, created.etag);
    assert_eq!(updated.create_time, created.create_time);
    assert!(updated.last_validated_time.is_some());

    assert_eq!(
        heuristics_in(&engram, &planner).await,
        std::slice::from_ref(&updated)
    );
    assert_eq!(
        heuristics_in(&engram, &scope(ns)).await,
        std::slice::from_ref(&updated),
        "exactly one heuristic in the namespace"
    );
    assert!(
        heuristics_in(&engram, &agent(ns, "someone-else"))
            .await
            .is_empty(),
        "another agent does not see it"
    );
    let at_least = |min_confidence: f64, task_type: &str| proto::ListHeuristicsRequest {
        scope: Some(planner.clone()),
        task_type: task_type.to_owned(),
        min_confidence,
        ..Default::default()
    };
    assert_eq!(
        list_heuristics(&engram, at_least(0.75, "")).await,
        std::slice::from_ref(&updated)
    );
    assert!(list_heuristics(&engram, at_least(0.8, "")).await.is_empty());
    assert_eq!(
        list_heuristics(&engram, at_least(0.0, API)).await,
        std::slice::from_ref(&updated)
    );
    assert!(
        list_heuristics(&engram, at_least(0.0, FORMS))
            .await
            .is_empty()
    );

    let outcomes = outcomes_in(&engram, &planner).await;
    assert_eq!(
        strategies(&outcomes),
        [RETRY, third_wording, RETRY_REWORDED, RETRY],
        "newest first"
    );
    assert_eq!(outcomes[3], outcome);
}

#[tokio::test]
async fn outcomes_at_or_below_half_success_make_no_heuristic() {
    let server = Server::start().await;
    let engram = server.client().await;
    let mixer = agent("mixed-outcomes", "mixer");

    // 0 of 1, 1 of 2, 1 of 3, 2 of 4: never above one half.
    for success in [false, true, false, true] {
        let response = recorded(&engram, attempt(&mixer, FORMS, FILL, success)).await;
        assert_no_heuristic(&response);
        assert_no_anti_pattern(&response);
    }
    assert!(heuristics_in(&engram, &mixer).await.is_empty());

    // 3 of 5 is above one half.
    let fifth = recorded(&engram, attempt(&mixer, FORMS, FILL, true)).await;
    let created = heuristic(&fifth, LearningChange::Created);
    assert_eq!(created.strategy, FILL);
    assert_eq!(created.task_type, FORMS);
    assert_eq!((created.occurrence_count, created.success_count), (5, 3));
    assert_close(created.confidence, 0.6, "confidence after 3 of 5");
    assert_eq!(heuristics_in(&engram, &mixer).await, [created]);
}

#[tokio::test]
async fn repeated_errors_make_one_anti_pattern_that_points_to_the_best_heuristic() {
    let server = Server::start().await;
    let engram = server.client().await;
    let uploader = agent("anti-patterns", "uploader");
    let one_request = "upload the whole file in one request";
    let single_request = "upload the whole file in a single request";

    let best = record_times(&engram, attempt(&uploader, API, RETRY, true), 3).await;
    let best = heuristic(&best, LearningChange::Created);

    // A different error does not count towards the connection resets.
    let denied = recorded(
        &engram,
        failure(&uploader, API, one_request, "Permission denied"),
    )
    .await;
    assert_no_anti_pattern(&denied);
    assert_no_heuristic(&denied);

    let first = recorded(
        &engram,
        failure(&uploader, API, one_request, "Connection reset by peer"),
    )
    .await;
    assert_no_anti_pattern(&first);
    assert_no_heuristic(&first);
    assert!(anti_patterns_in(&engram, &uploader).await.is_empty());

    let second = recorded(
        &engram,
        failure(
            &uploader,
            API,
            single_request,
            "connection reset by peer while uploading",
        ),
    )
    .await;
    assert_no_heuristic(&second);
    let created = anti_pattern(&second, LearningChange::Created);
    uuid_v7(&created.id);
    assert_eq!(created.scope, Some(uploader.clone()));
    assert_eq!(created.task_type, API);
    assert_eq!(created.strategy, single_request);
    assert_eq!(
        created.error, "Connection reset by peer",
        "worded as the first failure"
    );
    assert_eq!(created.occurrence_count, 2);
    assert_eq!(created.better_alternative, RETRY);
    assert_eq!(created.better_alternative_heuristic_id, best.id);
    assert!(created.last_seen_time.is_some());
    assert!(!created.etag.is_empty());

    let third = recorded(
        &engram,
        failure(&uploader, API, one_request, "Connection reset by peer"),
    )
    .await;
    assert_no_heuristic(&third);
    let updated = anti_pattern(&third, LearningChange::Updated);
    assert_eq!(updated.id, created.id, "updated in place");
    assert_eq!(
        updated.strategy, one_request,
        "worded as the latest failure"
    );
    assert_eq!(updated.error, "Connection reset by peer");
    assert_eq!(updated.occurrence_count, 3);
    assert_eq!(updated.better_alternative, RETRY);
    assert_eq!(updated.better_alternative_heuristic_id, best.id);
    assert_ne!(updated.etag, created.etag);
    assert_eq!(updated.create_time, created.create_time);

    assert_eq!(anti_patterns_in(&engram, &uploader).await, [updated]);
    assert_eq!(
        heuristics_in(&engram, &uploader).await,
        [best],
        "the failures' strategy is not the heuristic's"
    );
    assert_eq!(outcomes_in(&engram, &uploader).await.len(), 7);
}

#[tokio::test]
async fn strategies_group_by_shared_words_into_separate_heuristics() {
    let server = Server::start().await;
    let engram = server.client().await;
    let cacher = agent("strategy-similarity", "cacher");

    for strategy in [RETRY, CACHE, RETRY_REWORDED, "cache the responses in redis"] {
        let response = recorded(&engram, attempt(&cacher, API, strategy, true)).await;
        assert_no_heuristic(&response);
    }

    let retry = recorded(&engram, attempt(&cacher, API, RETRY, true)).await;
    let retry = heuristic(&retry, LearningChange::Created);
    assert_eq!(retry.strategy, RETRY);
    assert_eq!((retry.occurrence_count, retry.success_count), (3, 3));

    let store = "store responses in a redis cache";
    let cache = recorded(&engram, attempt(&cacher, API, store, true)).await;
    let cache = heuristic(&cache, LearningChange::Created);
    assert_ne!(cache.id, retry.id, "a group of its own");
    assert_eq!(cache.strategy, store);
    assert_eq!((cache.occurrence_count, cache.success_count), (3, 3));

    let retry_failed = recorded(&engram, attempt(&cacher, API, RETRY_REWORDED, false)).await;
    let retry = heuristic(&retry_failed, LearningChange::Updated);
    assert_eq!(retry.strategy, RETRY_REWORDED);
    assert_eq!((retry.occurrence_count, retry.success_count), (4, 3));
    assert_close(retry.confidence, 0.75, "confidence of the retry heuristic");

    assert_eq!(
        heuristics_in(&engram, &cacher).await,
        [cache, retry],
        "most confident first; the cache heuristic is untouched"
    );
}

#[tokio::test]
async fn task_types_are_inferred_from_task_words_or_lower_cased_when_given() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "task-type-inference";
    let classifier = proto::Scope {
        project_id: "shop".into(),
        ..agent(ns, "classifier")
    };

    let inferred = [
        ("Test the login page", "click through the page", "testing"),
        (
            "Call the orders API",
            "send a signed request",
            "api_testing",
        ),
        (
            "Fill in the signup form",
            "type every field",
            "form_testing",
        ),
        (
            "Check the database migration",
            "compare row counts",
            "database_validation",
        ),
        ("Write release notes", "summarise the changelog", "general"),
    ];
    for (task, strategy, task_type) in inferred {
        let response = recorded(
            &engram,
            proto::RecordOutcomeRequest {
                success: task_type != GENERAL,
                ..task_attempt(&classifier, task, strategy)
            },
        )
        .await;
        let outcome = response.outcome.expect("the stored outcome");
        assert_eq!(
            (outcome.task.as_str(), outcome.task_type.as_str()),
            (task, task_type)
        );
        assert!(outcome.task_type_inferred, "{task}");
        assert_eq!(
            outcome.scope,
            Some(classifier.clone()),
            "project_id is kept"
        );
    }

    let given = [
        ("Write release notes", "API_Testing", "api_testing"),
        ("Test the login page", "Smoke", "smoke"),
    ];
    for (task, task_type, stored) in given {
        let response = recorded(
            &engram,
            proto::RecordOutcomeRequest {
                task_type: task_type.into(),
                ..task_attempt(&classifier, task, "follow the checklist")
            },
        )
        .await;
        let outcome = response.outcome.expect("the stored outcome");
        assert_eq!(outcome.task_type, stored);
        assert!(!outcome.task_type_inferred, "{task_type} was given");
    }

    let task_types = |outcomes: Vec<proto::Outcome>| {
        outcomes
            .into_iter()
            .map(|o| (o.task, o.task_type))
            .collect::<Vec<_>>()
    };
    let pair = |task: &str, task_type: &str| (task.to_owned(), task_type.to_owned());
    assert_eq!(
        task_types(outcomes_in(&engram, &classifier).await),
        [
            pair("Test the login page", "smoke"),
            pair("Write release notes", "api_testing"),
            pair("Write release notes", "general"),
            pair("Check the database migration", "database_validation"),
            pair("Fill in the signup form", "form_testing"),
            pair("Call the orders API", "api_testing"),
            pair("Test the login page", "testing"),
        ],
        "newest first"
    );
    let filtered = |task_type: &str, success: Option<bool>| proto::ListOutcomesRequest {
        scope: Some(classifier.clone()),
        task_type: task_type.to_owned(),
        success,
        ..Default::default()
    };
    assert_eq!(
        task_types(list_outcomes(&engram, filtered(API, None)).await),
        [
            pair("Write release notes", "api_testing"),
            pair("Call the orders API", "api_testing"),
        ]
    );
    assert_eq!(
        task_types(list_outcomes(&engram, filtered("", Some(false))).await),
        [pair("Write release notes", "general")]
    );
    assert_eq!(
        list_outcomes(&engram, filtered("", Some(true))).await.len(),
        6
    );

    // Visibility: a project names whose outcomes are seen.
    let shop = proto::Scope {
        project_id: "shop".into(),
        ..scope(ns)
    };
    assert_eq!(outcomes_in(&engram, &shop).await.len(), 7);
    let elsewhere = proto::Scope {
        project_id: "warehouse".into(),
        ..agent(ns, "classifier")
    };
    assert!(outcomes_in(&engram, &elsewhere).await.is_empty());
    assert!(
        outcomes_in(&engram, &scope("another-namespace"))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn agent_scopes_block_outcomes_outside_them_and_set_the_evidence_needed() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "agent-scopes";

    // An agent that never had a scope gets the defaults.
    let newcomer = agent(ns, "newcomer");
    let defaults = get_agent_scope(&engram, &newcomer)
        .await
        .expect("get agent scope");
    assert_eq!(
        defaults,
        proto::AgentScope {
            scope: Some(newcomer.clone()),
            can_learn: Vec::new(),
            cannot_learn: Vec::new(),
            min_occurrences: 3,
            create_time: None,
            update_time: None,
            etag: String::new(),
        }
    );

    // cannot_learn matches task types and whole words of the task.
    let db_averse = agent(ns, "db-averse");
    let set = set_agent_scope(
        &engram,
        proto::SetAgentScopeRequest {
            scope: Some(db_averse.clone()),
            cannot_learn: vec!["database_validation".into(), "payments".into()],
            ..Default::default()
        },
    )
    .await
    .expect("set agent scope");
    assert_eq!(set.scope, Some(db_averse.clone()));
    assert!(set.can_learn.is_empty());
    assert_eq!(set.cannot_learn, ["database_validation", "payments"]);
    assert_eq!(set.min_occurrences, 3, "0 means the default");
    assert!(set.create_time.is_some());
    assert!(set.update_time.is_some());
    assert!(!set.etag.is_empty());
    assert_eq!(
        get_agent_scope(&engram, &db_averse)
            .await
            .expect("get agent scope"),
        set
    );

    for task in ["Check the database migration", "Test the Payments page"] {
        let status = record(&engram, task_attempt(&db_averse, task, "look at the logs"))
            .await
            .expect_err("outside the agent's scope");
        assert_eq!(
            status.code(),
            Code::FailedPrecondition,
            "{task}: {status:?}"
        );
    }
    let allowed = recorded(
        &engram,
        task_attempt(&db_averse, "Test the login page", "look at the logs"),
    )
    .await
    .outcome
    .expect("the stored outcome");
    assert_eq!(allowed.task_type, "testing");
    assert_eq!(
        outcomes_in(&engram, &db_averse).await,
        [allowed],
        "nothing outside the scope was stored"
    );

    // can_learn narrows to what matches one of its entries.
    let tester = agent(ns, "tester");
    set_agent_scope(
        &engram,
        proto::SetAgentScopeRequest {
            scope: Some(tester.clone()),
            can_learn: vec!["testing".into(), "checkout".into()],
            ..Default::default()
        },
    )
    .await
    .expect("set agent scope");
    let status = record(
        &engram,
        task_attempt(&tester, "Call the orders API", "send a signed request"),
    )
    .await
    .expect_err("api_testing is outside [testing, checkout]");
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    for task in ["Test the login page", "Call the checkout API"] {
        recorded(
            &engram,
            task_attempt(&tester, task, "send a signed request"),
        )
        .await;
    }
    let tasks: Vec<String> = outcomes_in(&engram, &tester)
        .await
        .into_iter()
        .map(|o| o.task)
        .collect();
    assert_eq!(tasks, ["Call the checkout API", "Test the login page"]);

    // min_occurrences from the scope replaces 3.
    let quick = agent(ns, "quick");
    let quick_scope = set_agent_scope(
        &engram,
        proto::SetAgentScopeRequest {
            scope: Some(quick.clone()),
            min_occurrences: 2,
            ..Default::default()
        },
    )
    .await
    .expect("set agent scope");
    assert_eq!(quick_scope.min_occurrences, 2);
    let call = |scope: &proto::Scope| task_attempt(scope, "Call the orders API", RETRY);
    assert_no_heuristic(&recorded(&engram, call(&quick)).await);
    let created = heuristic(
        &recorded(&engram, call(&quick)).await,
        LearningChange::Created,
    );
    assert_eq!((created.occurrence_count, created.success_count), (2, 2));
    assert_eq!(created.task_type, API);
    assert_eq!(heuristics_in(&engram, &quick).await, [created]);

    // The newcomer, on the defaults, needs 3.
    assert_no_heuristic(&recorded(&engram, call(&newcomer)).await);
    assert_no_heuristic(&recorded(&engram, call(&newcomer)).await);
    let created = heuristic(
        &recorded(&engram, call(&newcomer)).await,
        LearningChange::Created,
    );
    assert_eq!(created.occurrence_count, 3);

    // Setting replaces the whole scope; a stale etag changes nothing.
    let replaced = set_agent_scope(
        &engram,
        proto::SetAgentScopeRequest {
            scope: Some(db_averse.clone()),
            etag: set.etag.clone(),
            ..Default::default()
        },
    )
    .await
    .expect("replace agent scope");
    assert!(replaced.cannot_learn.is_empty());
    assert!(replaced.can_learn.is_empty());
    assert_ne!(replaced.etag, set.etag);
    assert_eq!(replaced.create_time, set.create_time);
    let stale = set_agent_scope(
        &engram,
        proto::SetAgentScopeRequest {
            scope: Some(db_averse.clone()),
            cannot_learn: vec!["testing".into()],
            etag: set.etag.clone(),
            ..Default::default()
        },
    )
    .await
    .expect_err("stale etag");
    assert_eq!(stale.code(), Code::Aborted, "{stale:?}");
    assert_eq!(
        get_agent_scope(&engram, &db_averse)
            .await
            .expect("get agent scope"),
        replaced
    );
    let migration = recorded(
        &engram,
        task_attempt(
            &db_averse,
            "Check the database migration",
            "look at the logs",
        ),
    )
    .await
    .outcome
    .expect("the stored outcome");
    assert_eq!(migration.task_type, "database_validation");
    assert_eq!(outcomes_in(&engram, &db_averse).await.len(), 2);
}

/// What `seed_for_forget` stored, newest first where listed.
struct Seeded {
    /// Every outcome of the namespace, newest first.
    outcome_ids: Vec<String>,
    /// Most confident first: the form heuristic (1.0), the retry one (0.75).
    heuristic_ids: Vec<String>,
    anti_pattern_id: String,
}

/// Nine outcomes of agent "forgetter" (a retry heuristic at 0.75, a form
/// heuristic at 1.0, one anti-pattern) and one of agent "bystander".
async fn seed_for_forget(engram: &Engram, namespace: &str) -> Seeded {
    let forgetter = agent(namespace, "forgetter");
    let mut ids = Vec::new();
    for _ in 0..3 {
        keep(engram, &mut ids, attempt(&forgetter, API, RETRY, true)).await;
    }
    let retry = keep(engram, &mut ids, attempt(&forgetter, API, RETRY, false)).await;
    let retry = heuristic(&retry, LearningChange::Updated);
    assert_close(retry.confidence, 0.75, "the retry heuristic");
    for _ in 0..2 {
        keep(engram, &mut ids, attempt(&forgetter, FORMS, FILL, true)).await;
    }
    let fill = keep(engram, &mut ids, attempt(&forgetter, FORMS, FILL, true)).await;
    let fill = heuristic(&fill, LearningChange::Created);
    keep(
        engram,
        &mut ids,
        failure(&forgetter, API, BURST, "rate limited"),
    )
    .await;
    let burst = keep(
        engram,
        &mut ids,
        failure(&forgetter, API, BURST, "rate limited"),
    )
    .await;
    let burst = anti_pattern(&burst, LearningChange::Created);
    let bystander = agent(namespace, "bystander");
    let release = task_attempt(&bystander, "Write release notes", "summarise the changelog");
    keep(engram, &mut ids, release).await;
    ids.reverse();
    Seeded {
        outcome_ids: ids,
        heuristic_ids: vec![fill.id, retry.id],
        anti_pattern_id: burst.id,
    }
}

/// Records `request` and keeps the stored outcome's id in `ids`.
async fn keep(
    engram: &Engram,
    ids: &mut Vec<String>,
    request: proto::RecordOutcomeRequest,
) -> proto::RecordOutcomeResponse {
    let response = recorded(engram, request).await;
    ids.push(response.outcome.clone().expect("the stored outcome").id);
    response
}

#[tokio::test]
async fn forget_deletes_only_stale_and_weak_records_of_its_scope() {
    let server = Server::start().await;
    let engram = server.client().await;
    let (a, b) = ("forget-a", "forget-b");
    let seeded_a = seed_for_forget(&engram, a).await;
    let seeded_b = seed_for_forget(&engram, b).await;

    // Everything seeded is now older than 2 seconds; then one fresh outcome each.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let fresh = |namespace: &str| {
        task_attempt(
            &agent(namespace, "forgetter"),
            "Write release notes",
            "draft notes from the changelog",
        )
    };
    let fresh_a = recorded(&engram, fresh(a)).await.outcome.expect("outcome");
    let fresh_b = recorded(&engram, fresh(b)).await.outcome.expect("outcome");

    let forgetter = agent(a, "forgetter");
    let request = |dry_run: bool| proto::ForgetRequest {
        scope: Some(forgetter.clone()),
        older_than: seconds(2),
        below_confidence: Some(0.9),
        kinds: Vec::new(),
        dry_run,
    };
    let stale = |dry_run: bool| proto::ForgetResponse {
        outcomes: 9,
        heuristics: 1,
        anti_patterns: 1,
        memories: 0,
        dry_run,
    };

    // A dry run counts and keeps.
    assert_eq!(
        forget(&engram, request(true)).await.expect("dry run"),
        stale(true)
    );
    assert_eq!(
        forget(
            &engram,
            proto::ForgetRequest {
                kinds: vec![ForgetKind::Outcomes.into()],
                ..request(true)
            }
        )
        .await
        .expect("dry run of outcomes"),
        proto::ForgetResponse {
            outcomes: 9,
            dry_run: true,
            ..Default::default()
        },
        "kinds not asked for are 0"
    );
    let mut all_a = vec![fresh_a.id.clone()];
    all_a.extend(seeded_a.outcome_ids.iter().cloned());
    assert_eq!(outcome_ids(&outcomes_in(&engram, &scope(a)).await), all_a);
    assert_eq!(
        heuristic_ids(&heuristics_in(&engram, &scope(a)).await),
        seeded_a.heuristic_ids
    );
    assert_eq!(anti_patterns_in(&engram, &scope(a)).await.len(), 1);

    // Without dry_run it deletes exactly those.
    assert_eq!(
        forget(&engram, request(false)).await.expect("forget"),
        stale(false)
    );
    assert_eq!(
        outcome_ids(&outcomes_in(&engram, &forgetter).await),
        std::slice::from_ref(&fresh_a.id)
    );
    assert_eq!(
        outcome_ids(&outcomes_in(&engram, &scope(a)).await),
        [fresh_a.id.clone(), seeded_a.outcome_ids[0].clone()],
        "the bystander's old outcome is outside the scope"
    );
    assert_eq!(
        heuristic_ids(&heuristics_in(&engram, &scope(a)).await),
        [seeded_a.heuristic_ids[0].clone()],
        "only the weak heuristic is gone"
    );
    assert!(anti_patterns_in(&engram, &scope(a)).await.is_empty());

    // The neighbouring namespace keeps everything.
    let mut all_b = vec![fresh_b.id.clone()];
    all_b.extend(seeded_b.outcome_ids.iter().cloned());
    assert_eq!(outcome_ids(&outcomes_in(&engram, &scope(b)).await), all_b);
    assert_eq!(
        heuristic_ids(&heuristics_in(&engram, &scope(b)).await),
        seeded_b.heuristic_ids
    );
    let anti_patterns_b: Vec<String> = anti_patterns_in(&engram, &scope(b))
        .await
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(anti_patterns_b, [seeded_b.anti_pattern_id]);

    // Nothing stale is left.
    assert_eq!(
        forget(&engram, request(false)).await.expect("forget again"),
        proto::ForgetResponse::default()
    );
}

/// Groups of strategy wordings: wordings of one group are similar, wordings of
/// different groups share no word at all.
const STRATEGY_GROUPS: [&[&str]; 6] = [
    &[
        RETRY,
        RETRY_REWORDED,
        "retry the request with exponential backoff",
    ],
    &[
        CACHE,
        "cache the responses in redis",
        "store responses in a redis cache",
    ],
    &[
        "mock the payment gateway",
        "stub the payment gateway with a mock",
        "mock the payment gateway in staging",
    ],
    &["read the documentation first"],
    &["ask a teammate for review"],
    &["rewrite the module from scratch"],
];
const TASK_TYPES: [&str; 5] = [
    "api_testing",
    "database_validation",
    "form_testing",
    "general",
    "testing",
];
/// Errors of failures: two of them the same error (one contains the other).
const ERRORS: [&str; 4] = [
    "",
    "Timeout waiting for the server",
    "TIMEOUT waiting for the server to answer",
    "Permission denied",
];
const AGENTS: u64 = 4;
const TOTAL_OUTCOMES: u64 = 2000;
const IN_FLIGHT: u64 = 8;

/// A deterministic, well-mixed function of `i` (SplitMix64).
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Outcome number `i`: agent i mod 4, each (agent, task type) 100 times, four
/// in five successes.
fn planned(namespace: &str, i: u64) -> proto::RecordOutcomeRequest {
    let wordings: Vec<&str> = STRATEGY_GROUPS
        .iter()
        .flat_map(|g| g.iter().copied())
        .collect();
    let r = mix(i);
    let success = r % 10 < 8;
    let error = if success {
        ""
    } else {
        ERRORS[((r >> 16) % ERRORS.len() as u64) as usize]
    };
    proto::RecordOutcomeRequest {
        error: error.to_owned(),
        ..attempt(
            &agent(namespace, &format!("agent-{}", i % AGENTS)),
            TASK_TYPES[((i / AGENTS) % TASK_TYPES.len() as u64) as usize],
            wordings[((r >> 8) % wordings.len() as u64) as usize],
            success,
        )
    }
}

/// The group a stored strategy wording belongs to.
fn strategy_group(strategy: &str) -> usize {
    STRATEGY_GROUPS
        .iter()
        .position(|group| group.contains(&strategy))
        .unwrap_or_else(|| panic!("{strategy:?} is none of the wordings sent"))
}

/// The error group a stored error belongs to.
fn error_group(error: &str) -> &'static str {
    let error = error.to_lowercase();
    if error.contains("timeout waiting for the server") {
        "timeout"
    } else if error.contains("permission denied") {
        "permission"
    } else {
        panic!("{error:?} is none of the errors sent")
    }
}

#[tokio::test]
async fn two_thousand_concurrent_outcomes_never_duplicate_a_heuristic_or_anti_pattern() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "many-outcomes";

    // The test data is what it claims to be.
    for (g, group) in STRATEGY_GROUPS.iter().enumerate() {
        for (h, other) in STRATEGY_GROUPS.iter().enumerate() {
            for a in group.iter() {
                for b in other.iter() {
                    assert_eq!(similar_strategies(a, b), g == h, "{a:?} and {b:?}");
                }
            }
        }
    }

    let workers: Vec<_> = (0..IN_FLIGHT)
        .map(|worker| {
            let client = learning(&engram);
            let requests: Vec<proto::RecordOutcomeRequest> = (worker..TOTAL_OUTCOMES)
                .step_by(IN_FLIGHT as usize)
                .map(|i| planned(ns, i))
                .collect();
            tokio::spawn(async move {
                for request in requests {
                    client
                        .record_outcome(request)
                        .await
                        .expect("record outcome");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("worker");
    }

    let mut heuristics_per_type: BTreeMap<String, i64> = BTreeMap::new();
    let mut anti_patterns_per_type: BTreeMap<String, i64> = BTreeMap::new();
    for a in 0..AGENTS {
        let agent_id = format!("agent-{a}");
        let scope = agent(ns, &agent_id);
        assert_eq!(
            outcomes_in(&engram, &scope).await.len() as u64,
            TOTAL_OUTCOMES / AGENTS,
            "every outcome of {agent_id} was stored"
        );

        let heuristics = heuristics_in(&engram, &scope).await;
        assert!(!heuristics.is_empty(), "{agent_id} learned something");
        let mut groups = HashSet::new();
        for h in &heuristics {
            assert_eq!(
                h.scope.as_ref().map(|s| s.agent_id.as_str()),
                Some(agent_id.as_str())
            );
            assert!(
                groups.insert((h.task_type.clone(), strategy_group(&h.strategy))),
                "a second heuristic for one strategy group: {h:?}"
            );
            assert!(h.occurrence_count >= 3, "{h:?}");
            assert!(h.success_count <= h.occurrence_count, "{h:?}");
            assert_close(
                h.confidence,
                h.success_count as f64 / h.occurrence_count as f64,
                "confidence",
            );
            *heuristics_per_type.entry(h.task_type.clone()).or_default() += 1;
        }
        for (i, x) in heuristics.iter().enumerate() {
            for y in &heuristics[i + 1..] {
                assert!(
                    x.task_type != y.task_type || !similar_strategies(&x.strategy, &y.strategy),
                    "two similar heuristics of {agent_id}: {x:?} and {y:?}"
                );
            }
        }

        let anti_patterns = anti_patterns_in(&engram, &scope).await;
        let mut errors = HashSet::new();
        for p in &anti_patterns {
            assert!(
                errors.insert((p.task_type.clone(), error_group(&p.error))),
                "a second anti-pattern for one error: {p:?}"
            );
            assert!(p.occurrence_count >= 2, "{p:?}");
            *anti_patterns_per_type
                .entry(p.task_type.clone())
                .or_default() += 1;
        }
    }

    // Statistics agree, to the outcome.
    let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for i in 0..TOTAL_OUTCOMES {
        let request = planned(ns, i);
        let counts = expected.entry(request.task_type).or_default();
        counts.0 += 1;
        counts.1 += i64::from(request.success);
    }
    let totals = stats(&engram, &scope(ns)).await;
    assert_eq!(totals.outcomes, TOTAL_OUTCOMES as i64);
    assert_eq!(totals.heuristics, heuristics_per_type.values().sum::<i64>());
    assert_eq!(
        totals.anti_patterns,
        anti_patterns_per_type.values().sum::<i64>()
    );
    let got: Vec<(&str, i64, i64, i64, i64)> = task_type_counts(&totals);
    let want: Vec<(&str, i64, i64, i64, i64)> = expected
        .iter()
        .map(|(task_type, &(outcomes, successes))| {
            (
                task_type.as_str(),
                outcomes,
                successes,
                heuristics_per_type.get(task_type).copied().unwrap_or(0),
                anti_patterns_per_type.get(task_type).copied().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(got, want);
    for t in &totals.task_types {
        assert_close(
            t.success_rate,
            t.successes as f64 / t.outcomes as f64,
            &t.task_type,
        );
    }
}

#[tokio::test]
async fn bad_outcome_input_is_rejected_with_the_field_named_and_stores_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "outcome-validation";
    let validator = agent(ns, "validator");
    let ok = || task_attempt(&validator, "Call the orders API", RETRY);

    let cases: Vec<(&str, proto::RecordOutcomeRequest)> = vec![
        (
            "scope.agent_id",
            proto::RecordOutcomeRequest {
                scope: Some(scope(ns)),
                ..ok()
            },
        ),
        (
            "task",
            proto::RecordOutcomeRequest {
                task: String::new(),
                ..ok()
            },
        ),
        (
            "task",
            proto::RecordOutcomeRequest {
                task: "t".repeat(1001),
                ..ok()
            },
        ),
        (
            "task_type",
            proto::RecordOutcomeRequest {
                task_type: "t".repeat(65),
                ..ok()
            },
        ),
        (
            "strategy",
            proto::RecordOutcomeRequest {
                strategy: String::new(),
                ..ok()
            },
        ),
        (
            "strategy",
            proto::RecordOutcomeRequest {
                strategy: "s".repeat(2001),
                ..ok()
            },
        ),
        (
            "duration_ms",
            proto::RecordOutcomeRequest {
                duration_ms: Some(-1),
                ..ok()
            },
        ),
        (
            "error",
            proto::RecordOutcomeRequest {
                success: false,
                error: "e".repeat(4001),
                ..ok()
            },
        ),
        (
            "feedback",
            proto::RecordOutcomeRequest {
                feedback: "f".repeat(4001),
                ..ok()
            },
        ),
        (
            "request_id",
            proto::RecordOutcomeRequest {
                request_id: "r".repeat(129),
                ..ok()
            },
        ),
    ];
    for (field, request) in cases {
        let Err(status) = record(&engram, request).await else {
            panic!("a bad {field} is accepted");
        };
        assert_rejects(&status, field);
    }
    assert!(outcomes_in(&engram, &scope(ns)).await.is_empty());
    assert_eq!(stats(&engram, &scope(ns)).await.outcomes, 0);

    // The limits themselves are accepted.
    let edge = recorded(
        &engram,
        proto::RecordOutcomeRequest {
            task: "t".repeat(1000),
            task_type: "X".repeat(64),
            success: false,
            strategy: "s".repeat(2000),
            duration_ms: Some(0),
            error: "e".repeat(4000),
            feedback: "f".repeat(4000),
            request_id: "r".repeat(128),
            ..ok()
        },
    )
    .await
    .outcome
    .expect("the stored outcome");
    assert_eq!(edge.task.chars().count(), 1000);
    assert_eq!(edge.task_type, "x".repeat(64));
    assert_eq!(edge.strategy.chars().count(), 2000);
    assert_eq!(edge.duration_ms, Some(0));
    assert_eq!(edge.error.chars().count(), 4000);
    assert_eq!(edge.feedback.chars().count(), 4000);

    // Agent scopes.
    let bad_scopes: Vec<(&str, proto::SetAgentScopeRequest)> = vec![
        (
            "scope.agent_id",
            proto::SetAgentScopeRequest {
                scope: Some(scope(ns)),
                ..Default::default()
            },
        ),
        (
            "min_occurrences",
            proto::SetAgentScopeRequest {
                scope: Some(validator.clone()),
                min_occurrences: 101,
                ..Default::default()
            },
        ),
        (
            "min_occurrences",
            proto::SetAgentScopeRequest {
                scope: Some(validator.clone()),
                min_occurrences: -1,
                ..Default::default()
            },
        ),
    ];
    for (field, request) in bad_scopes {
        let Err(status) = set_agent_scope(&engram, request).await else {
            panic!("a bad {field} is accepted");
        };
        assert_rejects(&status, field);
    }
    let status = get_agent_scope(&engram, &scope(ns))
        .await
        .expect_err("no agent_id");
    assert_rejects(&status, "scope.agent_id");
    let unchanged = get_agent_scope(&engram, &validator)
        .await
        .expect("get agent scope");
    assert_eq!(unchanged.etag, "", "no scope was set");
    assert_eq!(unchanged.min_occurrences, 3);

    // Forget.
    let bad_forgets: Vec<(&str, proto::ForgetRequest)> = vec![
        (
            "older_than",
            proto::ForgetRequest {
                scope: Some(validator.clone()),
                older_than: seconds(0),
                ..Default::default()
            },
        ),
        (
            "older_than",
            proto::ForgetRequest {
                scope: Some(validator.clone()),
                older_than: seconds(-60),
                ..Default::default()
            },
        ),
        (
            "below_confidence",
            proto::ForgetRequest {
                scope: Some(validator.clone()),
                below_confidence: Some(1.5),
                ..Default::default()
            },
        ),
        (
            "below_confidence",
            proto::ForgetRequest {
                scope: Some(validator.clone()),
                below_confidence: Some(-0.1),
                ..Default::default()
            },
        ),
    ];
    for (field, request) in bad_forgets {
        let Err(status) = forget(&engram, request).await else {
            panic!("a bad {field} is accepted");
        };
        assert_rejects(&status, field);
    }

    // Listings.
    let status = learning(&engram)
        .list_outcomes(proto::ListOutcomesRequest {
            scope: Some(validator.clone()),
            page_size: 1001,
            ..Default::default()
        })
        .await
        .expect_err("page too large");
    assert_rejects(&status, "page_size");
    let status = learning(&engram)
        .list_heuristics(proto::ListHeuristicsRequest {
            scope: Some(validator.clone()),
            min_confidence: 1.5,
            ..Default::default()
        })
        .await
        .expect_err("confidence above 1");
    assert_rejects(&status, "min_confidence");
    let status = learning(&engram)
        .list_anti_patterns(proto::ListAntiPatternsRequest {
            scope: Some(validator.clone()),
            page_size: -1,
            ..Default::default()
        })
        .await
        .expect_err("negative page size");
    assert_rejects(&status, "page_size");

    assert_eq!(
        outcome_ids(&outcomes_in(&engram, &scope(ns)).await),
        [edge.id],
        "only the valid outcome is stored"
    );
}

#[tokio::test]
async fn stats_count_outcomes_and_success_rates_per_task_type() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "outcome-stats";
    let a = agent(ns, "a");
    let b = agent(ns, "b");

    record_times(&engram, attempt(&a, API, RETRY, true), 3).await;
    record_times(&engram, failure(&a, API, BURST, "rate limited"), 2).await;
    recorded(&engram, task_attempt(&b, "Fill in the signup form", FILL)).await;
    recorded(
        &engram,
        proto::RecordOutcomeRequest {
            success: false,
            ..task_attempt(&b, "Fill in the signup form", "paste the values")
        },
    )
    .await;
    recorded(
        &engram,
        proto::RecordOutcomeRequest {
            success: false,
            error: "changelog missing".into(),
            ..task_attempt(&b, "Write release notes", "summarise the changelog")
        },
    )
    .await;

    let all = stats(&engram, &scope(ns)).await;
    assert_eq!((all.outcomes, all.heuristics, all.anti_patterns), (8, 1, 1));
    assert_eq!(
        task_type_counts(&all),
        [
            (API, 5, 3, 1, 1),
            (FORMS, 2, 1, 0, 0),
            (GENERAL, 1, 0, 0, 0)
        ],
        "sorted by task type"
    );
    let rates: Vec<f64> = all.task_types.iter().map(|t| t.success_rate).collect();
    assert_close(rates[0], 0.6, "api_testing");
    assert_close(rates[1], 0.5, "form_testing");
    assert_close(rates[2], 0.0, "general");
    assert_eq!(all.total_episodes, 0);
    assert!(all.tasks.is_empty());
    assert_eq!((all.mistakes, all.mistake_cards), (0, 0));
    assert!(all.memories_per_type.is_empty());

    let of_a = stats(&engram, &a).await;
    assert_eq!(
        (of_a.outcomes, of_a.heuristics, of_a.anti_patterns),
        (5, 1, 1)
    );
    assert_eq!(task_type_counts(&of_a), [(API, 5, 3, 1, 1)]);
    assert_close(of_a.task_types[0].success_rate, 0.6, "api_testing of a");

    let of_b = stats(&engram, &b).await;
    assert_eq!(
        (of_b.outcomes, of_b.heuristics, of_b.anti_patterns),
        (3, 0, 0)
    );
    assert_eq!(
        task_type_counts(&of_b),
        [(FORMS, 2, 1, 0, 0), (GENERAL, 1, 0, 0, 0)]
    );
    assert_close(of_b.task_types[0].success_rate, 0.5, "form_testing of b");
    assert_close(of_b.task_types[1].success_rate, 0.0, "general of b");

    let elsewhere = stats(&engram, &scope("outcome-stats-elsewhere")).await;
    assert_eq!(
        (
            elsewhere.outcomes,
            elsewhere.heuristics,
            elsewhere.anti_patterns
        ),
        (0, 0, 0)
    );
    assert!(elsewhere.task_types.is_empty());
}

#[tokio::test]
async fn build_context_shows_heuristics_and_anti_patterns_for_the_task_type() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "outcome-context";
    let ctx = agent(ns, "ctx");
    let poll = "poll the status endpoint";
    let guess = "guess the config values";

    // api_testing: two heuristics (0.75 over 4, 1.00 over 3) and two
    // anti-patterns (3x, 2x), both pointing to the more confident heuristic.
    record_times(&engram, attempt(&ctx, API, RETRY, true), 3).await;
    let retry = recorded(&engram, attempt(&ctx, API, RETRY, false)).await;
    let retry = heuristic(&retry, LearningChange::Updated);
    let cache = record_times(&engram, attempt(&ctx, API, CACHE, true), 3).await;
    let cache = heuristic(&cache, LearningChange::Created);
    let burst = record_times(&engram, failure(&ctx, API, BURST, "rate limited"), 3).await;
    let burst = anti_pattern(&burst, LearningChange::Updated);
    assert_eq!(burst.better_alternative_heuristic_id, cache.id);
    let polling = record_times(
        &engram,
        failure(&ctx, API, poll, "HTTP 503 from upstream"),
        2,
    )
    .await;
    let polling = anti_pattern(&polling, LearningChange::Created);
    // form_testing: one heuristic. general: one anti-pattern, no alternative.
    let fill = record_times(&engram, attempt(&ctx, FORMS, FILL, true), 3).await;
    let fill = heuristic(&fill, LearningChange::Created);
    let guessing = record_times(
        &engram,
        failure(&ctx, GENERAL, guess, "missing environment variable"),
        2,
    )
    .await;
    let guessing = anti_pattern(&guessing, LearningChange::Created);
    assert_eq!(guessing.better_alternative, "");
    assert_eq!(guessing.better_alternative_heuristic_id, "");

    let for_type = |task_type: &str| proto::BuildContextRequest {
        scope: Some(scope(ns)),
        task_type: task_type.to_owned(),
        token_budget: 4096,
        ..Default::default()
    };
    let items = |context: &proto::BuildContextResponse| {
        context
            .items
            .iter()
            .map(|i| (i.kind(), i.id.clone()))
            .collect::<Vec<_>>()
    };
    use ContextItemKind as Kind;

    let api_lines = [
        "## Heuristics",
        "- cache responses in redis (confidence 1.00, 3 outcomes)",
        "- retry with exponential backoff (confidence 0.75, 4 outcomes)",
        "",
        "## Anti-patterns",
        "- send all requests at once fails with: rate limited (seen 3x) Better: cache responses in redis",
        "- poll the status endpoint fails with: HTTP 503 from upstream (seen 2x) Better: cache responses in redis",
    ];
    let api_items = vec![
        (Kind::Heuristic, cache.id.clone()),
        (Kind::Heuristic, retry.id.clone()),
        (Kind::AntiPattern, burst.id.clone()),
        (Kind::AntiPattern, polling.id.clone()),
    ];
    let api = build_context(&engram, for_type(API)).await;
    assert_eq!(api.text, block(&api_lines));
    assert_eq!(items(&api), api_items);
    assert!(!api.truncated);
    assert_eq!(
        api.token_estimate as usize,
        api.text.chars().count().div_ceil(4)
    );

    let forms = build_context(&engram, for_type(FORMS)).await;
    assert_eq!(
        forms.text,
        block(&[
            "## Heuristics",
            "- fill the form field by field (confidence 1.00, 3 outcomes)",
        ])
    );
    assert_eq!(items(&forms), [(Kind::Heuristic, fill.id.clone())]);

    let general = build_context(&engram, for_type(GENERAL)).await;
    assert_eq!(
        general.text,
        block(&[
            "## Anti-patterns",
            "- guess the config values fails with: missing environment variable (seen 2x)",
        ])
    );
    assert_eq!(items(&general), [(Kind::AntiPattern, guessing.id.clone())]);

    let none = build_context(&engram, for_type("")).await;
    assert_eq!(none.text, "", "no task type, no task: nothing to show");
    assert!(none.items.is_empty());

    // Without a task type, the task's most recent episode supplies it.
    let episode = engram
        .memory()
        .start_episode(proto::StartEpisodeRequest {
            scope: Some(scope(ns)),
            task_id: "checkout".into(),
            description: "Checkout API".into(),
            task_type: API.into(),
            ..Default::default()
        })
        .await
        .expect("start episode");
    engram
        .memory()
        .append_steps(proto::AppendStepsRequest {
            scope: Some(scope(ns)),
            episode_id: episode.id.clone(),
            steps: vec![proto::Step {
                step_number: 1,
                tool: "shell".into(),
                action: "run check 1".into(),
                parameters: r#"{"attempt":1}"#.into(),
                result: StepResult::Ok.into(),
                output: "output 1".into(),
                latency_ms: 10,
                time: None,
            }],
        })
        .await
        .expect("append steps");
    engram
        .memory()
        .complete_episode(proto::CompleteEpisodeRequest {
            scope: Some(scope(ns)),
            episode_id: episode.id.clone(),
            outcome: Some(proto::EpisodeOutcome {
                score: 0.4,
                success: false,
                summary: "Checkout API flaked".into(),
                ..Default::default()
            }),
        })
        .await
        .expect("complete episode");
    let episode_lines = [
        "",
        "## Recent episodes (mean score 0.40 over 1)",
        "- Score 0.40 in 1 steps: Checkout API flaked",
    ];

    let from_episode = build_context(
        &engram,
        proto::BuildContextRequest {
            task_id: "checkout".into(),
            ..for_type("")
        },
    )
    .await;
    assert_eq!(
        from_episode.text,
        block(&[&api_lines[..], &episode_lines[..]].concat())
    );
    let mut expected_items = api_items;
    expected_items.push((Kind::Episode, episode.id.clone()));
    assert_eq!(items(&from_episode), expected_items);

    // A task type in the request wins over the episode's.
    let overridden = build_context(
        &engram,
        proto::BuildContextRequest {
            task_id: "checkout".into(),
            ..for_type(GENERAL)
        },
    )
    .await;
    assert_eq!(
        overridden.text,
        block(
            &[
                &[
                    "## Anti-patterns",
                    "- guess the config values fails with: missing environment variable (seen 2x)",
                ][..],
                &episode_lines[..],
            ]
            .concat()
        )
    );
    assert_eq!(
        items(&overridden),
        [
            (Kind::AntiPattern, guessing.id),
            (Kind::Episode, episode.id),
        ]
    );
}

#[tokio::test]
async fn forget_never_touches_another_agent_or_project() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = "forget-owners";
    let in_project = proto::Scope {
        project_id: "shop".into(),
        ..agent(ns, "a")
    };
    let owners = [in_project.clone(), agent(ns, "a"), agent(ns, "b")];
    for owner in &owners {
        recorded(
            &engram,
            attempt(owner, "general", "read the manual first", true),
        )
        .await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let stale = |scope: &proto::Scope| proto::ForgetRequest {
        scope: Some(scope.clone()),
        older_than: Some(prost_types::Duration {
            seconds: 1,
            nanos: 0,
        }),
        kinds: vec![proto::ForgetKind::Outcomes.into()],
        ..Default::default()
    };
    // A namespace-wide scope owns no agent's outcomes.
    let wide = forget(
        &engram,
        stale(&proto::Scope {
            namespace: ns.into(),
            ..Default::default()
        }),
    )
    .await
    .expect("forget without an agent");
    assert_eq!(wide.outcomes, 0);
    // Agent a in project shop: only that outcome, not a's outcome without a project.
    let narrow = forget(&engram, stale(&in_project))
        .await
        .expect("forget in a project");
    assert_eq!(narrow.outcomes, 1);
    assert!(
        outcomes_in(&engram, &in_project).await.iter().all(|o| o
            .scope
            .as_ref()
            .unwrap()
            .project_id
            .is_empty())
    );
    let a_left = forget(
        &engram,
        proto::ForgetRequest {
            dry_run: true,
            ..stale(&agent(ns, "a"))
        },
    )
    .await
    .unwrap();
    assert_eq!(
        a_left.outcomes, 1,
        "a's outcome without a project is still there"
    );
    let b_left = forget(
        &engram,
        proto::ForgetRequest {
            dry_run: true,
            ..stale(&agent(ns, "b"))
        },
    )
    .await
    .unwrap();
    assert_eq!(b_left.outcomes, 1, "agent b is untouched");
}

#[tokio::test]
async fn a_strategy_group_keeps_its_heuristic_however_its_wording_drifts() {
    let server = Server::start().await;
    let engram = server.client().await;
    let planner = agent("drift", "planner");
    for _ in 0..3 {
        recorded(
            &engram,
            attempt(
                &planner,
                "api_testing",
                "retry with exponential backoff",
                true,
            ),
        )
        .await;
    }
    // Reworded: still the group, now shown in the new words.
    let reworded = recorded(
        &engram,
        attempt(&planner, "api_testing", "exponential backoff on 429s", true),
    )
    .await;
    let updated = heuristic(&reworded, LearningChange::Updated);
    assert_eq!(updated.strategy, "exponential backoff on 429s");
    assert_eq!(updated.occurrence_count, 4);
    // Far from the group's first wording: not the group.
    let unrelated = recorded(
        &engram,
        attempt(
            &planner,
            "api_testing",
            "backoff on 429s then give up",
            true,
        ),
    )
    .await;
    assert_no_heuristic(&unrelated);
    // The first wording still finds the group: no second heuristic.
    let back = recorded(
        &engram,
        attempt(
            &planner,
            "api_testing",
            "retry with exponential backoff",
            false,
        ),
    )
    .await;
    let back = heuristic(&back, LearningChange::Updated);
    assert_eq!(back.id, updated.id);
    assert_eq!((back.occurrence_count, back.success_count), (5, 4));
    assert_close(back.confidence, 0.8, "4 of 5");
    assert_eq!(heuristics_in(&engram, &planner).await.len(), 1);
}

#[tokio::test]
async fn a_long_error_seen_first_still_makes_one_general_anti_pattern() {
    let server = Server::start().await;
    let engram = server.client().await;
    let uploader = agent("errors", "uploader");
    let first = recorded(
        &engram,
        failure(
            &uploader,
            "general",
            "stream the file",
            "Connection reset by peer while uploading",
        ),
    )
    .await;
    assert_no_anti_pattern(&first);
    let second = recorded(
        &engram,
        failure(
            &uploader,
            "general",
            "stream the file",
            "connection reset by peer",
        ),
    )
    .await;
    let created = anti_pattern(&second, LearningChange::Created);
    assert_eq!(
        created.error, "connection reset by peer",
        "the most general wording"
    );
    let third = recorded(
        &engram,
        failure(
            &uploader,
            "general",
            "stream the file",
            "Connection reset by peer while downloading",
        ),
    )
    .await;
    let updated = anti_pattern(&third, LearningChange::Updated);
    assert_eq!(updated.id, created.id);
    assert_eq!(updated.occurrence_count, 3);
    assert_eq!(anti_patterns_in(&engram, &uploader).await.len(), 1);
}
