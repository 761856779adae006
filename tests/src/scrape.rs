//! Reading a server's Prometheus metrics: a plain HTTP/1.1 GET over a
//! socket, and a parser of the text exposition format (samples only; the
//! `# HELP`, `# TYPE` and `# EOF` lines are checked for shape and skipped).

use std::collections::BTreeMap;

use anyhow::{Context as _, bail};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// An HTTP response: its status code, headers (names lower-cased) and body.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

/// `GET path` from `address` (`host:port`), read to the end.
pub async fn http_get(address: &str, path: &str) -> anyhow::Result<HttpResponse> {
    let mut stream = TcpStream::connect(address)
        .await
        .with_context(|| format!("connect to {address}"))?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let raw = String::from_utf8(raw).context("the response is not UTF-8")?;
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .context("no end of the response's headers")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("bad status line {status_line:?}"))?;
    let headers: BTreeMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    if headers
        .get("transfer-encoding")
        .is_some_and(|te| te.contains("chunked"))
    {
        bail!("chunked responses are not read here");
    }
    if let Some(length) = headers.get("content-length") {
        let length: usize = length.parse().context("content-length")?;
        if length != body.len() {
            bail!("content-length {length}, but {} bytes of body", body.len());
        }
    }
    Ok(HttpResponse {
        status,
        headers,
        body: body.to_owned(),
    })
}

/// One sample: a metric name, its labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Every sample of a scrape.
#[derive(Debug, Clone, Default)]
pub struct Scrape {
    pub samples: Vec<Sample>,
}

impl Scrape {
    /// Parses an exposition in the text format.
    pub fn parse(text: &str) -> anyhow::Result<Scrape> {
        let mut samples = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            if let Some(comment) = line.strip_prefix('#') {
                let comment = comment.trim_start();
                if !(comment.starts_with("HELP ")
                    || comment.starts_with("TYPE ")
                    || comment.starts_with("UNIT ")
                    || comment == "EOF")
                {
                    bail!("line {}: unexpected comment {line:?}", number + 1);
                }
                continue;
            }
            samples.push(sample(line).with_context(|| format!("line {}: {line:?}", number + 1))?);
        }
        Ok(Scrape { samples })
    }

    /// The value of the sample `name` with exactly `labels`, if there is one.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.samples
            .iter()
            .find(|s| s.name == name && s.labels == labels)
            .map(|s| s.value)
    }

    /// The value of `name` with exactly `labels`; panics if it is missing.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels)
            .unwrap_or_else(|| panic!("no sample {name} {labels:?}"))
    }

    /// The samples named `name`.
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples.iter().filter(move |s| s.name == name)
    }
}

/// `name{label="value",…} value [timestamp]`.
fn sample(line: &str) -> anyhow::Result<Sample> {
    let name_end = line.find(['{', ' ']).context("no value")?;
    let name = &line[..name_end];
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    {
        bail!("bad metric name {name:?}");
    }
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(inside) = rest.strip_prefix('{') {
        let (parsed, after) = label_set(inside)?;
        labels = parsed;
        rest = after;
    }
    let value = rest
        .split_whitespace()
        .next()
        .context("no value after the labels")?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        number => number
            .parse()
            .with_context(|| format!("bad value {number:?}"))?,
    };
    Ok(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// The labels of `text` (just after the `{`), and what follows the `}`.
fn label_set(mut text: &str) -> anyhow::Result<(BTreeMap<String, String>, &str)> {
    let mut labels = BTreeMap::new();
    loop {
        text = text.trim_start_matches(',');
        if let Some(after) = text.strip_prefix('}') {
            return Ok((labels, after));
        }
        let (key, after) = text.split_once("=\"").context("a label without a value")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                None => bail!("a label value without its closing quote"),
                Some((at, '"')) => break at,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, escaped @ ('\\' | '"'))) => value.push(escaped),
                    other => bail!("bad escape {other:?} in a label value"),
                },
                Some((_, c)) => value.push(c),
            }
        };
        if labels.insert(key.to_owned(), value).is_some() {
            bail!("label {key} twice");
        }
        text = &after[end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_read_with_their_labels_escapes_and_values() {
        let scrape = Scrape::parse(
            "# HELP a_total Calls.\n# TYPE a counter\n\
             a_total{kind=\"x\",note=\"say \\\"hi\\\"\\n\\\\\"} 3\n\
             b_bucket{le=\"+Inf\"} 7\nc 1.5e3\n# EOF\n",
        )
        .expect("parse");
        assert_eq!(
            scrape.get("a_total", &[("kind", "x"), ("note", "say \"hi\"\n\\")]),
            Some(3.0)
        );
        assert_eq!(scrape.get("b_bucket", &[("le", "+Inf")]), Some(7.0));
        assert_eq!(scrape.get("c", &[]), Some(1500.0));
        assert_eq!(
            scrape.get("a_total", &[("kind", "x")]),
            None,
            "exact labels"
        );
    }

    #[test]
    fn malformed_lines_are_refused() {
        for bad in [
            "a{kind=\"x\" 1",
            "a{kind=x} 1",
            "a",
            "a one",
            "# something else",
            "a{k=\"v\",k=\"w\"} 1",
        ] {
            assert!(Scrape::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
