//! Deterministic synthetic text for the memories and queries of the benches.

/// The commonest words of synthetic memories.
const WORDS: &[&str] = &[
    "deploy",
    "database",
    "migration",
    "timeout",
    "retry",
    "cache",
    "user",
    "prefers",
    "dark",
    "mode",
    "billing",
    "invoice",
    "payment",
    "gateway",
    "latency",
    "queue",
    "worker",
    "kafka",
    "postgres",
    "redis",
    "index",
    "query",
    "schema",
    "backup",
    "restore",
    "token",
    "session",
    "login",
    "password",
    "oauth",
    "webhook",
    "endpoint",
    "api",
    "client",
    "server",
    "region",
    "cluster",
    "node",
    "pod",
    "container",
    "image",
    "build",
    "pipeline",
    "test",
    "flaky",
    "lint",
    "format",
    "review",
    "merge",
    "branch",
    "release",
    "version",
    "rollback",
    "incident",
    "alert",
    "metric",
    "dashboard",
    "log",
    "trace",
    "span",
    "error",
    "warning",
    "panic",
    "crash",
    "memory",
    "leak",
    "cpu",
    "disk",
    "network",
    "dns",
    "tls",
    "certificate",
    "proxy",
    "load",
    "balancer",
    "shard",
    "replica",
    "leader",
    "follower",
    "consensus",
    "raft",
    "lock",
    "mutex",
    "thread",
    "async",
    "future",
    "stream",
    "batch",
    "commit",
    "transaction",
    "isolation",
    "snapshot",
    "vacuum",
    "analyze",
    "plan",
    "join",
    "filter",
    "sort",
    "limit",
    "offset",
    "page",
    "cursor",
    "customer",
    "order",
    "cart",
    "checkout",
    "refund",
    "shipping",
    "address",
    "email",
    "notification",
    "template",
    "locale",
    "timezone",
    "currency",
    "tax",
    "report",
    "export",
    "import",
    "csv",
    "json",
    "yaml",
    "config",
    "flag",
    "feature",
    "experiment",
    "rollout",
    "canary",
    "staging",
    "production",
];

/// How many distinct words synthetic text draws from.
const VOCABULARY: usize = 5_000;
/// Syllables that generated words are made of.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ra", "tu", "shi", "ven", "dor", "pel", "qui", "zan", "bri", "sto", "gle",
    "fan", "wu",
];

/// Deterministic synthetic text with a Zipf word distribution (the r-th
/// commonest word has frequency ∝ 1/r), like natural language: a few words
/// are everywhere, most are rare. The domain words above are the commonest.
pub struct Text {
    state: u64,
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Text {
    pub fn new(seed: u64) -> Text {
        let words: Vec<String> = (0..VOCABULARY)
            .map(|rank| match WORDS.get(rank) {
                Some(word) => (*word).to_owned(),
                None => {
                    let (mut n, mut word) = (rank, String::new());
                    while n > 0 || word.is_empty() {
                        word.push_str(SYLLABLES[n % SYLLABLES.len()]);
                        n /= SYLLABLES.len();
                    }
                    word
                }
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Text {
            state: seed.max(1),
            words,
            cumulative,
        }
    }

    /// xorshift64*: fast, deterministic, good enough for test data.
    fn next_unit(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn word(&mut self) -> &str {
        let target = self.next_unit() * self.cumulative[VOCABULARY - 1];
        let rank = self
            .cumulative
            .partition_point(|&c| c < target)
            .min(VOCABULARY - 1);
        &self.words[rank]
    }

    pub fn sentence(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| self.word().to_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Queries of 2–4 words, none asked before in the run: a server keeps the
/// vectors of the queries it embedded recently, so a repeated query would
/// measure that cache rather than embedding the query.
pub struct Queries {
    text: Text,
    asked: std::collections::HashSet<String>,
}

impl Queries {
    pub fn new(seed: u64) -> Queries {
        Queries {
            text: Text::new(seed),
            asked: Default::default(),
        }
    }

    /// `n` queries never asked before.
    pub fn fresh(&mut self, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                loop {
                    let query = self.text.sentence(2 + i % 3);
                    if self.asked.insert(query.clone()) {
                        break query;
                    }
                }
            })
            .collect()
    }
}
