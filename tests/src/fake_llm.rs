//! A local OpenAI-compatible chat-completions server for tests: it records
//! every request it receives and answers as told — correctly, or
//! misbehaving on purpose (bad JSON, HTTP errors, slowness).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// How the fake answers the next requests.
#[derive(Debug, Clone)]
pub enum Reply {
    /// HTTP 200 with this JSON object as the assistant message's content.
    Content(serde_json::Value),
    /// HTTP 200 with this raw text as the assistant message's content.
    RawContent(String),
    /// HTTP 200 whose body itself is not JSON.
    NotJsonBody,
    /// This HTTP status with a short error body.
    Status(u16),
    /// Wait this long, then answer with this content.
    Slow(Duration, serde_json::Value),
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub body: serde_json::Value,
}

#[derive(Debug)]
struct State {
    reply: Reply,
    seen: Vec<Seen>,
}

/// The running fake; it stops with the test's runtime.
pub struct FakeLlm {
    /// e.g. `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    state: Arc<Mutex<State>>,
}

impl FakeLlm {
    /// Starts the fake on an ephemeral port, answering with `reply`.
    pub async fn start(reply: Reply) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake LLM");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let state = Arc::new(Mutex::new(State {
            reply,
            seen: Vec::new(),
        }));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        FakeLlm { base_url, state }
    }

    /// Answers the next requests with `reply`.
    pub fn reply(&self, reply: Reply) {
        self.state.lock().expect("fake LLM state").reply = reply;
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().expect("fake LLM state").seen.clone()
    }
}

async fn serve(mut stream: TcpStream, state: Arc<Mutex<State>>) {
    let Some(seen) = read_request(&mut stream).await else {
        return;
    };
    let reply = {
        let mut state = state.lock().expect("fake LLM state");
        state.seen.push(seen);
        state.reply.clone()
    };
    let completion = |content: String| {
        serde_json::json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        })
        .to_string()
    };
    let (status, body) = match reply {
        Reply::Content(value) => (200, completion(value.to_string())),
        Reply::RawContent(text) => (200, completion(text)),
        Reply::NotJsonBody => (200, "<html>this is not JSON</html>".to_owned()),
        Reply::Status(status) => (
            status,
            r#"{"error": {"message": "upstream failure"}}"#.to_owned(),
        ),
        Reply::Slow(delay, value) => {
            tokio::time::sleep(delay).await;
            (200, completion(value.to_string()))
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
