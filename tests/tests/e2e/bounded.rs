//! Bounded requests and responses, over the real server: after storing the
//! largest records the API accepts, every RPC answers within the 4 MiB a
//! default gRPC client accepts (the raw generated stubs here keep tonic's
//! default limit), pages of every kind still lead to every record, a small
//! request never buys a huge answer, a request that is not protobuf is
//! INVALID_ARGUMENT and one above --max-request-size OUT_OF_RANGE.

use std::collections::BTreeMap;

use bytes::{Buf as _, BufMut as _};
use engram_client::Code;
use engram_client::proto::learning_service_client::LearningServiceClient;
use engram_client::proto::memory_service_client::MemoryServiceClient;
use engram_client::proto::policy_service_client::PolicyServiceClient;
use engram_client::proto::{self, MemoryType};
use engram_tests::{Server, scope};
use prost::Message as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;

/// What a gRPC client accepts by default.
const DEFAULT_CLIENT_LIMIT: usize = 4 * 1024 * 1024;
/// A four-byte character, so texts at their character limits are as large
/// in bytes as they can be.
const WIDE: char = '𝄞';

fn wide(chars: usize) -> String {
    std::iter::repeat_n(WIDE, chars).collect()
}

/// A memory at every limit: 64 KiB of content, 1,000-character summary, 32
/// tags of 64 characters, 64 metadata entries of 128/1,024 characters.
fn largest_memory(n: usize) -> proto::MemoryInput {
    let mut content = format!("largest memory {n} needle ");
    content.push_str(&"x".repeat(64 * 1024 - content.len()));
    proto::MemoryInput {
        memory_type: MemoryType::Fact.into(),
        content,
        summary: wide(1000),
        tags: (0..32).map(|t| format!("{t:02}{}", wide(62))).collect(),
        metadata: (0..64)
            .map(|k| (format!("{k:02}{}", wide(126)), wide(1024)))
            .collect(),
        ..Default::default()
    }
}

/// A step at every limit (about 97 KB).
fn largest_step(number: i32) -> proto::Step {
    let parameters = format!("{{\"p\":\"{}\"}}", "y".repeat(64 * 1024 - 8));
    proto::Step {
        step_number: number,
        tool: wide(256),
        action: wide(4096),
        parameters,
        output: "z".repeat(16 * 1024),
        ..Default::default()
    }
}

/// Keeps the largest response size seen of each RPC.
fn note(sizes: &mut BTreeMap<&'static str, usize>, rpc: &'static str, size: usize) {
    let largest = sizes.entry(rpc).or_default();
    *largest = (*largest).max(size);
}

struct Stubs {
    memory: MemoryServiceClient<Channel>,
    learning: LearningServiceClient<Channel>,
    policy: PolicyServiceClient<Channel>,
}

impl Stubs {
    /// The generated stubs as they come: a 4 MiB receive limit. Sending is
    /// unlimited, so the setup can send requests up to the server's limit.
    fn new(channel: Channel) -> Stubs {
        Stubs {
            memory: MemoryServiceClient::new(channel.clone()),
            learning: LearningServiceClient::new(channel.clone()),
            policy: PolicyServiceClient::new(channel),
        }
    }
}

#[tokio::test]
async fn every_rpc_answers_a_default_client_after_the_largest_records() {
    let server = Server::start().await;
    let channel = server.client().await.channel();
    let mut stubs = Stubs::new(channel);
    let ns = "largest";
    let agent = || Some(scope(ns).with_agent("agent-1"));

    // 60 memories of ~370 KB: 22 MB, in batches under the 8 MiB request limit.
    for batch in 0..6 {
        let memories: Vec<_> = (0..10).map(|i| largest_memory(batch * 10 + i)).collect();
        let request = proto::BatchCreateMemoriesRequest {
            scope: Some(scope(ns)),
            memories,
            ..Default::default()
        };
        assert!(request.encoded_len() < 8 * 1024 * 1024);
        stubs
            .memory
            .batch_create_memories(request)
            .await
            .expect("batch of the largest memories");
    }
    // An episode of 320 of the largest steps (31 MB) and 110 episodes with
    // the largest descriptions (44 KB each).
    let start = |description: String| proto::StartEpisodeRequest {
        scope: agent(),
        task_id: "largest-task".into(),
        description,
        ..Default::default()
    };
    let episode = stubs
        .memory
        .start_episode(start("long run".into()))
        .await
        .expect("start")
        .into_inner();
    for first in (1..=320).step_by(40) {
        let request = proto::AppendStepsRequest {
            scope: agent(),
            episode_id: episode.id.clone(),
            steps: (first..first + 40).map(largest_step).collect(),
        };
        stubs.memory.append_steps(request).await.expect("append");
    }
    for _ in 0..110 {
        stubs
            .memory
            .start_episode(start(wide(10_000)))
            .await
            .expect("start a described episode");
    }
    // 110 outcomes with the largest texts (44 KB each).
    for n in 0..110 {
        let request = proto::RecordOutcomeRequest {
            scope: agent(),
            task: format!("{n} {}", wide(990)),
            task_type: "largest".into(),
            success: n % 2 == 0,
            strategy: format!("strategy {n} {}", wide(1980)),
            error: if n % 2 == 0 {
                String::new()
            } else {
                wide(4000)
            },
            feedback: wide(4000),
            ..Default::default()
        };
        stubs
            .learning
            .record_outcome(request)
            .await
            .expect("outcome");
    }

    // Every read, at its largest page, fits the default limit: a response
    // above it would fail to decode here with OUT_OF_RANGE.
    let mut sizes: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut listed = 0;
    let mut token = String::new();
    loop {
        let page = stubs
            .memory
            .list_memories(proto::ListMemoriesRequest {
                scope: Some(scope(ns)),
                page_size: 1000,
                page_token: token,
                ..Default::default()
            })
            .await
            .expect("list memories")
            .into_inner();
        note(&mut sizes, "ListMemories", page.encoded_len());
        listed += page.memories.len();
        token = page.next_page_token;
        if token.is_empty() {
            break;
        }
        assert!(page.memories.len() < 60, "a page of 22 MB must be cut");
    }
    assert_eq!(listed, 60, "short pages still lead to every memory");

    let search = stubs
        .memory
        .search_memories(proto::SearchMemoriesRequest {
            scope: Some(scope(ns)),
            query: "largest memory needle".into(),
            limit: 100,
            ..Default::default()
        })
        .await
        .expect("search")
        .into_inner();
    assert!(search.truncated, "60 hits of 370 KB cannot all be sent");
    assert!(!search.hits.is_empty() && search.hits.len() < 60);
    note(&mut sizes, "SearchMemories", search.encoded_len());

    let context = stubs
        .memory
        .build_context(proto::BuildContextRequest {
            scope: agent(),
            task_id: "largest-task".into(),
            query: "largest memory needle".into(),
            token_budget: 32_768,
            ..Default::default()
        })
        .await
        .expect("context")
        .into_inner();
    note(&mut sizes, "BuildContext", context.encoded_len());

    let mut steps = Vec::new();
    let mut token = String::new();
    loop {
        let page = stubs
            .memory
            .get_episode(proto::GetEpisodeRequest {
                scope: agent(),
                id: episode.id.clone(),
                step_page_token: token,
                ..Default::default()
            })
            .await
            .expect("get episode")
            .into_inner();
        note(&mut sizes, "GetEpisode", page.encoded_len());
        assert_eq!(page.last_step_number, 320);
        steps.extend(page.steps.iter().map(|s| s.step_number));
        token = page.next_step_page_token;
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(
        steps,
        (1..=320).collect::<Vec<_>>(),
        "every step, in order, once"
    );

    let mut episodes = 0;
    let mut token = String::new();
    loop {
        let page = stubs
            .memory
            .list_episodes(proto::ListEpisodesRequest {
                scope: agent(),
                page_size: 1000,
                page_token: token,
                ..Default::default()
            })
            .await
            .expect("list episodes")
            .into_inner();
        note(&mut sizes, "ListEpisodes", page.encoded_len());
        episodes += page.episodes.len();
        token = page.next_page_token;
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(episodes, 111);

    let mut outcomes = 0;
    let mut token = String::new();
    loop {
        let page = stubs
            .learning
            .list_outcomes(proto::ListOutcomesRequest {
                scope: agent(),
                page_size: 1000,
                page_token: token,
                ..Default::default()
            })
            .await
            .expect("list outcomes")
            .into_inner();
        note(&mut sizes, "ListOutcomes", page.encoded_len());
        outcomes += page.outcomes.len();
        token = page.next_page_token;
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(outcomes, 110);

    let heuristics = stubs
        .learning
        .list_heuristics(proto::ListHeuristicsRequest {
            scope: agent(),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("heuristics")
        .into_inner();
    note(&mut sizes, "ListHeuristics", heuristics.encoded_len());
    let anti_patterns = stubs
        .learning
        .list_anti_patterns(proto::ListAntiPatternsRequest {
            scope: agent(),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("anti-patterns")
        .into_inner();
    note(&mut sizes, "ListAntiPatterns", anti_patterns.encoded_len());
    let stats = stubs
        .learning
        .get_stats(proto::GetStatsRequest { scope: agent() })
        .await
        .expect("stats")
        .into_inner();
    assert_eq!(stats.outcomes, 110);
    note(&mut sizes, "GetStats", stats.encoded_len());
    let classified = stubs
        .policy
        .classify(proto::ClassifyRequest {
            scope: agent(),
            transcript: format!("user: remember {}", "w".repeat(60_000)),
            ..Default::default()
        })
        .await
        .expect("classify")
        .into_inner();
    note(&mut sizes, "Classify", classified.encoded_len());

    for (rpc, size) in &sizes {
        assert!(*size < DEFAULT_CLIENT_LIMIT, "{rpc}: {size} bytes");
    }
    for rpc in [
        "ListMemories",
        "SearchMemories",
        "GetEpisode",
        "ListEpisodes",
        "ListOutcomes",
    ] {
        assert!(sizes[rpc] > 2 * 1024 * 1024, "pages are filled: {sizes:?}");
    }
}

#[tokio::test]
async fn a_stream_of_steps_with_a_huge_episode_id_gets_a_small_answer() {
    let server = Server::start().await;
    let mut memory = MemoryServiceClient::new(server.client().await.channel());
    let message = proto::StreamStepsRequest {
        scope: Some(scope("echo")),
        episode_id: "e".repeat(3_000_000),
        steps: (1..=100)
            .map(|n| proto::Step {
                step_number: n,
                tool: "t".into(),
                action: "a".into(),
                ..Default::default()
            })
            .collect(),
    };
    let sent = message.encoded_len();
    let answer = memory
        .stream_steps(futures_util::stream::iter([message]))
        .await
        .expect("stream")
        .into_inner();
    assert_eq!((answer.accepted, answer.rejected), (0, 100));
    let received = answer.encoded_len();
    assert!(
        received * 100 < sent,
        "a {sent}-byte request got a {received}-byte answer"
    );
}

/// Sends raw bytes as a request and reads the answer's bytes: a client that
/// gets protobuf wrong.
#[derive(Clone, Default)]
struct RawBytes;

impl Codec for RawBytes {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawBytes;
    type Decoder = RawBytes;

    fn encoder(&mut self) -> RawBytes {
        RawBytes
    }

    fn decoder(&mut self) -> RawBytes {
        RawBytes
    }
}

impl Encoder for RawBytes {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawBytes {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        Ok(Some(src.copy_to_bytes(src.remaining()).to_vec()))
    }
}

async fn raw_call(channel: Channel, path: &'static str, body: Vec<u8>) -> tonic::Status {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("ready");
    grpc.unary(
        tonic::Request::new(body),
        http::uri::PathAndQuery::from_static(path),
        RawBytes,
    )
    .await
    .expect_err("the server must refuse the bytes")
}

#[tokio::test]
async fn bytes_that_are_not_a_request_are_invalid_argument_and_change_nothing() {
    let server = Server::start().await;
    let engram = server.client().await;
    // A varint that never ends, and a content string that is not UTF-8.
    let garbage = vec![
        0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    ];
    let mut not_utf8 = proto::CreateMemoryRequest {
        scope: Some(scope("raw")),
        memory: Some(proto::MemoryInput {
            memory_type: MemoryType::Fact.into(),
            content: "PLACEHOLDER".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec();
    let at = not_utf8
        .windows(11)
        .position(|w| w == b"PLACEHOLDER")
        .expect("content bytes");
    not_utf8[at] = 0xc3; // a UTF-8 lead byte followed by ASCII
    for body in [garbage, not_utf8] {
        let status = raw_call(
            engram.channel(),
            "/engram.v1.MemoryService/CreateMemory",
            body,
        )
        .await;
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains("cannot be decoded"), "{status:?}");
    }
    let listed = engram
        .memory()
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(scope("raw")),
            ..Default::default()
        })
        .await
        .expect("list");
    assert!(listed.memories.is_empty(), "{listed:?}");
}

#[tokio::test]
async fn a_request_above_the_size_limit_is_out_of_range_before_any_work() {
    let server = Server::start_with_args(&["--max-request-size", "1MiB"]).await;
    let mut memory = MemoryServiceClient::new(server.client().await.channel());
    let batch = |count: usize| proto::BatchCreateMemoriesRequest {
        scope: Some(scope("sized")),
        memories: (0..count)
            .map(|n| proto::MemoryInput {
                memory_type: MemoryType::Fact.into(),
                content: format!("{n} {}", "s".repeat(60 * 1024)),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let refused = memory
        .batch_create_memories(batch(20))
        .await
        .expect_err("1.2 MB over a 1 MiB limit");
    assert_eq!(refused.code(), Code::OutOfRange, "{refused:?}");
    memory
        .batch_create_memories(batch(10))
        .await
        .expect("600 KB fits");
    let listed = memory
        .list_memories(proto::ListMemoriesRequest {
            scope: Some(scope("sized")),
            page_size: 100,
            ..Default::default()
        })
        .await
        .expect("list")
        .into_inner();
    assert_eq!(listed.memories.len(), 10, "nothing of the refused batch");
}
