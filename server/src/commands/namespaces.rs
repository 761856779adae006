//! Which namespaces an export, an import or a migration works on.

/// Which namespaces a command works on: every one, or those named — a name
/// ending in `*` names every namespace that starts with what precedes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespaces {
    patterns: Vec<String>,
}

impl Namespaces {
    /// Namespaces named by `patterns` (every one when there are none).
    pub fn new(patterns: Vec<String>) -> Namespaces {
        Namespaces { patterns }
    }

    /// Whether `namespace` is one of them.
    pub fn includes(&self, namespace: &str) -> bool {
        self.patterns.is_empty()
            || self
                .patterns
                .iter()
                .any(|pattern| match pattern.strip_suffix('*') {
                    Some(prefix) => namespace.starts_with(prefix),
                    None => namespace == pattern,
                })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_are_named_or_prefixed() {
        let all = Namespaces::default();
        assert!(all.includes("anything"));
        let some = Namespaces::new(vec!["prod".into(), "team-*".into()]);
        assert!(some.includes("prod"));
        assert!(!some.includes("production"));
        assert!(some.includes("team-a"));
        assert!(some.includes("team-"));
        assert!(!some.includes("teams"));
    }
}
