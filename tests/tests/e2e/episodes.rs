//! Episodes over the real server: starting a task run, logging its steps
//! (unary and streamed), completing it with an outcome, and what the service
//! learns from it — task rules, mistake cards, consolidation into global
//! rules, statistics and the context block built from all of that.

use std::collections::BTreeSet;

use futures_util::StreamExt as _;

use engram_client::proto::{
    self, ContextItemKind, EpisodeStatus, LearningChange, StepResult, TaskRuleOrigin,
};
use engram_client::{Code, Engram, Error, LearningClient};
use engram_tests::{Server, assert_close, assert_rejects, create, input, scope, uuid_v7};

/// The learning service over the client's connection.
fn learning(engram: &Engram) -> LearningClient {
    engram.learning()
}

/// A well-formed UUID that no server ever issued.
/// A card as compared: (type, worker, correct decision), task, seen count,
/// first and last episode id.
type CardSummary<'a> = ((&'a str, &'a str, &'a str), &'a str, i64, &'a str, &'a str);
/// A paging case: task filter, status filter, page size, expected pages.
type PageCase<'a> = (&'a str, EpisodeStatus, i32, &'a [usize], &'a [usize]);

const UNKNOWN_EPISODE: &str = "01939b6e-5d2a-7c3e-8f00-1234567890ab";

async fn start_episode(
    engram: &Engram,
    scope: &proto::Scope,
    task_id: &str,
    description: &str,
) -> proto::Episode {
    engram
        .memory()
        .start_episode(proto::StartEpisodeRequest {
            scope: Some(scope.clone()),
            task_id: task_id.to_owned(),
            description: description.to_owned(),
            ..Default::default()
        })
        .await
        .expect("start episode")
}

/// A well-formed step numbered `number`.
fn step(number: i32) -> proto::Step {
    proto::Step {
        step_number: number,
        tool: "shell".into(),
        action: format!("run check {number}"),
        parameters: format!(r#"{{"attempt":{number}}}"#),
        result: StepResult::Ok.into(),
        output: format!("output {number}"),
        latency_ms: i64::from(number) * 10,
        time: None,
    }
}

fn steps(numbers: std::ops::RangeInclusive<i32>) -> Vec<proto::Step> {
    numbers.map(step).collect()
}

/// Appends `steps` in one AppendSteps call; the episode's step count after it.
async fn append(
    engram: &Engram,
    scope: &proto::Scope,
    episode_id: &str,
    steps: Vec<proto::Step>,
) -> Result<i32, Error> {
    engram
        .memory()
        .append_steps(proto::AppendStepsRequest {
            scope: Some(scope.clone()),
            episode_id: episode_id.to_owned(),
            steps,
        })
        .await
        .map(|response| response.step_count)
}

async fn complete(
    engram: &Engram,
    scope: &proto::Scope,
    episode_id: &str,
    outcome: proto::EpisodeOutcome,
) -> Result<proto::CompleteEpisodeResponse, Error> {
    engram
        .memory()
        .complete_episode(proto::CompleteEpisodeRequest {
            scope: Some(scope.clone()),
            episode_id: episode_id.to_owned(),
            outcome: Some(outcome),
        })
        .await
}

/// The episode with every page of its steps.
async fn get_episode(
    engram: &Engram,
    scope: &proto::Scope,
    id: &str,
) -> Result<proto::Episode, Error> {
    engram
        .memory()
        .get_episode_with_all_steps(proto::GetEpisodeRequest {
            scope: Some(scope.clone()),
            id: id.to_owned(),
            ..Default::default()
        })
        .await
}

/// An outcome with a score and a summary, nothing else.
fn outcome(score: f64, summary: &str) -> proto::EpisodeOutcome {
    proto::EpisodeOutcome {
        score,
        success: score >= 0.5,
        summary: summary.to_owned(),
        ..Default::default()
    }
}

/// Asserts the completed episode carries the outcome that was sent. Cards are
/// compared by their identity only: their long texts may be cut.
fn assert_outcome_echoed(episode: &proto::Episode, sent: &proto::EpisodeOutcome) {
    let got = episode
        .outcome
        .as_ref()
        .expect("a completed episode has its outcome");
    assert_eq!(
        (
            got.score,
            got.success,
            &got.summary,
            &got.mistakes,
            &got.successes
        ),
        (
            sent.score,
            sent.success,
            &sent.summary,
            &sent.mistakes,
            &sent.successes
        )
    );
    let keys = |cards: &[proto::MistakeCardInput]| {
        cards
            .iter()
            .map(|c| {
                (
                    c.mistake_type.clone(),
                    c.worker_id.clone(),
                    c.correct_decision.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&got.mistake_cards), keys(&sent.mistake_cards));
}

/// Streams `messages` over one StreamSteps call.
async fn stream_steps(
    engram: &Engram,
    messages: Vec<proto::StreamStepsRequest>,
) -> proto::StreamStepsResponse {
    engram
        .memory()
        .stream_steps(tonic::codegen::tokio_stream::iter(messages))
        .await
        .expect("stream steps")
}

/// `steps` for one episode cut into messages of `per_message` steps; only the
/// first message names the scope, which then applies to the whole stream.
fn stream_messages(
    scope: &proto::Scope,
    episode_id: &str,
    steps: &[proto::Step],
    per_message: usize,
) -> Vec<proto::StreamStepsRequest> {
    steps
        .chunks(per_message)
        .enumerate()
        .map(|(i, chunk)| proto::StreamStepsRequest {
            scope: (i == 0).then(|| scope.clone()),
            episode_id: episode_id.to_owned(),
            steps: chunk.to_vec(),
        })
        .collect()
}

fn step_numbers(episode: &proto::Episode) -> Vec<i32> {
    episode.steps.iter().map(|s| s.step_number).collect()
}

/// Every task rule of `scope` for `task_id` (None: all; Some(""): global), through all pages.
async fn task_rules(
    engram: &Engram,
    scope: &proto::Scope,
    task_id: Option<&str>,
) -> Vec<proto::TaskRule> {
    let mut rules = Vec::new();
    let mut page_token = String::new();
    for _ in 0..100 {
        let page = learning(engram)
            .list_task_rules(proto::ListTaskRulesRequest {
                scope: Some(scope.clone()),
                task_id: task_id.map(str::to_owned),
                page_size: 0,
                page_token,
            })
            .await
            .expect("list task rules");
        rules.extend(page.task_rules);
        if page.next_page_token.is_empty() {
            return rules;
        }
        page_token = page.next_page_token;
    }
    panic!("task rules never stopped paging");
}

fn texts(rules: &[proto::TaskRule]) -> Vec<String> {
    rules.iter().map(|r| r.text.clone()).collect()
}

fn sorted(mut texts: Vec<String>) -> Vec<String> {
    texts.sort();
    texts
}

async fn mistake_cards(
    engram: &Engram,
    request: proto::ListMistakeCardsRequest,
) -> Vec<proto::MistakeCard> {
    let page = learning(engram)
        .list_mistake_cards(request)
        .await
        .expect("list mistake cards");
    assert!(page.next_page_token.is_empty(), "one page holds them all");
    page.mistake_cards
}

async fn consolidate(
    engram: &Engram,
    scope: &proto::Scope,
    mode: proto::ConsolidateMode,
) -> proto::ConsolidateResponse {
    learning(engram)
        .consolidate(proto::ConsolidateRequest {
            scope: Some(scope.clone()),
            mode: mode.into(),
            force: true,
        })
        .await
        .expect("consolidate")
}

fn works(success: &str) -> String {
    format!("[WORKS] {success}")
}

fn avoid(mistake: &str) -> String {
    format!("[AVOID] {mistake}")
}

/// (mistake_type, worker_id, correct_decision): with the task, what makes two
/// reported mistakes the same card.
type CardKey = (&'static str, &'static str, &'static str);

fn card(key: CardKey, evidence: &str, lesson: &str) -> proto::MistakeCardInput {
    proto::MistakeCardInput {
        mistake_type: key.0.to_owned(),
        worker_id: key.1.to_owned(),
        correct_decision: key.2.to_owned(),
        evidence: evidence.to_owned(),
        lesson: lesson.to_owned(),
    }
}

// The scenario of `learning_from_25_episodes_...`: two task families in one
// namespace, the things that worked and failed in them, and recurring mistakes.

const RCA: &str = "root_cause_analysis";
const LOGS: &str = "log_triage";

const DEPLOY_LOG_FIRST: &str = "Check the deploy log first";
const CORRELATE_DEPLOYS: &str = "Correlate alerts with recent deploys";
const BISECT_CONFIG: &str = "Bisect the config change";
const STACK_TRACE: &str = "Read the stack trace bottom up";
const REPRODUCE: &str = "Reproduce on staging before fixing";
const COMPARE_METRICS: &str = "Compare metrics before and after the change";
const POOL: &str = "Check connection pool saturation";
const CLOCK_SKEW: &str = "Look for clock skew between hosts";
const CERTS: &str = "Check the certificate expiry dates";
const LOCKFILE: &str = "Diff the package lock file";

const BLAMED_DB: &str = "Blamed the database without evidence";
const RESTARTED: &str = "Restarted the service before collecting logs";
const HEALTH_CHECK: &str = "Ignored the failing health check";
const TWO_SETTINGS: &str = "Changed two settings at once";
const RUNBOOK: &str = "Skipped reading the runbook";
const CLOSED_EARLY: &str = "Closed the incident before verifying the fix";

const BY_REQUEST_ID: &str = "Filter by request id";
const BY_TIMESTAMP: &str = "Sort by timestamp across services";
const ERRORS_PER_MINUTE: &str = "Count errors per minute";

const NEWEST_FILE_ONLY: &str = "Searched only the newest log file";
const MISSED_WARNINGS: &str = "Missed the warning level lines";
const TIME_ZONE: &str = "Trusted the log timestamps without the time zone";
const WRONG_DASHBOARD: &str = "Opened the wrong dashboard";

const DEPLOY_CARD: CardKey = (
    "wrong_root_cause",
    "investigator",
    "Check the deploy log before blaming the database",
);
/// DEPLOY_CARD without a worker: a different card.
const ANONYMOUS_DEPLOY_CARD: CardKey = (
    "wrong_root_cause",
    "",
    "Check the deploy log before blaming the database",
);
/// DEPLOY_CARD with another correct decision: a different card.
const DASHBOARD_CARD: CardKey = (
    "wrong_root_cause",
    "investigator",
    "Compare latency dashboards before and after the deploy",
);
const REQUEST_ID_CARD: CardKey = (
    "missed_log_pattern",
    "triager",
    "Group log lines by request id",
);
const SEVERITY_CARD: CardKey = ("wrong_severity", "triager", "Treat timeouts as errors");

/// 141 characters: its global rule carries only the first 120.
const POOL_SUMMARY: &str = "Found connection pool saturation by comparing metrics before and after the change, then raised the pool size and added an alert on pool usage";

/// A lesson of 355 characters; a card keeps its first 300.
fn long_lesson() -> String {
    format!("Read the deploy log first{}", "!".repeat(330))
}

/// Evidence of 339 characters; a card keeps its first 300.
fn long_evidence() -> String {
    format!("Request 42 was logged by three services{}", ".".repeat(300))
}

/// One episode of the scenario and what its completion must report.
struct Run {
    task: &'static str,
    score: f64,
    summary: &'static str,
    successes: &'static [&'static str],
    mistakes: &'static [&'static str],
    cards: Vec<proto::MistakeCardInput>,
    /// learned.rules_added of its completion.
    rules_added: Vec<String>,
}

/// 25 episodes, completed in this order. Comments track the rules of
/// root_cause_analysis (oldest first) once it reaches its cap of 10.
fn scenario() -> Vec<Run> {
    vec![
        // 1
        Run {
            task: RCA,
            score: 0.90,
            summary: "Traced the outage to a bad deploy",
            successes: &[DEPLOY_LOG_FIRST, CORRELATE_DEPLOYS],
            mistakes: &[],
            cards: vec![card(
                DEPLOY_CARD,
                "E1: the database was blamed first",
                "Read the deploy log first",
            )],
            rules_added: vec![works(DEPLOY_LOG_FIRST), works(CORRELATE_DEPLOYS)],
        },
        // 2
        Run {
            task: LOGS,
            score: 0.30,
            summary: "Missed the failing call in the logs",
            successes: &[],
            mistakes: &[NEWEST_FILE_ONLY],
            cards: vec![card(
                REQUEST_ID_CARD,
                "E2: the failing request spanned two services",
                "Follow the request id",
            )],
            rules_added: vec![avoid(NEWEST_FILE_ONLY)],
        },
        // 3
        Run {
            task: RCA,
            score: 0.40,
            summary: "Blamed the database for a deploy regression",
            successes: &[],
            mistakes: &[BLAMED_DB, RESTARTED],
            cards: vec![card(
                DEPLOY_CARD,
                "E3: the database metrics were flat",
                "Read the deploy log first",
            )],
            rules_added: vec![avoid(BLAMED_DB), avoid(RESTARTED)],
        },
        // 4: a middling score teaches no rule, whatever it reports.
        Run {
            task: RCA,
            score: 0.70,
            summary: "Found the cause after a slow start",
            successes: &[BISECT_CONFIG],
            mistakes: &[HEALTH_CHECK],
            cards: vec![],
            rules_added: vec![],
        },
        // 5
        Run {
            task: LOGS,
            score: 0.95,
            summary: "Grouped the logs by request id and found the failing call",
            successes: &[BY_REQUEST_ID, BY_TIMESTAMP],
            mistakes: &[],
            cards: vec![],
            rules_added: vec![works(BY_REQUEST_ID), works(BY_TIMESTAMP)],
        },
        // 6: DEPLOY_LOG_FIRST is already a rule of the task.
        Run {
            task: RCA,
            score: 0.92,
            summary: "Bisected the config change that broke the cache",
            successes: &[DEPLOY_LOG_FIRST, BISECT_CONFIG],
            mistakes: &[],
            cards: vec![card(
                DASHBOARD_CARD,
                "E6: latency rose before the deploy",
                "Look at the dashboards first",
            )],
            rules_added: vec![works(BISECT_CONFIG)],
        },
        // 7: exactly 0.50 is middling.
        Run {
            task: RCA,
            score: 0.50,
            summary: "Half fixed: the alert still fires now and then",
            successes: &[STACK_TRACE],
            mistakes: &[TWO_SETTINGS],
            cards: vec![card(
                DEPLOY_CARD,
                "E7: the deploy was rolled back late",
                "Read the deploy log first",
            )],
            rules_added: vec![],
        },
        // 8
        Run {
            task: LOGS,
            score: 0.20,
            summary: "Gave up on the log search",
            successes: &[],
            mistakes: &[NEWEST_FILE_ONLY, MISSED_WARNINGS],
            cards: vec![card(
                REQUEST_ID_CARD,
                "E8: the retries had the same request id",
                "Follow the request id",
            )],
            rules_added: vec![avoid(MISSED_WARNINGS)],
        },
        // 9: exactly 0.85 is high; its mistake is not a rule.
        Run {
            task: RCA,
            score: 0.85,
            summary: "Reproduced the crash on staging and fixed the null check",
            successes: &[STACK_TRACE, REPRODUCE],
            mistakes: &[BLAMED_DB],
            cards: vec![],
            rules_added: vec![works(STACK_TRACE), works(REPRODUCE)],
        },
        // 10: a low score: its success is not a rule, BLAMED_DB is one already.
        Run {
            task: RCA,
            score: 0.45,
            summary: "Restarted too early and lost the evidence",
            successes: &[COMPARE_METRICS],
            mistakes: &[HEALTH_CHECK, BLAMED_DB],
            cards: vec![card(
                DEPLOY_CARD,
                "E10: the restart hid the deploy error",
                "Read the deploy log first",
            )],
            rules_added: vec![avoid(HEALTH_CHECK)],
        },
        // 11: the same card input in another task is another card.
        Run {
            task: LOGS,
            score: 0.60,
            summary: "Found the error after reading every file",
            successes: &[BY_REQUEST_ID],
            mistakes: &[MISSED_WARNINGS],
            cards: vec![card(
                DEPLOY_CARD,
                "E11: blamed the database for slow log queries",
                "Read the deploy log first",
            )],
            rules_added: vec![],
        },
        // 12: root_cause_analysis reaches 10 rules.
        Run {
            task: RCA,
            score: 0.88,
            summary: POOL_SUMMARY,
            successes: &[COMPARE_METRICS, POOL],
            mistakes: &[],
            cards: vec![],
            rules_added: vec![works(COMPARE_METRICS), works(POOL)],
        },
        // 13: drops DEPLOY_LOG_FIRST. Two cards: the worker tells them apart.
        Run {
            task: RCA,
            score: 0.10,
            summary: "Rolled back the wrong service",
            successes: &[],
            mistakes: &[TWO_SETTINGS, RESTARTED],
            cards: vec![
                card(
                    DEPLOY_CARD,
                    "E13: the deploy log showed the bad release",
                    "Read the deploy log first",
                ),
                card(
                    ANONYMOUS_DEPLOY_CARD,
                    "E13: reported without a worker",
                    "Read the deploy log first",
                ),
            ],
            rules_added: vec![avoid(TWO_SETTINGS)],
        },
        // 14: a high score whose only success is already a rule.
        Run {
            task: LOGS,
            score: 0.90,
            summary: "Sorted the logs across services by timestamp",
            successes: &[BY_REQUEST_ID],
            mistakes: &[],
            cards: vec![],
            rules_added: vec![],
        },
        // 15: drops CORRELATE_DEPLOYS; REPRODUCE is already a rule.
        Run {
            task: RCA,
            score: 0.95,
            summary: "Compared metrics before and after the change and found the leak",
            successes: &[CLOCK_SKEW, REPRODUCE],
            mistakes: &[],
            cards: vec![card(
                DASHBOARD_CARD,
                "E15: the dashboards showed the leak a day earlier",
                "Look at the dashboards first",
            )],
            rules_added: vec![works(CLOCK_SKEW)],
        },
        // 16: a low score whose only mistake is already a rule.
        Run {
            task: LOGS,
            score: 0.40,
            summary: "Missed the warnings again",
            successes: &[],
            mistakes: &[MISSED_WARNINGS],
            cards: vec![card(
                REQUEST_ID_CARD,
                "E16: two services logged the same request",
                "Group by request id before reading",
            )],
            rules_added: vec![],
        },
        // 17: drops BLAMED_DB.
        Run {
            task: RCA,
            score: 0.30,
            summary: "Chased a red herring for an hour",
            successes: &[],
            mistakes: &[RUNBOOK],
            cards: vec![card(
                DEPLOY_CARD,
                "E17: the deploy was ignored for an hour",
                "Read the deploy log first",
            )],
            rules_added: vec![avoid(RUNBOOK)],
        },
        // 18: a mistake of a middling episode is still a mistake.
        Run {
            task: LOGS,
            score: 0.80,
            summary: "Triaged the logs but on the wrong dashboard first",
            successes: &[],
            mistakes: &[WRONG_DASHBOARD],
            cards: vec![],
            rules_added: vec![],
        },
        // 19: drops RESTARTED. Same score and summary as episode 1.
        Run {
            task: RCA,
            score: 0.90,
            summary: "Traced the outage to a bad deploy",
            successes: &[CERTS],
            mistakes: &[],
            cards: vec![],
            rules_added: vec![works(CERTS)],
        },
        // 20: the 20th completion consolidates. A long evidence and no lesson.
        Run {
            task: LOGS,
            score: 0.65,
            summary: "Triaged the logs in time",
            successes: &[],
            mistakes: &[],
            cards: vec![card(REQUEST_ID_CARD, &long_evidence(), "")],
            rules_added: vec![],
        },
        // 21: drops BISECT_CONFIG.
        Run {
            task: RCA,
            score: 0.99,
            summary: "Found the lock file change that pulled in a broken library",
            successes: &[LOCKFILE],
            mistakes: &[],
            cards: vec![],
            rules_added: vec![works(LOCKFILE)],
        },
        // 22: BLAMED_DB is a rule of the other task only.
        Run {
            task: LOGS,
            score: 0.35,
            summary: "Misread the log timeline",
            successes: &[],
            mistakes: &[TIME_ZONE, BLAMED_DB],
            cards: vec![],
            rules_added: vec![avoid(TIME_ZONE), avoid(BLAMED_DB)],
        },
        // 23: new evidence, no lesson.
        Run {
            task: RCA,
            score: 0.55,
            summary: "Found the cause but skipped the runbook again",
            successes: &[],
            mistakes: &[RUNBOOK],
            cards: vec![card(
                DEPLOY_CARD,
                "E23: a deploy went out two minutes before the alert",
                "",
            )],
            rules_added: vec![],
        },
        // 24
        Run {
            task: LOGS,
            score: 0.87,
            summary: "Counted errors per minute and found the spike",
            successes: &[ERRORS_PER_MINUTE],
            mistakes: &[],
            cards: vec![],
            rules_added: vec![works(ERRORS_PER_MINUTE)],
        },
        // 25: drops STACK_TRACE. No evidence, a long lesson.
        Run {
            task: RCA,
            score: 0.25,
            summary: "Closed the incident too early",
            successes: &[],
            mistakes: &[CLOSED_EARLY],
            cards: vec![card(DEPLOY_CARD, "", &long_lesson())],
            rules_added: vec![avoid(CLOSED_EARLY)],
        },
    ]
}

#[tokio::test]
async fn learning_from_25_episodes_keeps_exact_rules_cards_and_stats() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("learning-scenario");
    let plan = scenario();
    assert_eq!(plan.len(), 25);

    // The global rules the 20th completion distils from the completed episodes
    // scoring at least 0.85 (1, 5, 6, 9, 12, 14, 15 and 19; 19 repeats 1).
    let high_score_rules = sorted(
        [
            "[HIGH SCORE 0.90] Traced the outage to a bad deploy",
            "[HIGH SCORE 0.95] Grouped the logs by request id and found the failing call",
            "[HIGH SCORE 0.92] Bisected the config change that broke the cache",
            "[HIGH SCORE 0.85] Reproduced the crash on staging and fixed the null check",
            "[HIGH SCORE 0.88] Found connection pool saturation by comparing metrics before and after the change, then raised the pool size and added a",
            "[HIGH SCORE 0.90] Sorted the logs across services by timestamp",
            "[HIGH SCORE 0.95] Compared metrics before and after the change and found the leak",
        ]
        .map(str::to_owned)
        .to_vec(),
    );

    let mut ids = Vec::new();
    for (i, run) in plan.iter().enumerate() {
        let n = i + 1;
        let episode = start_episode(&engram, &ns, run.task, &format!("Episode {n}")).await;
        assert_eq!(episode.status(), EpisodeStatus::Running);
        assert_eq!(
            append(&engram, &ns, &episode.id, steps(1..=3))
                .await
                .expect("append"),
            3
        );
        let sent = proto::EpisodeOutcome {
            score: run.score,
            success: run.score >= 0.5,
            summary: run.summary.to_owned(),
            mistakes: run.mistakes.iter().map(|m| (*m).to_owned()).collect(),
            successes: run.successes.iter().map(|s| (*s).to_owned()).collect(),
            mistake_cards: run.cards.clone(),
        };
        let response = complete(&engram, &ns, &episode.id, sent.clone())
            .await
            .unwrap_or_else(|e| panic!("complete episode {n}: {e:?}"));

        let completed = response.episode.expect("episode");
        assert_eq!(completed.id, episode.id);
        assert_eq!(completed.status(), EpisodeStatus::Completed, "episode {n}");
        assert_eq!(completed.step_count, 3);
        assert!(completed.steps.is_empty(), "completion returns no steps");
        assert!(completed.complete_time.is_some());
        assert_outcome_echoed(&completed, &sent);

        let learned = response.learned.expect("learned");
        assert_eq!(
            learned.rules_added, run.rules_added,
            "rules added by episode {n}"
        );
        assert_eq!(
            learned.mistake_cards_merged,
            run.cards.len() as i32,
            "cards merged by episode {n}"
        );
        assert_eq!(
            learned.consolidated,
            n == 20,
            "only the 20th completion consolidates (episode {n})"
        );
        if n == 19 {
            assert!(task_rules(&engram, &ns, Some("")).await.is_empty());
        }
        if n == 20 {
            let global = task_rules(&engram, &ns, Some("")).await;
            assert_eq!(sorted(texts(&global)), high_score_rules);
            for rule in &global {
                assert_eq!(rule.task_id, "");
                assert_eq!(rule.origin(), TaskRuleOrigin::HighScore);
            }
        }
        ids.push(episode.id);
    }
    // Episode n has id ids[n - 1].
    let id = |n: usize| ids[n - 1].as_str();

    // Two mistakes reported outside any completion.
    let dashboards = learning(&engram)
        .record_mistake(proto::RecordMistakeRequest {
            scope: Some(ns.clone()),
            task_id: RCA.into(),
            card: Some(card(
                DASHBOARD_CARD,
                "Recorded by hand after the review",
                "Compare dashboards before blaming a deploy",
            )),
            episode_id: id(23).to_owned(),
            ..Default::default()
        })
        .await
        .expect("record a known mistake");
    assert_eq!(dashboards.change(), LearningChange::Updated);
    assert!(dashboards.kept);
    let dashboards = dashboards.card.expect("card");
    assert_eq!(
        (
            dashboards.seen_count,
            dashboards.first_seen_episode_id.as_str(),
            dashboards.last_seen_episode_id.as_str(),
            dashboards.evidence.as_str(),
            dashboards.lesson.as_str(),
        ),
        (
            3,
            id(6),
            id(23),
            "Recorded by hand after the review",
            "Compare dashboards before blaming a deploy"
        )
    );
    let severity = learning(&engram)
        .record_mistake(proto::RecordMistakeRequest {
            scope: Some(ns.clone()),
            task_id: LOGS.into(),
            card: Some(card(
                SEVERITY_CARD,
                "A timeout was filed as a warning",
                "Timeouts are errors",
            )),
            episode_id: String::new(),
            ..Default::default()
        })
        .await
        .expect("record a new mistake");
    assert_eq!(severity.change(), LearningChange::Created);
    assert!(severity.kept);
    let severity = severity.card.expect("card");
    assert_eq!(severity.seen_count, 1);
    assert_eq!(severity.first_seen_episode_id, "");
    assert_eq!(severity.last_seen_episode_id, "");

    // One more episode that is still running.
    let running = start_episode(&engram, &ns, RCA, "Episode 26, still running").await;
    append(&engram, &ns, &running.id, steps(1..=2))
        .await
        .expect("append");

    // Task rules: the 10 newest of root_cause_analysis, newest first (rules
    // added by one completion are newer in outcome order).
    let rca_rules = task_rules(&engram, &ns, Some(RCA)).await;
    assert_eq!(
        texts(&rca_rules),
        [
            avoid(CLOSED_EARLY),
            works(LOCKFILE),
            works(CERTS),
            avoid(RUNBOOK),
            works(CLOCK_SKEW),
            avoid(TWO_SETTINGS),
            works(POOL),
            works(COMPARE_METRICS),
            avoid(HEALTH_CHECK),
            works(REPRODUCE),
        ]
    );
    let log_rules = task_rules(&engram, &ns, Some(LOGS)).await;
    assert_eq!(
        texts(&log_rules),
        [
            works(ERRORS_PER_MINUTE),
            avoid(BLAMED_DB),
            avoid(TIME_ZONE),
            avoid(MISSED_WARNINGS),
            works(BY_TIMESTAMP),
            works(BY_REQUEST_ID),
            avoid(NEWEST_FILE_ONLY),
        ]
    );
    for (task, rules) in [(RCA, &rca_rules), (LOGS, &log_rules)] {
        for rule in rules {
            assert_eq!(rule.task_id, task);
            let origin = if rule.text.starts_with("[WORKS] ") {
                TaskRuleOrigin::Works
            } else {
                TaskRuleOrigin::Avoid
            };
            assert_eq!(rule.origin(), origin, "{}", rule.text);
            uuid_v7(&rule.id);
        }
    }
    // Later high scores (21, 24) wait for the 40th completion.
    let global = task_rules(&engram, &ns, Some("")).await;
    assert_eq!(sorted(texts(&global)), high_score_rules);
    let every_rule = task_rules(&engram, &ns, None).await;
    assert_eq!(
        sorted(texts(&every_rule)),
        sorted([texts(&rca_rules), texts(&log_rules), texts(&global)].concat())
    );

    // Mistake cards, strongest first: by seen_count, then the latest sighting.
    let cards = mistake_cards(
        &engram,
        proto::ListMistakeCardsRequest {
            scope: Some(ns.clone()),
            ..Default::default()
        },
    )
    .await;
    // ((mistake_type, worker_id, correct_decision), task_id, seen_count,
    // first_seen_episode_id, last_seen_episode_id)
    let summary: Vec<CardSummary> = cards
        .iter()
        .map(|c| {
            (
                (
                    c.mistake_type.as_str(),
                    c.worker_id.as_str(),
                    c.correct_decision.as_str(),
                ),
                c.task_id.as_str(),
                c.seen_count,
                c.first_seen_episode_id.as_str(),
                c.last_seen_episode_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            // Seen in episodes 1, 3, 7, 10, 13, 17, 23 and 25.
            (DEPLOY_CARD, RCA, 8, id(1), id(25)),
            // Seen in episodes 2, 8, 16 and 20.
            (REQUEST_ID_CARD, LOGS, 4, id(2), id(20)),
            // Seen in episodes 6 and 15, then recorded by hand for episode 23.
            (DASHBOARD_CARD, RCA, 3, id(6), id(23)),
            // Seen once each, the latest sighting first: recorded by hand
            // without an episode, then episode 13, then episode 11.
            (SEVERITY_CARD, LOGS, 1, "", ""),
            (ANONYMOUS_DEPLOY_CARD, RCA, 1, id(13), id(13)),
            (DEPLOY_CARD, LOGS, 1, id(11), id(11)),
        ]
    );
    // The newest non-empty evidence and lesson, cut to 300 characters.
    assert_eq!(
        cards[0].evidence,
        "E23: a deploy went out two minutes before the alert"
    );
    assert_eq!(
        cards[0].lesson,
        long_lesson().chars().take(300).collect::<String>()
    );
    assert_eq!(
        cards[1].evidence,
        long_evidence().chars().take(300).collect::<String>()
    );
    assert_eq!(cards[1].lesson, "Group by request id before reading");

    let of_logs = mistake_cards(
        &engram,
        proto::ListMistakeCardsRequest {
            scope: Some(ns.clone()),
            task_id: LOGS.into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(
        of_logs.iter().map(|c| &c.id).collect::<Vec<_>>(),
        [&cards[1].id, &cards[3].id, &cards[5].id]
    );
    let wrong_root_causes = mistake_cards(
        &engram,
        proto::ListMistakeCardsRequest {
            scope: Some(ns.clone()),
            mistake_type: "wrong_root_cause".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(
        wrong_root_causes.iter().map(|c| &c.id).collect::<Vec<_>>(),
        [&cards[0].id, &cards[2].id, &cards[4].id, &cards[5].id]
    );

    // Statistics.
    let stats = learning(&engram)
        .get_stats(proto::GetStatsRequest {
            scope: Some(ns.clone()),
        })
        .await
        .expect("get stats");
    assert_eq!(stats.total_episodes, 26, "every status counts");
    assert_eq!(stats.global_rules, 7);
    let mean = |task: &str| {
        let scores: Vec<f64> = plan
            .iter()
            .filter(|r| r.task == task)
            .map(|r| r.score)
            .collect();
        scores.iter().sum::<f64>() / scores.len() as f64
    };
    let tasks: Vec<(&str, i64, i64)> = stats
        .tasks
        .iter()
        .map(|t| (t.task_id.as_str(), t.rules, t.scored_episodes))
        .collect();
    assert_eq!(tasks, [(LOGS, 7, 10), (RCA, 10, 15)], "sorted by task_id");
    assert_close(
        stats.tasks[0].mean_score,
        mean(LOGS),
        "mean score of log_triage",
    );
    assert_close(
        stats.tasks[1].mean_score,
        mean(RCA),
        "mean score of root_cause_analysis",
    );
    let distinct_mistakes: BTreeSet<&str> = plan
        .iter()
        .flat_map(|r| r.mistakes.iter().copied())
        .collect();
    assert_eq!(distinct_mistakes.len(), 10);
    assert_eq!(
        stats.mistakes, 10,
        "distinct mistake texts of the namespace"
    );
    assert_eq!(stats.mistake_cards, 6);
    assert_eq!(stats.top_mistake_cards, cards[..5]);
    assert!(stats.memories_per_type.is_empty());
}

#[tokio::test]
async fn streaming_steps_stores_every_good_step_and_rejects_only_the_bad_one() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("stream-steps");
    let episode = start_episode(&engram, &ns, "load_test", "Log many steps over a stream").await;

    let first = steps(1..=500);
    let response = stream_steps(&engram, stream_messages(&ns, &episode.id, &first, 120)).await;
    assert_eq!(
        (
            response.accepted,
            response.rejected,
            response.rejections.len()
        ),
        (500, 0, 0)
    );
    let stored = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(stored.step_count, 500);
    assert_eq!(step_numbers(&stored), (1..=500).collect::<Vec<_>>());

    let mut second = steps(501..=600);
    second[49] = proto::Step {
        tool: " ".into(),
        ..step(550)
    };
    let response = stream_steps(&engram, stream_messages(&ns, &episode.id, &second, 30)).await;
    assert_eq!((response.accepted, response.rejected), (99, 1));
    assert_eq!(response.rejections.len(), 1);
    let rejection = &response.rejections[0];
    assert_eq!(
        (rejection.episode_id.as_str(), rejection.step_number),
        (episode.id.as_str(), 550)
    );
    assert!(!rejection.reason.is_empty(), "a rejection says why");

    let stored = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(stored.step_count, 599);
    assert_eq!(
        step_numbers(&stored),
        (1..=600).filter(|n| *n != 550).collect::<Vec<_>>()
    );
    for got in &stored.steps {
        assert!(got.time.is_some(), "an unset time is the time received");
        assert_eq!(
            proto::Step {
                time: None,
                ..got.clone()
            },
            step(got.step_number)
        );
    }
}

#[tokio::test]
async fn a_lost_stream_is_resumed_by_sending_again_from_the_last_confirmed_step() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("resume-steps");
    let episode = start_episode(&engram, &ns, "long_task", "Stream, lose it, resume").await;

    // The first stream stored steps 1-10, but its answer was lost.
    let first = stream_steps(
        &engram,
        stream_messages(&ns, &episode.id, &steps(1..=10), 4),
    )
    .await;
    assert_eq!((first.accepted, first.already_stored), (10, 0));
    let known = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(known.last_step_number, 10, "where to resume");

    // The client resends from the last step it had confirmed (6), with the
    // times of the new sending: steps 6-10 are acknowledged, 11-15 stored.
    let resent = stream_steps(
        &engram,
        stream_messages(&ns, &episode.id, &steps(6..=15), 4),
    )
    .await;
    assert_eq!(
        (resent.accepted, resent.already_stored, resent.rejected),
        (10, 5, 0),
        "{resent:?}"
    );
    let stored = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(stored.step_count, 15);
    assert_eq!(stored.last_step_number, 15);
    assert_eq!(step_numbers(&stored), (1..=15).collect::<Vec<_>>());

    // A step sent again with other content is still refused, and says so.
    let changed = proto::Step {
        output: "a different output".into(),
        ..step(12)
    };
    let refused = stream_steps(&engram, stream_messages(&ns, &episode.id, &[changed], 1)).await;
    assert_eq!((refused.accepted, refused.rejected), (0, 1));
    assert!(
        refused.rejections[0]
            .reason
            .contains("already stored with other content"),
        "{refused:?}"
    );
    // A retried AppendSteps is safe too.
    for _ in 0..2 {
        let count = append(&engram, &ns, &episode.id, steps(16..=18)).await;
        assert_eq!(count.expect("append, then its retry"), 18);
    }
    let stored = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(step_numbers(&stored), (1..=18).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_silent_stream_is_ended_and_its_steps_are_kept() {
    let server = Server::start_with_args(&["--stream-idle-timeout", "1s"]).await;
    let engram = server.client().await;
    let ns = scope("idle-stream");
    let episode = start_episode(&engram, &ns, "idle", "A client that stops sending").await;
    let first = stream_messages(&ns, &episode.id, &steps(1..=3), 3);
    // One message, then nothing: the stream stays open but silent.
    let silent = futures_util::stream::iter(first).chain(futures_util::stream::pending());
    let ended = engram.memory().stream_steps(silent).await.unwrap_err();
    assert_eq!(ended.code(), Code::DeadlineExceeded, "{ended}");
    assert!(ended.message().contains("last_step_number"), "{ended}");
    let stored = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!((stored.step_count, stored.last_step_number), (3, 3));
}

#[tokio::test]
async fn steps_are_read_page_by_page() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("step-pages");
    let episode = start_episode(&engram, &ns, "paged", "Read steps in pages").await;
    append(&engram, &ns, &episode.id, steps(1..=25))
        .await
        .expect("append");
    let mut request = proto::GetEpisodeRequest {
        scope: Some(ns.clone()),
        id: episode.id.clone(),
        step_page_size: 10,
        ..Default::default()
    };
    let mut pages = Vec::new();
    loop {
        let page = engram
            .memory()
            .get_episode(request.clone())
            .await
            .expect("page");
        assert_eq!((page.step_count, page.last_step_number), (25, 25));
        pages.push(step_numbers(&page));
        if page.next_step_page_token.is_empty() {
            break;
        }
        request.step_page_token = page.next_step_page_token;
    }
    assert_eq!(
        pages,
        [
            (1..=10).collect::<Vec<_>>(),
            (11..=20).collect(),
            (21..=25).collect()
        ]
    );
    // A token is for this episode's steps only.
    let other = start_episode(&engram, &ns, "paged", "Another").await;
    let foreign = engram
        .memory()
        .get_episode(proto::GetEpisodeRequest {
            scope: Some(ns.clone()),
            id: other.id,
            step_page_size: 10,
            step_page_token: {
                let first = engram
                    .memory()
                    .get_episode(proto::GetEpisodeRequest {
                        step_page_token: String::new(),
                        ..request.clone()
                    })
                    .await
                    .expect("page");
                assert!(!first.next_step_page_token.is_empty());
                first.next_step_page_token
            },
        })
        .await
        .unwrap_err();
    assert_rejects(&foreign, "step_page_token");
    let too_many = engram
        .memory()
        .get_episode(proto::GetEpisodeRequest {
            step_page_size: 1001,
            ..request
        })
        .await
        .unwrap_err();
    assert_rejects(&too_many, "step_page_size");
}

#[tokio::test]
async fn each_streamed_step_is_accepted_or_rejected_on_its_own() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("stream-rejections");
    let open = start_episode(&engram, &ns, "stream_rules", "Steps judged one by one").await;
    append(&engram, &ns, &open.id, steps(1..=3))
        .await
        .expect("append");
    let done = start_episode(&engram, &ns, "stream_rules", "Already completed").await;
    complete(&engram, &ns, &done.id, outcome(0.7, "done"))
        .await
        .expect("complete");

    let message = |episode_id: &str, steps: Vec<proto::Step>| proto::StreamStepsRequest {
        scope: Some(ns.clone()),
        episode_id: episode_id.to_owned(),
        steps,
    };
    let response = stream_steps(
        &engram,
        vec![
            message(
                &open.id,
                vec![
                    step(4),
                    // Not above the previous accepted step.
                    proto::Step {
                        action: "repeated 4".into(),
                        ..step(4)
                    },
                    // Stored already, with other content. (Sent again as
                    // stored, it would be acknowledged.)
                    proto::Step {
                        output: "not what was stored".into(),
                        ..step(2)
                    },
                    step(5),
                ],
            ),
            message(UNKNOWN_EPISODE, vec![step(1), step(2)]),
            message(
                &open.id,
                vec![
                    proto::Step {
                        parameters: "{not json".into(),
                        ..step(6)
                    },
                    proto::Step {
                        action: String::new(),
                        ..step(7)
                    },
                    step(8),
                    proto::Step {
                        tool: "\t".into(),
                        ..step(9)
                    },
                    step(10),
                ],
            ),
            message(&done.id, vec![step(1)]),
        ],
    )
    .await;
    assert_eq!((response.accepted, response.rejected), (4, 8));
    let mut rejected: Vec<(String, i32)> = response
        .rejections
        .iter()
        .map(|r| (r.episode_id.clone(), r.step_number))
        .collect();
    rejected.sort();
    let mut expected: Vec<(String, i32)> = [
        (open.id.as_str(), 4),
        (open.id.as_str(), 2),
        (UNKNOWN_EPISODE, 1),
        (UNKNOWN_EPISODE, 2),
        (open.id.as_str(), 6),
        (open.id.as_str(), 7),
        (open.id.as_str(), 9),
        (done.id.as_str(), 1),
    ]
    .into_iter()
    .map(|(id, n)| (id.to_owned(), n))
    .collect();
    expected.sort();
    assert_eq!(rejected, expected);
    for rejection in &response.rejections {
        assert!(!rejection.reason.is_empty(), "{rejection:?}");
        if rejection.episode_id == UNKNOWN_EPISODE {
            assert!(
                rejection.reason.to_lowercase().contains("not found"),
                "{rejection:?}"
            );
        }
    }

    let stored = get_episode(&engram, &ns, &open.id).await.expect("get");
    assert_eq!(step_numbers(&stored), [1, 2, 3, 4, 5, 8, 10]);
    assert_eq!(stored.step_count, 7);
    assert_eq!(
        stored.steps[3].action, "run check 4",
        "the first step 4 is kept"
    );
    let done = get_episode(&engram, &ns, &done.id).await.expect("get");
    assert_eq!(done.step_count, 0);
    assert_eq!(done.status(), EpisodeStatus::Completed);
}

#[tokio::test]
async fn an_episode_and_its_steps_survive_a_restart() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("restart-episodes");
    let context = proto::EpisodeContext {
        language: "rust".into(),
        framework: "tonic".into(),
        domain: "payments".into(),
        complexity: "high".into(),
        tags: vec!["canary".into(), "deploy".into()],
    };
    let started = engram
        .memory()
        .start_episode(proto::StartEpisodeRequest {
            scope: Some(ns.clone()),
            task_id: "deploy_check".into(),
            description: "Check the canary after the deploy".into(),
            task_type: "testing".into(),
            context: Some(context.clone()),
            ..Default::default()
        })
        .await
        .expect("start");
    uuid_v7(&started.id);
    assert_eq!(started.scope, Some(ns.clone()));
    assert_eq!(started.task_id, "deploy_check");
    assert_eq!(started.description, "Check the canary after the deploy");
    assert_eq!(started.task_type, "testing");
    assert_eq!(started.context, Some(context));
    assert_eq!(started.status(), EpisodeStatus::Running);
    assert_eq!(started.step_count, 0);
    assert!(started.steps.is_empty());
    assert_eq!(started.outcome, None);
    assert!(started.create_time.is_some());
    assert!(!started.etag.is_empty());

    let sent = vec![
        proto::Step {
            step_number: 1,
            tool: "shell".into(),
            action: "cargo test".into(),
            parameters: r#"{"args":["--workspace"],"env":{"RUST_LOG":"debug"}}"#.into(),
            result: StepResult::Ok.into(),
            output: "test result: ok. 42 passed".into(),
            latency_ms: 5300,
            time: Some(prost_types::Timestamp {
                seconds: 1_700_000_000,
                nanos: 123_456_000,
            }),
        },
        proto::Step {
            step_number: 2,
            tool: "http".into(),
            action: "GET /health".into(),
            parameters: String::new(),
            result: StepResult::Error.into(),
            output: "503 Service Unavailable".into(),
            latency_ms: 12,
            time: None,
        },
        // Numbers may skip; they only have to increase.
        proto::Step {
            step_number: 5,
            tool: "browser".into(),
            action: "open the dashboard".into(),
            parameters: r#"[1, 2.5, null, "x"]"#.into(),
            result: StepResult::Unspecified.into(),
            output: String::new(),
            latency_ms: 0,
            time: Some(prost_types::Timestamp {
                seconds: 1_700_000_060,
                nanos: 0,
            }),
        },
    ];
    assert_eq!(
        append(&engram, &ns, &started.id, sent[..2].to_vec())
            .await
            .expect("append"),
        2
    );
    assert_eq!(
        append(&engram, &ns, &started.id, sent[2..].to_vec())
            .await
            .expect("append"),
        3
    );
    let before = get_episode(&engram, &ns, &started.id).await.expect("get");
    assert_eq!(before.step_count, 3);
    assert_eq!(before.steps.len(), 3);
    for (got, sent) in before.steps.iter().zip(&sent) {
        if sent.time.is_some() {
            assert_eq!(got, sent);
        } else {
            assert!(got.time.is_some(), "an unset time is the time received");
            assert_eq!(
                &proto::Step {
                    time: None,
                    ..got.clone()
                },
                sent
            );
        }
    }

    let server = server.restart().await;
    let engram = server.client().await;
    let after = get_episode(&engram, &ns, &started.id)
        .await
        .expect("get after restart");
    assert_eq!(after, before);

    // The episode keeps running where it stopped.
    let status = append(&engram, &ns, &started.id, vec![step(5)])
        .await
        .expect_err("step 5 is taken");
    assert_rejects(&status, "steps[0].step_number");
    assert_eq!(
        append(&engram, &ns, &started.id, vec![step(6)])
            .await
            .expect("append after restart"),
        4
    );
}

#[tokio::test]
async fn bad_episode_input_is_rejected_with_the_field_named_and_stores_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("episode-validation");

    let start = |task_id: String, description: String| proto::StartEpisodeRequest {
        scope: Some(ns.clone()),
        task_id,
        description,
        ..Default::default()
    };
    for (task_id, description, field) in [
        (String::new(), "d".to_owned(), "task_id"),
        ("root cause".to_owned(), "d".to_owned(), "task_id"),
        ("root\tcause".to_owned(), "d".to_owned(), "task_id"),
        ("t".repeat(129), "d".to_owned(), "task_id"),
        ("rca".to_owned(), String::new(), "description"),
        ("rca".to_owned(), "d".repeat(10_001), "description"),
    ] {
        let status = engram
            .memory()
            .start_episode(start(task_id, description))
            .await
            .expect_err(field);
        assert_rejects(&status, field);
    }
    let status = engram
        .memory()
        .start_episode(start(" ".into(), String::new()))
        .await
        .expect_err("two bad fields");
    assert_rejects(&status, "task_id");
    assert_rejects(&status, "description");
    let longest = engram
        .memory()
        .start_episode(start("t".repeat(128), "é".repeat(10_000)))
        .await
        .expect("128-character task id, 10,000-character description");
    let listed = engram
        .memory()
        .list_episodes(proto::ListEpisodesRequest {
            scope: Some(ns.clone()),
            ..Default::default()
        })
        .await
        .expect("list")
        .episodes;
    assert_eq!(
        listed.iter().map(|e| &e.id).collect::<Vec<_>>(),
        [&longest.id],
        "no rejected start stored an episode"
    );

    // Steps: the whole call is rejected, and none of its steps are stored.
    let episode = start_episode(&engram, &ns, "rca", "Validate steps").await;
    append(&engram, &ns, &episode.id, steps(1..=3))
        .await
        .expect("append");
    let before = get_episode(&engram, &ns, &episode.id).await.expect("get");
    let cases: Vec<(Vec<proto::Step>, &str)> = vec![
        (vec![], "steps"),
        ((4..=1004).map(step).collect(), "steps"),
        (
            vec![
                step(4),
                step(5),
                proto::Step {
                    tool: "  ".into(),
                    ..step(6)
                },
            ],
            "steps[2].tool",
        ),
        (
            vec![
                step(4),
                proto::Step {
                    tool: String::new(),
                    ..step(5)
                },
            ],
            "steps[1].tool",
        ),
        (
            vec![
                step(4),
                proto::Step {
                    action: " \n".into(),
                    ..step(5)
                },
            ],
            "steps[1].action",
        ),
        (
            vec![
                step(4),
                proto::Step {
                    parameters: "{not json".into(),
                    ..step(5)
                },
            ],
            "steps[1].parameters",
        ),
        (
            vec![proto::Step {
                parameters: r#"{"a": 1} trailing"#.into(),
                ..step(4)
            }],
            "steps[0].parameters",
        ),
        (vec![step(0)], "steps[0].step_number"),
        (vec![step(-4)], "steps[0].step_number"),
        // Not above the episode's last step, and not the stored step 3 sent
        // again (which would be acknowledged).
        (
            vec![proto::Step {
                output: "not what was stored".into(),
                ..step(3)
            }],
            "steps[0].step_number",
        ),
        // Not increasing within the call.
        (vec![step(4), step(4)], "steps[1].step_number"),
        (vec![step(5), step(4)], "steps[1].step_number"),
    ];
    for (steps, field) in cases {
        let status = append(&engram, &ns, &episode.id, steps)
            .await
            .expect_err(field);
        assert_rejects(&status, field);
    }
    let after = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(after, before, "rejected calls stored nothing");
    assert_eq!(
        append(&engram, &ns, &episode.id, vec![step(4)])
            .await
            .expect("step 4 is still free"),
        4
    );

    // Step numbers start above 0.
    let fresh = start_episode(&engram, &ns, "rca", "No steps yet").await;
    let status = append(&engram, &ns, &fresh.id, vec![step(0)])
        .await
        .expect_err("step 0");
    assert_rejects(&status, "steps[0].step_number");
    assert_eq!(
        append(&engram, &ns, &fresh.id, vec![step(1)])
            .await
            .expect("step 1"),
        1
    );

    // At most 1,000 steps per call and per episode.
    let big = start_episode(&engram, &ns, "rca", "A long run").await;
    assert_eq!(
        append(&engram, &ns, &big.id, steps(1..=1000))
            .await
            .expect("1,000 steps in one call"),
        1000
    );
    let status = append(&engram, &ns, &big.id, vec![step(1001)])
        .await
        .expect_err("step 1,001 of an episode");
    assert_rejects(&status, "steps");
    let big = get_episode(&engram, &ns, &big.id).await.expect("get");
    assert_eq!(big.step_count, 1000);
    assert_eq!(big.steps.len(), 1000);

    // A score outside 0 to 1 leaves the episode running.
    for score in [1.5, -0.1, f64::NAN] {
        let status = complete(&engram, &ns, &episode.id, outcome(score, "bad score"))
            .await
            .expect_err("score out of range");
        assert_rejects(&status, "outcome.score");
    }
    let still = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(still.status(), EpisodeStatus::Running);
    assert_eq!(still.outcome, None);
    let done = complete(&engram, &ns, &episode.id, outcome(1.0, "perfect"))
        .await
        .expect("a score of exactly 1")
        .episode
        .expect("episode");
    assert_eq!(done.status(), EpisodeStatus::Completed);
}

#[tokio::test]
async fn missing_and_completed_episodes_answer_not_found_and_failed_precondition() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("episode-states");
    let episode = start_episode(&engram, &ns, "rca", "Complete me once").await;
    append(&engram, &ns, &episode.id, steps(1..=2))
        .await
        .expect("append");

    // A malformed id is bad input; a well-formed unknown one is not found.
    let status = append(&engram, &ns, "not-a-uuid", vec![step(1)])
        .await
        .expect_err("malformed id");
    assert_rejects(&status, "episode_id");
    let status = get_episode(&engram, &ns, "not-a-uuid")
        .await
        .expect_err("malformed id");
    assert_rejects(&status, "id");
    let status = complete(&engram, &ns, "not-a-uuid", outcome(0.5, "x"))
        .await
        .expect_err("malformed id");
    assert_rejects(&status, "episode_id");
    let elsewhere = scope("episode-states-elsewhere");
    for (scope, id) in [(&ns, UNKNOWN_EPISODE), (&elsewhere, episode.id.as_str())] {
        let status = append(&engram, scope, id, vec![step(3)])
            .await
            .expect_err("append to a missing episode");
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
        let status = get_episode(&engram, scope, id)
            .await
            .expect_err("get a missing episode");
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
        let status = complete(&engram, scope, id, outcome(0.5, "x"))
            .await
            .expect_err("complete a missing episode");
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
    }

    let first = complete(&engram, &ns, &episode.id, outcome(0.75, "Done once"))
        .await
        .expect("complete")
        .episode
        .expect("episode");
    let status = complete(&engram, &ns, &episode.id, outcome(0.9, "Done twice"))
        .await
        .expect_err("complete twice");
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    let status = append(&engram, &ns, &episode.id, vec![step(3)])
        .await
        .expect_err("append to a completed episode");
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");

    let stored = get_episode(&engram, &ns, &episode.id).await.expect("get");
    assert_eq!(stored.status(), EpisodeStatus::Completed);
    assert_eq!(stored.outcome, first.outcome, "the first outcome stands");
    assert_eq!(stored.outcome.as_ref().map(|o| o.score), Some(0.75));
    assert_eq!(step_numbers(&stored), [1, 2]);
}

#[tokio::test]
async fn build_context_shows_what_was_learned_about_the_task_in_order() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("context-episodes");
    let task = "incident_review";
    const LATE: CardKey = ("late_escalation", "oncall", "Escalate after 15 minutes");
    const WRONG_TEAM: CardKey = (
        "wrong_team",
        "oncall",
        "Page the owning team from the service catalog",
    );
    let long_summary = "Rolled back the release after the error rate doubled, but the status page was not updated for another forty minutes";

    let run = |score: f64,
               summary: &str,
               successes: &[&str],
               mistakes: &[&str],
               cards: Vec<proto::MistakeCardInput>| proto::EpisodeOutcome {
        score,
        success: score >= 0.5,
        summary: summary.to_owned(),
        mistakes: mistakes.iter().map(|m| (*m).to_owned()).collect(),
        successes: successes.iter().map(|s| (*s).to_owned()).collect(),
        mistake_cards: cards,
    };

    let a = start_episode(&engram, &ns, task, "Checkout outage").await;
    append(&engram, &ns, &a.id, steps(1..=2))
        .await
        .expect("append");
    let learned = complete(
        &engram,
        &ns,
        &a.id,
        run(
            0.90,
            "Found the bad feature flag",
            &["Check the error budget first"],
            &["Skipped the postmortem template"],
            vec![card(LATE, "Waited 40 minutes", "Escalate early")],
        ),
    )
    .await
    .expect("complete a")
    .learned
    .expect("learned");
    assert_eq!(learned.rules_added, [works("Check the error budget first")]);

    // Consolidating now turns episode a, the only completed one, into a global rule.
    let consolidated = consolidate(&engram, &ns, proto::ConsolidateMode::Rules).await;
    assert_eq!(consolidated.mode(), proto::ConsolidateMode::Rules);
    assert!(!consolidated.fell_back);
    assert_eq!(consolidated.episodes_considered, 1);
    assert_eq!(
        texts(&consolidated.rules),
        ["[HIGH SCORE 0.90] Found the bad feature flag"]
    );
    assert_eq!(consolidated.rules[0].task_id, "");
    assert_eq!(consolidated.rules[0].origin(), TaskRuleOrigin::HighScore);

    let b = start_episode(&engram, &ns, task, "Search outage").await;
    append(&engram, &ns, &b.id, steps(1..=2))
        .await
        .expect("append");
    let learned = complete(
        &engram,
        &ns,
        &b.id,
        run(
            0.30,
            "Escalated too late",
            &[],
            &["Paged the wrong team"],
            vec![
                card(
                    LATE,
                    "Waited an hour",
                    "Escalate after 15 minutes without progress",
                ),
                card(
                    WRONG_TEAM,
                    "Paged the database team for a DNS issue",
                    "Look up the owner first",
                ),
            ],
        ),
    )
    .await
    .expect("complete b")
    .learned
    .expect("learned");
    assert_eq!(learned.rules_added, [avoid("Paged the wrong team")]);
    assert_eq!(learned.mistake_cards_merged, 2);

    let c = start_episode(&engram, &ns, task, "Error rate spike").await;
    append(&engram, &ns, &c.id, steps(1..=4))
        .await
        .expect("append");
    let learned = complete(
        &engram,
        &ns,
        &c.id,
        run(
            0.60,
            long_summary,
            &[],
            &["Ignored the status page"],
            vec![],
        ),
    )
    .await
    .expect("complete c")
    .learned
    .expect("learned");
    assert!(learned.rules_added.is_empty());

    let d = start_episode(&engram, &ns, task, "Payments latency").await;
    append(&engram, &ns, &d.id, steps(1..=3))
        .await
        .expect("append");
    let learned = complete(
        &engram,
        &ns,
        &d.id,
        run(
            0.95,
            "Wrote a clear timeline",
            &["Write the timeline as you go"],
            &["Forgot to update the status page"],
            vec![],
        ),
    )
    .await
    .expect("complete d")
    .learned
    .expect("learned");
    assert_eq!(learned.rules_added, [works("Write the timeline as you go")]);

    // AUTO without a model runs RULES; episode a's rule is not added twice.
    let consolidated = consolidate(&engram, &ns, proto::ConsolidateMode::Auto).await;
    assert_eq!(consolidated.mode(), proto::ConsolidateMode::Rules);
    assert!(!consolidated.fell_back);
    assert_eq!(
        texts(&consolidated.rules),
        ["[HIGH SCORE 0.95] Wrote a clear timeline"]
    );
    let again = consolidate(&engram, &ns, proto::ConsolidateMode::Rules).await;
    assert!(again.rules.is_empty(), "nothing new to distil");

    // A running episode is not a recent episode and has no score.
    let running = start_episode(&engram, &ns, task, "Still going").await;
    append(&engram, &ns, &running.id, steps(1..=1))
        .await
        .expect("append");

    let fact = create(
        &engram,
        &ns,
        input(
            proto::MemoryType::Fact,
            "The billing service is written in Go",
        ),
    )
    .await
    .memory
    .expect("memory");
    let mut preference = input(
        proto::MemoryType::Preference,
        "Always answer in British English",
    );
    preference.importance = Some(0.9);
    let preference = create(&engram, &ns, preference)
        .await
        .memory
        .expect("memory");

    let context = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(ns.clone()),
            task_id: task.into(),
            query: "what language is billing written in".into(),
            token_budget: 4096,
            ..Default::default()
        })
        .await
        .expect("build context");
    let expected = [
        "## Task rules",
        "- [WORKS] Write the timeline as you go",
        "- [AVOID] Paged the wrong team",
        "- [WORKS] Check the error budget first",
        "",
        "## Global rules",
        "- [HIGH SCORE 0.95] Wrote a clear timeline",
        "- [HIGH SCORE 0.90] Found the bad feature flag",
        "",
        "## Mistakes to avoid",
        "- Forgot to update the status page",
        "- Ignored the status page",
        "- Paged the wrong team",
        "",
        "## Mistake cards",
        "- [late_escalation, seen 2x] Escalate after 15 minutes without progress Evidence: Waited an hour",
        "- [wrong_team, seen 1x] Look up the owner first Evidence: Paged the database team for a DNS issue",
        "",
        "## Relevant memories",
        "- [FACT] The billing service is written in Go",
        "",
        "## Preferences",
        "- Always answer in British English",
        "",
        // Mean of 0.90, 0.30, 0.60 and 0.95.
        "## Recent episodes (mean score 0.69 over 4)",
        "- Score 0.95 in 3 steps: Wrote a clear timeline",
        "- Score 0.60 in 4 steps: Rolled back the release after the error rate doubled, but the status page was not updated for anothe",
        "- Score 0.30 in 2 steps: Escalated too late",
    ]
    .map(|line| format!("{line}\n"))
    .concat();
    assert_eq!(context.text, expected);
    assert!(!context.truncated);
    assert_eq!(
        context.token_estimate as usize,
        context.text.chars().count().div_ceil(4)
    );

    let rules = task_rules(&engram, &ns, Some(task)).await;
    assert_eq!(
        texts(&rules),
        [
            works("Write the timeline as you go"),
            avoid("Paged the wrong team"),
            works("Check the error budget first"),
        ]
    );
    let global = task_rules(&engram, &ns, Some("")).await;
    assert_eq!(
        texts(&global),
        [
            "[HIGH SCORE 0.95] Wrote a clear timeline",
            "[HIGH SCORE 0.90] Found the bad feature flag",
        ]
    );
    let cards = mistake_cards(
        &engram,
        proto::ListMistakeCardsRequest {
            scope: Some(ns.clone()),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(
        cards
            .iter()
            .map(|c| (c.mistake_type.as_str(), c.seen_count))
            .collect::<Vec<_>>(),
        [("late_escalation", 2), ("wrong_team", 1)]
    );

    // Mistakes have no public id: their items are checked by kind only.
    use ContextItemKind as Kind;
    let items: Vec<(Kind, String)> = context
        .items
        .iter()
        .map(|i| {
            let id = if i.kind() == Kind::Mistake {
                String::new()
            } else {
                i.id.clone()
            };
            (i.kind(), id)
        })
        .collect();
    let item = |kind: Kind, id: &str| (kind, id.to_owned());
    assert_eq!(
        items,
        [
            item(Kind::TaskRule, &rules[0].id),
            item(Kind::TaskRule, &rules[1].id),
            item(Kind::TaskRule, &rules[2].id),
            item(Kind::GlobalRule, &global[0].id),
            item(Kind::GlobalRule, &global[1].id),
            item(Kind::Mistake, ""),
            item(Kind::Mistake, ""),
            item(Kind::Mistake, ""),
            item(Kind::MistakeCard, &cards[0].id),
            item(Kind::MistakeCard, &cards[1].id),
            item(Kind::Memory, &fact.id),
            item(Kind::Preference, &preference.id),
            item(Kind::Episode, &d.id),
            item(Kind::Episode, &c.id),
            item(Kind::Episode, &b.id),
        ]
    );
    let mistake_ids: BTreeSet<&str> = context
        .items
        .iter()
        .filter(|i| i.kind() == Kind::Mistake)
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(mistake_ids.len(), 3, "three distinct mistakes");
    assert!(!mistake_ids.contains(""), "every item has an id");
}

#[tokio::test]
async fn build_context_for_an_unknown_task_in_an_empty_namespace_is_empty() {
    let server = Server::start().await;
    let engram = server.client().await;
    let context = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(scope("context-nothing-known")),
            task_id: "never_run".into(),
            ..Default::default()
        })
        .await
        .expect("build context");
    assert_eq!(context.text, "");
    assert!(context.items.is_empty());
    assert!(!context.truncated);
}

/// Every page of a listing, in order.
async fn list_pages(
    engram: &Engram,
    mut request: proto::ListEpisodesRequest,
) -> Vec<Vec<proto::Episode>> {
    let mut pages = Vec::new();
    for _ in 0..100 {
        let page = engram
            .memory()
            .list_episodes(request.clone())
            .await
            .expect("list episodes");
        pages.push(page.episodes);
        if page.next_page_token.is_empty() {
            return pages;
        }
        request.page_token = page.next_page_token;
    }
    panic!("episodes never stopped paging");
}

fn ids(episodes: &[proto::Episode]) -> Vec<String> {
    episodes.iter().map(|e| e.id.clone()).collect()
}

#[tokio::test]
async fn list_episodes_filters_by_task_and_status_and_pages_newest_first() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("list-episodes");
    // Runs 1..=7 alternate between alpha and beta; run i has i steps.
    let mut started = Vec::new();
    for i in 1..=7 {
        let task = if i % 2 == 1 { "alpha" } else { "beta" };
        let episode = start_episode(&engram, &ns, task, &format!("run {i}")).await;
        assert_eq!(
            append(&engram, &ns, &episode.id, steps(1..=i))
                .await
                .expect("append"),
            i
        );
        started.push(episode);
    }
    for i in [2, 3, 5] {
        complete(
            &engram,
            &ns,
            &started[i - 1].id,
            outcome(0.7, &format!("run {i} done")),
        )
        .await
        .expect("complete");
    }
    start_episode(
        &engram,
        &scope("list-episodes-elsewhere"),
        "alpha",
        "not listed",
    )
    .await;

    let runs = |numbers: &[usize]| -> Vec<String> {
        numbers.iter().map(|i| started[i - 1].id.clone()).collect()
    };
    let request =
        |task_id: &str, status: EpisodeStatus, page_size: i32| proto::ListEpisodesRequest {
            scope: Some(ns.clone()),
            task_id: task_id.to_owned(),
            status: status.into(),
            page_size,
            ..Default::default()
        };

    let pages = list_pages(&engram, request("", EpisodeStatus::Unspecified, 0)).await;
    assert_eq!(pages.len(), 1);
    let all = &pages[0];
    assert_eq!(ids(all), runs(&[7, 6, 5, 4, 3, 2, 1]));
    assert_eq!(
        all.iter().map(|e| e.step_count).collect::<Vec<_>>(),
        [7, 6, 5, 4, 3, 2, 1]
    );
    assert!(
        all.iter().all(|e| e.steps.is_empty()),
        "listed without steps"
    );
    use EpisodeStatus::{Completed, Running};
    assert_eq!(
        all.iter().map(|e| e.status()).collect::<Vec<_>>(),
        [
            Running, Running, Completed, Running, Completed, Completed, Running
        ]
    );
    assert_eq!(
        all.iter().map(|e| e.task_id.as_str()).collect::<Vec<_>>(),
        ["alpha", "beta", "alpha", "beta", "alpha", "beta", "alpha"]
    );

    let cases: [(&str, EpisodeStatus, &[usize]); 7] = [
        ("alpha", EpisodeStatus::Unspecified, &[7, 5, 3, 1]),
        ("beta", EpisodeStatus::Unspecified, &[6, 4, 2]),
        ("", Completed, &[5, 3, 2]),
        ("", Running, &[7, 6, 4, 1]),
        ("alpha", Running, &[7, 1]),
        ("beta", Completed, &[2]),
        ("gamma", EpisodeStatus::Unspecified, &[]),
    ];
    for (task_id, status, expected) in cases {
        let pages = list_pages(&engram, request(task_id, status, 0)).await;
        assert_eq!(
            ids(&pages.concat()),
            runs(expected),
            "task {task_id:?}, status {status:?}"
        );
    }

    // (task, status, page size, the sizes of the pages, the runs listed)
    let paged: [PageCase; 3] = [
        (
            "",
            EpisodeStatus::Unspecified,
            2,
            &[2, 2, 2, 1],
            &[7, 6, 5, 4, 3, 2, 1],
        ),
        (
            "alpha",
            EpisodeStatus::Unspecified,
            3,
            &[3, 1],
            &[7, 5, 3, 1],
        ),
        ("", Completed, 1, &[1, 1, 1], &[5, 3, 2]),
    ];
    for (task_id, status, page_size, sizes, expected) in paged {
        let pages = list_pages(&engram, request(task_id, status, page_size)).await;
        assert_eq!(
            pages.iter().map(Vec::len).collect::<Vec<_>>(),
            sizes,
            "page sizes of task {task_id:?}, status {status:?}, {page_size} per page"
        );
        assert_eq!(ids(&pages.concat()), runs(expected));
    }

    for page_size in [-1, 1001] {
        let status = engram
            .memory()
            .list_episodes(request("", EpisodeStatus::Unspecified, page_size))
            .await
            .expect_err("page_size out of range");
        assert_rejects(&status, "page_size");
    }
    let status = engram
        .memory()
        .list_episodes(proto::ListEpisodesRequest {
            page_token: "garbage".into(),
            ..request("", EpisodeStatus::Unspecified, 0)
        })
        .await
        .expect_err("bad page token");
    assert_rejects(&status, "page_token");
    let status = engram
        .memory()
        .list_episodes(proto::ListEpisodesRequest {
            status: 9,
            ..request("", EpisodeStatus::Unspecified, 0)
        })
        .await
        .expect_err("unknown status");
    assert_rejects(&status, "status");
}

#[tokio::test]
async fn a_retried_start_with_the_same_request_id_starts_one_episode() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("idempotent-episodes");
    let request = proto::StartEpisodeRequest {
        scope: Some(ns.clone()),
        task_id: "deploy_check".into(),
        description: "Check the canary".into(),
        request_id: "start-6c1d2e".into(),
        ..Default::default()
    };
    let first = engram
        .memory()
        .start_episode(request.clone())
        .await
        .expect("start");
    let retry = engram.memory().start_episode(request).await.expect("retry");
    assert_eq!(retry, first);
    let pages = list_pages(
        &engram,
        proto::ListEpisodesRequest {
            scope: Some(ns),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(ids(&pages.concat()), [first.id]);
}

#[tokio::test]
async fn only_the_30_strongest_mistake_cards_are_kept() {
    let server = Server::start().await;
    let engram = server.client().await;
    let ns = scope("card-cap");
    let record = |n: usize| {
        let learning = learning(&engram);
        let ns = ns.clone();
        async move {
            learning
                .record_mistake(proto::RecordMistakeRequest {
                    scope: Some(ns),
                    task_id: "triage".into(),
                    card: Some(proto::MistakeCardInput {
                        mistake_type: format!("mistake_{n:02}"),
                        correct_decision: "look closer".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .await
                .expect("record mistake")
        }
    };
    // Thirty cards seen twice each.
    for round in 0..2 {
        for n in 0..30 {
            let answer = record(n).await;
            assert!(answer.kept);
            assert_eq!(answer.card.unwrap().seen_count, round + 1);
        }
    }
    // A new card seen once is the weakest: it is dropped at once, and says so.
    let weak = record(30).await;
    assert!(!weak.kept);
    assert_eq!(weak.change(), LearningChange::Created);
    let cards = learning(&engram)
        .list_mistake_cards(proto::ListMistakeCardsRequest {
            scope: Some(ns.clone()),
            ..Default::default()
        })
        .await
        .unwrap()
        .mistake_cards;
    assert_eq!(cards.len(), 30);
    assert!(cards.iter().all(|c| c.seen_count == 2));
    assert!(!cards.iter().any(|c| c.mistake_type == "mistake_30"));
    // Seen once more, card 0 becomes the strongest; nothing else moves.
    let stronger = record(0).await;
    assert_eq!(stronger.card.unwrap().seen_count, 3);
    let top = learning(&engram)
        .list_mistake_cards(proto::ListMistakeCardsRequest {
            scope: Some(ns),
            page_size: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(top.mistake_cards[0].mistake_type, "mistake_00");
    assert!(!top.next_page_token.is_empty());
}

/// A small request cannot cost a huge response: a rejection echoes at most a
/// short prefix of an episode id, however long the one sent.
#[tokio::test]
async fn a_stream_of_steps_with_a_huge_episode_id_gets_a_small_answer() {
    let server = Server::start().await;
    let engram = server.client().await;
    let huge_id = "x".repeat(300_000);
    let response = stream_steps(
        &engram,
        stream_messages(&scope("huge-episode-id"), &huge_id, &steps(1..=100), 100),
    )
    .await;
    assert_eq!((response.accepted, response.rejected), (0, 100));
    assert_eq!(response.rejections.len(), 100);
    for rejection in &response.rejections {
        assert!(rejection.episode_id.chars().count() <= 65, "echoed in full");
        assert!(rejection.episode_id.starts_with("xxxx"));
        assert!(
            rejection.reason.contains("episode_id"),
            "{}",
            rejection.reason
        );
    }
    let echoed: usize = response
        .rejections
        .iter()
        .map(|r| r.episode_id.len() + r.reason.len())
        .sum();
    assert!(
        echoed < 64 * 1024,
        "{echoed} bytes of text for 100 rejections"
    );
}
