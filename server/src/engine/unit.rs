//! Running a unit of work (see [`crate::store::tx`]) with its result's type,
//! and the idempotency rule every write with a request id follows.

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::domain::{Micros, RequestKey};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::store::tx::{Answer, DiskUse, RequestRecord, Tx};

/// Runs `work` in one transaction of `store` and returns what it returned.
/// `work` may run more than once (a backend retries a unit of work that
/// lost a conflict), so it clones what it needs from its captures.
pub async fn transact<T, F>(store: &dyn Store, work: F) -> Result<T>
where
    T: Send + 'static,
    F: for<'t> FnMut(&'t mut dyn Tx) -> BoxFuture<'t, Result<T>> + Send + 'static,
{
    run(store, work, DiskUse::Grows).await
}

/// Like [`transact`], for a unit of work that only deletes: it runs even
/// while the disk is full, so that space can be freed.
pub async fn transact_freeing<T, F>(store: &dyn Store, work: F) -> Result<T>
where
    T: Send + 'static,
    F: for<'t> FnMut(&'t mut dyn Tx) -> BoxFuture<'t, Result<T>> + Send + 'static,
{
    run(store, work, DiskUse::Frees).await
}

/// Runs `work`, which only reads, on one consistent snapshot of `store`.
pub async fn read<T, F>(store: &dyn Store, mut work: F) -> Result<T>
where
    T: Send + 'static,
    F: for<'t> FnMut(&'t mut dyn Tx) -> BoxFuture<'t, Result<T>> + Send + 'static,
{
    let answer = store
        .read(Box::new(move |tx| {
            let run = work(tx);
            Box::pin(async move { run.await.map(|value| Box::new(value) as Answer) })
        }))
        .await?;
    typed(answer)
}

fn typed<T: 'static>(answer: Answer) -> Result<T> {
    answer
        .downcast::<T>()
        .map(|value| *value)
        .map_err(|_| Error::Internal("a unit of work answered another type".into()))
}

async fn run<T, F>(store: &dyn Store, mut work: F, disk: DiskUse) -> Result<T>
where
    T: Send + 'static,
    F: for<'t> FnMut(&'t mut dyn Tx) -> BoxFuture<'t, Result<T>> + Send + 'static,
{
    let answer = store
        .transact(
            Box::new(move |tx| {
                let run = work(tx);
                Box::pin(async move { run.await.map(|value| Box::new(value) as Answer) })
            }),
            disk,
        )
        .await?;
    typed(answer)
}

/// With a request id: the first answer of a write with it, if one ran
/// (AIP-155). The same id bound to a different request is refused.
pub async fn replay<T: DeserializeOwned>(
    tx: &mut dyn Tx,
    namespace: &str,
    request: Option<&RequestKey>,
) -> Result<Option<T>> {
    let Some(request) = request else {
        return Ok(None);
    };
    let Some(first) = tx.request_record(namespace, &request.id).await? else {
        return Ok(None);
    };
    let answer = first_answer(first, request)?;
    serde_json::from_str(&answer)
        .map(Some)
        .map_err(|_| Error::Internal("corrupt create_requests row".into()))
}

/// The first answer recorded for `request`'s id (as JSON), if `request` is
/// the request the id was first used for.
///
/// Servers before fingerprints had a scheme stored an unversioned digest of
/// their own types, which cannot be recomputed; such an id (kept at most
/// `--request-id-ttl`) counts as the same request, so retries across the
/// upgrade get their first answer rather than an error.
pub fn first_answer(first: RequestRecord, request: &RequestKey) -> Result<String> {
    if first.fingerprint == request.fingerprint || RequestKey::unversioned(&first.fingerprint) {
        Ok(first.answer)
    } else {
        Err(Error::AlreadyExists(format!(
            "request_id {} was already used for a different request; use a new request_id",
            request.id
        )))
    }
}

/// With a request id: records `answer` as the write's first answer.
pub async fn remember<T: Serialize>(
    tx: &mut dyn Tx,
    namespace: &str,
    request: Option<&RequestKey>,
    answer: &T,
    now: Micros,
) -> Result<()> {
    let Some(request) = request else {
        return Ok(());
    };
    let answer =
        serde_json::to_string(answer).map_err(|e| Error::Internal(format!("snapshot: {e}")))?;
    tx.record_request(namespace, request, &answer, now).await
}
