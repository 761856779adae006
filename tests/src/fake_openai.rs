//! What the fake OpenAI-compatible APIs share: a local HTTP/1.1 server on an
//! ephemeral port that records every request it receives and answers as its
//! current reply says — correctly, or misbehaving on purpose. The replies of
//! each API are in [`crate::fake_llm`] and [`crate::fake_embeddings`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// How one fake API answers a request; switched at run time with
/// [`FakeApi::reply`].
pub trait Respond: Send + 'static {
    /// The answer to `request`.
    fn answer(&self, request: &Seen) -> Answer;
}

/// What the fake sends back for one request.
#[derive(Debug)]
pub enum Answer {
    /// This HTTP status and body (labelled JSON, whether it is or not).
    Body(u16, String),
    /// This HTTP status with a short OpenAI-style error body.
    Error(u16),
    /// HTTP 200 with a body that is not JSON (an HTML page, as a proxy in
    /// the way would send).
    NotJson,
    /// Nothing: the connection is closed without a reply.
    Hangup,
    /// Waits this long, then answers.
    Later(Duration, Box<Answer>),
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    /// The JSON body (`null` when it was not JSON).
    pub body: serde_json::Value,
}

#[derive(Debug)]
struct State<R> {
    reply: R,
    seen: Vec<Seen>,
    /// Requests being answered now, and the most there ever were at once.
    in_flight: usize,
    peak_in_flight: usize,
}

/// A running fake API; it stops with the test's runtime.
pub struct FakeApi<R> {
    /// e.g. `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    state: Arc<Mutex<State<R>>>,
}

impl<R: Respond> FakeApi<R> {
    /// Starts the fake on an ephemeral port, answering with `reply`.
    pub async fn start(reply: R) -> FakeApi<R> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake API");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let state = Arc::new(Mutex::new(State {
            reply,
            seen: Vec::new(),
            in_flight: 0,
            peak_in_flight: 0,
        }));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        FakeApi { base_url, state }
    }

    /// Answers the next requests with `reply`.
    pub fn reply(&self, reply: R) {
        self.lock().reply = reply;
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.lock().seen.clone()
    }

    /// The most requests that were being answered at the same time.
    pub fn peak_in_flight(&self) -> usize {
        self.lock().peak_in_flight
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<R>> {
        self.state.lock().expect("fake API state")
    }
}

async fn serve<R: Respond>(mut stream: TcpStream, state: Arc<Mutex<State<R>>>) {
    let Some(seen) = read_request(&mut stream).await else {
        return;
    };
    let answer = {
        let mut state = state.lock().expect("fake API state");
        let answer = state.reply.answer(&seen);
        state.seen.push(seen);
        state.in_flight += 1;
        state.peak_in_flight = state.peak_in_flight.max(state.in_flight);
        answer
    };
    answer_with(&mut stream, answer).await;
    state.lock().expect("fake API state").in_flight -= 1;
}

/// Sends `answer` (after its delays), or nothing for a hang-up.
async fn answer_with(stream: &mut TcpStream, mut answer: Answer) {
    let (status, body) = loop {
        match answer {
            Answer::Body(status, body) => break (status, body),
            Answer::Error(status) => {
                break (
                    status,
                    r#"{"error": {"message": "upstream failure"}}"#.to_owned(),
                );
            }
            Answer::NotJson => break (200, "<html>this is not JSON</html>".to_owned()),
            Answer::Hangup => return,
            Answer::Later(delay, then) => {
                tokio::time::sleep(delay).await;
                answer = *then;
            }
        }
    };
    let response = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Reads one HTTP/1.1 request (headers and a content-length body).
async fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).to_string();
    let mut lines = head.lines();
    let mut request_line = lines.next()?.split_whitespace();
    let (method, path) = (
        request_line.next()?.to_owned(),
        request_line.next()?.to_owned(),
    );
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            })
            .map(|(_, v)| v.trim().to_owned())
    };
    let length: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buffer[header_end..header_end + length])
        .unwrap_or(serde_json::Value::Null);
    Some(Seen {
        method,
        path,
        authorization: header("authorization"),
        body,
    })
}
