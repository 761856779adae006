//! `overload`: the cost of overload protection on the hot path.

use crate::Rounds;
use crate::compare::{Side, compare};

/// The flags of `overload`'s server without a limit that counts: far more
/// calls in flight than the benchmark ever makes.
const LIMIT_OFF: &str = "1000000";

pub async fn overload_cost(config: &Rounds) -> anyhow::Result<()> {
    let binary = config.server_binary.as_deref();
    compare(
        config,
        "overload",
        [
            Side {
                label: "limit off",
                binary,
                args: &["--max-concurrent-calls", LIMIT_OFF],
                database: None,
            },
            Side {
                label: "default limit",
                binary,
                args: &[],
                database: None,
            },
        ],
    )
    .await?;
    Ok(())
}
