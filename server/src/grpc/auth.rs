//! API keys (`--auth-keys`): every call to the engram.v1 services must carry
//! `authorization: Bearer <key>` with a key from the server's key file.
//! Health and reflection stay open, so load balancers and grpcurl can still
//! check and discover the server.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use sha2::{Digest as _, Sha256};
use tonic::service::Interceptor;
use tonic::{Request, Status};

/// The accepted keys, kept as SHA-256 digests: a lookup compares digests, so
/// its timing says nothing about how much of a guessed key was right, and
/// the keys themselves are not kept in memory.
#[derive(Debug, Clone, Default)]
pub struct ApiKeys {
    digests: Option<Arc<HashSet<[u8; 32]>>>,
}

impl ApiKeys {
    /// No authentication: every call is let through.
    pub fn open() -> ApiKeys {
        ApiKeys::default()
    }

    /// The keys in the file at `path`: one per line; blank lines and lines
    /// starting with `#` are ignored. A file without a key is an error (it
    /// would lock every caller out).
    pub fn load(path: &Path) -> anyhow::Result<ApiKeys> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the API key file {}", path.display()))?;
        ApiKeys::parse(&text).with_context(|| format!("API key file {}", path.display()))
    }

    fn parse(text: &str) -> anyhow::Result<ApiKeys> {
        let digests: HashSet<[u8; 32]> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(digest)
            .collect();
        if digests.is_empty() {
            bail!("holds no key (one per line; # starts a comment)");
        }
        Ok(ApiKeys {
            digests: Some(Arc::new(digests)),
        })
    }

    /// How many keys are accepted (none when authentication is off).
    pub fn len(&self) -> usize {
        self.digests.as_ref().map_or(0, |digests| digests.len())
    }

    /// Whether authentication is off.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

impl Interceptor for ApiKeys {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(digests) = &self.digests else {
            return Ok(request);
        };
        let Some(header) = request.metadata().get("authorization") else {
            return Err(Status::unauthenticated(
                "missing API key: send the header `authorization: Bearer <key>`",
            ));
        };
        // The scheme is case-insensitive (RFC 7235).
        let key = header.to_str().ok().and_then(|value| {
            let (scheme, key) = value.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
        });
        match key {
            Some(key) if digests.contains(&digest(key)) => Ok(request),
            Some(_) => Err(Status::unauthenticated("unknown API key")),
            None => Err(Status::unauthenticated(
                "malformed authorization header: expected `Bearer <key>`",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Code;

    fn call(keys: &ApiKeys, authorization: Option<&str>) -> Result<(), Code> {
        let mut request = Request::new(());
        if let Some(value) = authorization {
            request
                .metadata_mut()
                .insert("authorization", value.parse().expect("ascii"));
        }
        keys.clone().call(request).map(drop).map_err(|s| s.code())
    }

    #[test]
    fn without_a_key_file_every_call_passes() {
        assert_eq!(call(&ApiKeys::open(), None), Ok(()));
        assert_eq!(call(&ApiKeys::open(), Some("Bearer anything")), Ok(()));
    }

    #[test]
    fn only_listed_keys_pass_as_bearer_tokens() {
        let keys = ApiKeys::parse("# staging agents\nalpha-key\n\n  beta-key  \n").expect("keys");
        assert_eq!(keys.len(), 2);
        assert_eq!(call(&keys, Some("Bearer alpha-key")), Ok(()));
        assert_eq!(call(&keys, Some("Bearer beta-key")), Ok(()));
        assert_eq!(call(&keys, Some("bearer beta-key")), Ok(()));
        for bad in [
            None,
            Some("Bearer gamma-key"),
            Some("alpha-key"),
            Some("Basic alpha-key"),
            Some("Bearer # staging agents"),
        ] {
            assert_eq!(call(&keys, bad), Err(Code::Unauthenticated), "{bad:?}");
        }
    }

    #[test]
    fn a_key_file_without_keys_is_refused() {
        assert!(ApiKeys::parse("# nothing yet\n\n").is_err());
    }
}
