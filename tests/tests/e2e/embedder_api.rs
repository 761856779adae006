//! The OpenAI-compatible embedder against a local fake API that misbehaves
//! on purpose: while it is down, slow, or answers the wrong size or garbage,
//! writes and searches still succeed — by words — and the memories wait for
//! their vectors, which the backfill makes once the API recovers. A model
//! change re-embeds everything in the background, saying so in the log. The
//! API key goes in the Authorization header and nowhere else.

use std::time::{Duration, Instant};

use engram_client::Engram;
use engram_client::proto::{self, MemoryType, SemanticSearch};
use engram_tests::fake_embeddings::{DIMENSIONS, FakeEmbeddings, Reply, inputs};
use engram_tests::{
    Server, create, embedded, hit_contents, input, pending_embeddings, refuses_to_start, scope,
    search_meaning,
};

const KEY_ENV: &str = "ENGRAM_EMBEDDER_API_KEY";
const KEY: &str = "sk-embed-test-4d1c8b7e2a";
const MODEL: &str = "fake-embedder";
/// `--embedder-timeout`: far shorter than [`SLOWER_THAN_THE_TIMEOUT`].
const TIMEOUT: &str = "1s";
const SLOWER_THAN_THE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client waits for a call, in the test of a hanging API.
const CALLER_DEADLINE: Duration = Duration::from_secs(3);
/// Longer than any test: an API that does not answer.
const HANGING: Duration = Duration::from_secs(300);
/// How long the backfill may take to ask for a new memory's vector.
const ASKED_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a search may take to say COMPLETE once nothing is pending: the
/// backfill still has to read back the feed changes of its own vectors.
const COMPLETE_TIMEOUT: Duration = Duration::from_secs(30);

/// Stored and embedded while the API works.
const BEFORE: [&str; 3] = [
    "Kubernetes pods restart when they exceed their memory limits",
    "The quarterly tax report is due in April",
    "Alice prefers concise answers with code first",
];
/// Written while the API misbehaves: one alone, two in a batch.
const DURING: &str = "The deploy script needs the staging flag";
const DURING_BATCH: [&str; 2] = [
    "Backups run nightly at two",
    "Grafana dashboards show the latency",
];
/// Embedded before the outage: the server remembers its vector.
const CACHED_QUERY: &str = "deploy staging";
/// First asked during the outage.
const NEW_QUERY: &str = "nightly backups";
/// Misspelt queries and the memory each means: no word in common for full
/// text, but most of their trigrams, which make the fake's vectors.
const MISSPELT: [(&str, &str); 2] = [
    ("kubernetis", BEFORE[0]),
    ("dashbord latancy", DURING_BATCH[1]),
];

/// The flags of a server embedding with `model` through `fake`, waiting
/// [`TIMEOUT`] for each call, and logging the backfill's retries too.
fn flags<'a>(fake: &'a FakeEmbeddings, model: &'a str) -> Vec<&'a str> {
    let mut flags = patient_flags(fake, model);
    flags.extend(["--embedder-timeout", TIMEOUT]);
    flags
}

/// [`flags`] but for the timeout, left at its default.
fn patient_flags<'a>(fake: &'a FakeEmbeddings, model: &'a str) -> Vec<&'a str> {
    vec![
        "--embedder",
        "openai",
        "--embedder-base-url",
        &fake.base_url,
        "--embedder-model",
        model,
        "--log",
        "engram_server=debug,info",
    ]
}

async fn start(fake: &FakeEmbeddings, model: &str, more: &[&str]) -> Server {
    let mut args = flags(fake, model);
    args.extend_from_slice(more);
    Server::start_with_env(&args, &[(KEY_ENV, KEY)]).await
}

async fn search(engram: &Engram, ns: &proto::Scope, query: &str) -> proto::SearchMemoriesResponse {
    search_meaning(engram, ns, query, None).await
}

/// Searches, while the API works, until the search says every memory had
/// its vector (and so the server knows the query's). A search may say
/// UNAVAILABLE meanwhile: on a machine running other tests, the call
/// embedding the query can outlast the one-second [`TIMEOUT`], and the
/// search falls back to words, as it should; the next one asks again.
async fn search_complete(
    engram: &Engram,
    ns: &proto::Scope,
    query: &str,
) -> proto::SearchMemoriesResponse {
    let deadline = Instant::now() + COMPLETE_TIMEOUT;
    loop {
        let found = search(engram, ns, query).await;
        if found.semantic() == SemanticSearch::Complete {
            return found;
        }
        assert!(
            matches!(
                found.semantic(),
                SemanticSearch::Partial | SemanticSearch::Unavailable
            ),
            "{query}: {:?}",
            found.semantic()
        );
        assert!(Instant::now() < deadline, "{query}: never COMPLETE");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn batch_create(engram: &Engram, ns: &proto::Scope, contents: &[String]) {
    let response = engram
        .memory()
        .batch_create_memories(proto::BatchCreateMemoriesRequest {
            scope: Some(ns.clone()),
            memories: contents
                .iter()
                .map(|c| input(MemoryType::Fact, c))
                .collect(),
            ..Default::default()
        })
        .await
        .expect("batch create succeeds whatever the embedder does");
    assert_eq!(response.results.len(), contents.len());
}

/// Waits until `fake` was asked for the vector of `content`.
async fn asked_for(fake: &FakeEmbeddings, content: &str) {
    let deadline = Instant::now() + ASKED_TIMEOUT;
    while !fake
        .seen()
        .iter()
        .any(|r| inputs(r).iter().any(|i| i == content))
    {
        assert!(Instant::now() < deadline, "never asked for {content:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every request carried the key as a bearer token, and the server's log
/// never holds it, not even in the warnings of failed calls.
fn assert_key_kept_secret(fake: &FakeEmbeddings, log: &str) {
    let seen = fake.seen();
    assert!(!seen.is_empty());
    for request in seen {
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    assert!(!log.contains(KEY), "the key leaked into the log:\n{log}");
}

/// Writes during a misbehaving API succeed and are found by words at once;
/// its vectors follow once it recovers.
async fn outage(name: &'static str, misbehaviour: Reply) {
    let fake = FakeEmbeddings::start(Reply::Vectors).await;
    // Nine servers start at once, on a machine running other tests: each
    // is told the dimensions rather than asking the fake for a first
    // vector within the one-second timeout (what this test is about comes
    // after the start).
    let dimensions = DIMENSIONS.to_string();
    let server = start(&fake, MODEL, &["--embedder-dimensions", &dimensions]).await;
    let engram = server.client().await;
    let ns = scope("outage");
    for content in BEFORE {
        create(&engram, &ns, input(MemoryType::Fact, content)).await;
    }
    embedded(&engram, &ns).await;
    search_complete(&engram, &ns, CACHED_QUERY).await;

    fake.reply(misbehaviour);
    create(&engram, &ns, input(MemoryType::Fact, DURING)).await;
    batch_create(&engram, &ns, &DURING_BATCH.map(String::from)).await;
    // A query the API cannot embed now: words only.
    let found = search(&engram, &ns, NEW_QUERY).await;
    assert_eq!(found.semantic(), SemanticSearch::Unavailable, "{name}");
    assert_eq!(hit_contents(&found), [DURING_BATCH[0]], "{name}");
    // A query embedded before: meaning too, but not for the new memories,
    // which are found by their words.
    let found = search(&engram, &ns, CACHED_QUERY).await;
    assert_eq!(found.semantic(), SemanticSearch::Partial, "{name}");
    let during = found
        .hits
        .iter()
        .find(|h| h.memory.as_ref().is_some_and(|m| m.content == DURING))
        .unwrap_or_else(|| panic!("{name}: {:?}", hit_contents(&found)));
    assert_eq!(during.semantic, 0.0, "{name}: no vector yet");
    assert_eq!(pending_embeddings(&engram, &ns).await, 3, "{name}");
    // The backfill tried, and failed, before the API recovers.
    asked_for(&fake, DURING).await;

    fake.reply(Reply::Vectors);
    embedded(&engram, &ns).await;
    for (query, meant) in MISSPELT {
        let found = search_complete(&engram, &ns, query).await;
        assert_eq!(
            hit_contents(&found).first(),
            Some(&meant),
            "{name}: {query}"
        );
        assert_eq!(found.hits[0].semantic, 1.0, "{name}: {query}");
        // By words alone, nothing matches it.
        let words = search_meaning(&engram, &ns, query, Some(0.0)).await;
        assert!(words.hits.is_empty(), "{name}: {:?}", hit_contents(&words));
    }
    let log = server.log();
    assert!(
        log.contains("embedding memories failed; retrying with backoff")
            && log.contains("embedding memories: recovered"),
        "{name}: the failure and the recovery are logged:\n{log}"
    );
    assert_key_kept_secret(&fake, &log);
}

#[tokio::test]
async fn a_misbehaving_api_never_fails_a_write_or_a_search_and_the_backfill_catches_up() {
    let cases = [
        ("HTTP 500", Reply::Status(500)),
        ("HTTP 503", Reply::Status(503)),
        ("connection dropped", Reply::Hangup),
        (
            "slower than the timeout",
            Reply::Slow(SLOWER_THAN_THE_TIMEOUT),
        ),
        ("wrong dimensions", Reply::WrongDimensions),
        ("wrong number of vectors", Reply::WrongCount),
        ("not JSON", Reply::NotJsonBody),
        ("NaN values", Reply::NanValues),
        ("strings for numbers", Reply::Garbage),
    ];
    // Each case has its own fake and server; they run side by side.
    let mut running = tokio::task::JoinSet::new();
    for (name, misbehaviour) in cases {
        running.spawn(outage(name, misbehaviour));
    }
    while let Some(done) = running.join_next().await {
        if let Err(err) = done {
            std::panic::resume_unwind(err.into_panic());
        }
    }
}

#[tokio::test]
async fn a_search_answers_by_words_before_the_callers_deadline_while_the_api_hangs() {
    let fake = FakeEmbeddings::start(Reply::Vectors).await;
    // The API may take the default --embedder-timeout (30 s), far longer
    // than this caller waits.
    let server = Server::start_with_env(&patient_flags(&fake, MODEL), &[(KEY_ENV, KEY)]).await;
    let engram = Engram::builder(&server.url)
        .timeout(CALLER_DEADLINE)
        .connect()
        .await
        .expect("connect");
    let ns = scope("hanging");
    fake.reply(Reply::Slow(HANGING));
    create(&engram, &ns, input(MemoryType::Fact, DURING)).await;

    let found = search(&engram, &ns, "deploy").await;
    assert_eq!(found.semantic(), SemanticSearch::Unavailable);
    assert_eq!(hit_contents(&found), [DURING]);
    let context = engram
        .memory()
        .build_context(proto::BuildContextRequest {
            scope: Some(ns.clone()),
            query: "staging".into(),
            ..Default::default()
        })
        .await
        .expect("the context is built by words");
    assert!(context.text.contains(DURING), "{}", context.text);
    // Right after the search gave up on it, the hanging API was not asked
    // again (nor made the context wait).
    assert!(
        !fake
            .seen()
            .iter()
            .any(|r| inputs(r).iter().any(|i| i == "staging")),
        "asked again"
    );
    assert_key_kept_secret(&fake, &server.log());
}

#[tokio::test]
async fn the_server_refuses_to_start_when_it_cannot_learn_the_dimensions() {
    let fake = FakeEmbeddings::start(Reply::Status(503)).await;
    for (misbehaviour, why) in [
        (Reply::Status(503), "HTTP status 503"),
        (Reply::Hangup, "transport error"),
        (Reply::NanValues, "not valid JSON"),
    ] {
        fake.reply(misbehaviour);
        let stderr = refuses_to_start(
            &flags(&fake, MODEL),
            &[(KEY_ENV, KEY)],
            "give --embedder-dimensions to start without it",
        )
        .await;
        assert!(stderr.contains(why), "{stderr}");
        assert!(!stderr.contains(KEY), "{stderr}");
    }

    // Told the dimensions, it starts without asking, and embeds once the
    // API answers.
    let server = start(&fake, MODEL, &["--embedder-dimensions", "32"]).await;
    let engram = server.client().await;
    let ns = scope("dimensions");
    create(&engram, &ns, input(MemoryType::Fact, BEFORE[0])).await;
    assert_eq!(pending_embeddings(&engram, &ns).await, 1);
    fake.reply(Reply::Vectors);
    embedded(&engram, &ns).await;
    let asked = fake.seen().last().expect("a request").body.clone();
    assert_eq!(asked["dimensions"], 32);
    assert_eq!(asked["model"], MODEL);
    assert_key_kept_secret(&fake, &server.log());
}

#[tokio::test]
async fn a_model_change_re_embeds_everything_in_the_background_with_progress_in_the_log() {
    const MEMORIES: usize = 70;
    const API_BATCH: usize = 64;
    let fake = FakeEmbeddings::start(Reply::Vectors).await;
    let dimensions = ["--embedder-dimensions", "64"];
    let server = start(&fake, "model-a", &dimensions).await;
    let engram = server.client().await;
    let ns = scope("model-change");
    let notes: Vec<String> = (0..MEMORIES)
        .map(|n| format!("Note {n} about the release checklist"))
        .collect();
    batch_create(&engram, &ns, &notes).await;
    embedded(&engram, &ns).await;
    let before_the_change = fake.seen().len();

    // Down while the server restarts with another model: every memory
    // waits for a vector of the new one.
    fake.reply(Reply::Status(503));
    let mut args = flags(&fake, "model-b");
    args.extend_from_slice(&dimensions);
    let server = server.restart_with_args(&args).await;
    let engram = server.client().await;
    assert_eq!(pending_embeddings(&engram, &ns).await, MEMORIES as i64);
    fake.reply(Reply::Vectors);
    embedded(&engram, &ns).await;
    search_complete(&engram, &ns, "release checklist").await;

    let log = server.log();
    for line in [
        "embedding stored memories model=api:model-b:64",
        "stored memories embedded embedded=70 model=api:model-b:64",
    ] {
        assert!(log.contains(line), "{line:?} is not in the log:\n{log}");
    }
    // The new model was asked for, in batches of at most 64 inputs.
    let seen = fake.seen();
    let (before, after) = seen.split_at(before_the_change);
    assert!(before.iter().all(|r| r.body["model"] == "model-a"));
    assert!(after.iter().all(|r| r.body["model"] == "model-b"));
    assert!(after.iter().all(|r| r.body["dimensions"] == 64));
    let sizes: Vec<usize> = after.iter().map(|r| inputs(r).len()).collect();
    assert!(sizes.iter().all(|&n| n <= API_BATCH), "{sizes:?}");
    assert!(sizes.contains(&API_BATCH), "{sizes:?}");
    assert_key_kept_secret(&fake, &log);
}

/// Waits until exactly `count` memories of `ns` wait for their vector.
async fn pending_settles_at(engram: &Engram, ns: &proto::Scope, count: i64) {
    let deadline = Instant::now() + ASKED_TIMEOUT;
    loop {
        let pending = pending_embeddings(engram, ns).await;
        if pending == count {
            return;
        }
        assert!(Instant::now() < deadline, "{pending} pending, not {count}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_memory_the_api_refuses_holds_up_no_other() {
    const REFUSED: &str = "unembeddable: the API answers 400 for this memory";
    let fake = FakeEmbeddings::start(Reply::RefuseContaining("unembeddable".into())).await;
    let server = start(&fake, MODEL, &[]).await;
    let engram = server.client().await;
    let ns = scope("embedder-refuses");
    let mut contents: Vec<String> = BEFORE.iter().map(|c| (*c).to_owned()).collect();
    contents.insert(1, REFUSED.to_owned());
    batch_create(&engram, &ns, &contents).await;

    // Everything else gets its vector; the refused memory waits, found by
    // its words.
    pending_settles_at(&engram, &ns, 1).await;
    let (misspelt, meant) = MISSPELT[0];
    assert_eq!(
        hit_contents(&search(&engram, &ns, misspelt).await)[0],
        meant
    );
    assert_eq!(
        hit_contents(&search(&engram, &ns, "unembeddable").await)[0],
        REFUSED
    );
    // What is written later is embedded too.
    create(&engram, &ns, input(MemoryType::Fact, DURING_BATCH[1])).await;
    pending_settles_at(&engram, &ns, 1).await;
    let (misspelt, meant) = MISSPELT[1];
    assert_eq!(
        hit_contents(&search(&engram, &ns, misspelt).await)[0],
        meant
    );
    assert!(
        server
            .log()
            .contains("the embedder refuses this memory's content"),
        "{}",
        server.log()
    );
}
