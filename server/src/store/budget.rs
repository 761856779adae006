//! Reading memories within a byte budget, for both backends: rows are
//! decoded as they arrive and reading stops once the memories read pass
//! the budget, so a page of large memories is never held whole in memory
//! only to be cut to the reply's size afterwards.

use futures_util::{Stream, TryStreamExt as _};

use crate::domain::Memory;
use crate::error::{Error, Result};

/// The memories of `rows`, each decoded by `decode`, until their text
/// passes `max_bytes` (the one that passes is kept: the text is a lower
/// bound of the encoded size, so a caller cutting the reply at `max_bytes`
/// encoded sees the page is full); all of them without a budget.
pub(crate) async fn memories_within<R, S>(
    rows: S,
    max_bytes: Option<usize>,
    decode: impl Fn(&R) -> Result<Memory>,
) -> Result<Vec<Memory>>
where
    S: Stream<Item = Result<R>>,
{
    let mut rows = std::pin::pin!(rows);
    let mut memories = Vec::new();
    let mut bytes = 0usize;
    while let Some(row) = rows.try_next().await? {
        let memory = decode(&row)?;
        bytes += memory.text_bytes();
        memories.push(memory);
        if max_bytes.is_some_and(|max| bytes > max) {
            break;
        }
    }
    Ok(memories)
}

/// A row stream's errors as the store's, by `db_error`.
pub(crate) fn rows_of<R>(
    rows: impl Stream<Item = std::result::Result<R, sqlx::Error>>,
    db_error: fn(sqlx::Error) -> Error,
) -> impl Stream<Item = Result<R>> {
    rows.map_err(db_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(content_bytes: usize) -> Memory {
        Memory {
            content: "x".repeat(content_bytes),
            ..Memory::plain(1, "ns", "")
        }
    }

    #[tokio::test]
    async fn reading_stops_once_the_budget_is_passed() {
        let rows = futures_util::stream::iter((0..100).map(|_| Ok(1000usize)));
        let read = memories_within(rows, Some(5_000), |&size| Ok(memory(size)))
            .await
            .expect("read");
        let each = memory(1000).text_bytes();
        assert_eq!(read.len(), 5_000 / each + 1, "up to the one that passes");
        let rows = futures_util::stream::iter((0..100).map(|_| Ok(1000usize)));
        let all = memories_within(rows, None, |&size| Ok(memory(size)))
            .await
            .expect("read");
        assert_eq!(all.len(), 100);
    }
}
