//! What the commands print: short text for people, or the whole response as
//! JSON (the protobuf JSON mapping, as grpcurl and other languages print it).

use std::cell::RefCell;
use std::fmt::Write as _;
use std::sync::OnceLock;

use engram_client::proto;
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};

/// Appends a line to the output.
macro_rules! say {
    ($out:expr) => {
        $out.text.borrow_mut().push('\n')
    };
    ($out:expr, $($arg:tt)*) => {{
        let mut text = $out.text.borrow_mut();
        let _ = writeln!(text, $($arg)*);
    }};
}

/// How results are printed. They are collected and written at the end, so
/// that a reader who stops early (`engram list | head -1`) is no error.
pub struct Output {
    json: bool,
    text: RefCell<String>,
}

impl Output {
    pub fn new(json: bool) -> Output {
        Output {
            json,
            text: RefCell::new(String::new()),
        }
    }

    /// What the command printed.
    pub fn into_text(self) -> String {
        self.text.into_inner()
    }

    /// Prints `message` as JSON and returns true, in `--json` mode.
    fn as_json<M: prost::Name>(&self, message: &M) -> bool {
        if self.json {
            let json = to_json(message);
            say!(self, "{json}");
        }
        self.json
    }

    pub fn remembered(&self, response: &proto::RememberResponse) {
        if self.as_json(response) {
            return;
        }
        let decision = response.decision.clone().unwrap_or_default();
        match &response.memory {
            Some(memory) => {
                let verb = match response.result() {
                    proto::WriteResult::Merged => "merged into",
                    _ => "stored",
                };
                say!(
                    self,
                    "{verb} {} {} (importance {:.2}, {}): {}",
                    enum_label(memory.memory_type().as_str_name()),
                    memory.id,
                    memory.importance,
                    enum_label(memory.level().as_str_name()),
                    memory.content
                );
            }
            None => say!(self, "not stored: {}", decision.reason),
        }
    }

    pub fn classified(&self, response: &proto::ClassifyResponse) {
        if self.as_json(response) {
            return;
        }
        let decision = response.decision.clone().unwrap_or_default();
        if decision.should_store {
            say!(
                self,
                "worth remembering as {} (importance {:.2}, {}): {}",
                enum_label(decision.memory_type().as_str_name()),
                decision.importance,
                enum_label(decision.level().as_str_name()),
                decision.summary
            );
        } else {
            say!(self, "not worth remembering");
        }
        say!(
            self,
            "decided by {}: {}",
            enum_label(decision.source().as_str_name()),
            decision.reason
        );
    }

    pub fn created(&self, response: &proto::CreateMemoryResponse) {
        if self.as_json(response) {
            return;
        }
        let memory = response.memory.clone().unwrap_or_default();
        let verb = match response.result() {
            proto::WriteResult::Merged => "merged into",
            _ => "created",
        };
        say!(self, "{verb} {}", memory.id);
        for id in &response.invalidated_memory_ids {
            say!(self, "invalidated {id} (contradicted: no longer true)");
        }
        for id in &response.conflicting_memory_ids {
            say!(self, "conflicts with {id} (both kept true)");
        }
        if response.result() != proto::WriteResult::Merged {
            for id in &response.near_duplicate_memory_ids {
                say!(self, "near-duplicate of {id} (linked)");
            }
        }
    }

    pub fn hits(&self, response: &proto::SearchMemoriesResponse) {
        if self.as_json(response) {
            return;
        }
        if response.hits.is_empty() {
            // On standard error, so a pipe gets only results.
            eprintln!("no memories match");
        }
        for hit in &response.hits {
            let memory = hit.memory.clone().unwrap_or_default();
            say!(self, "{:.3}  {}", hit.score, memory_line(&memory));
        }
    }

    pub fn context(&self, response: &proto::BuildContextResponse) {
        if self.as_json(response) {
            return;
        }
        if response.text.is_empty() {
            eprintln!("nothing to put in the context");
            return;
        }
        self.text.borrow_mut().push_str(&response.text);
        if !response.text.ends_with('\n') {
            say!(self);
        }
    }

    pub fn memory(&self, memory: &proto::Memory) {
        if self.as_json(memory) {
            return;
        }
        let fields = [
            ("id", memory.id.clone()),
            ("type", enum_label(memory.memory_type().as_str_name())),
            ("level", enum_label(memory.level().as_str_name())),
            ("content", memory.content.clone()),
            ("summary", memory.summary.clone()),
            ("tags", memory.tags.join(", ")),
            ("importance", format!("{:.2}", memory.importance)),
            ("confidence", format!("{:.2}", memory.confidence)),
            ("seen", memory.seen_count.to_string()),
            ("accessed", memory.access_count.to_string()),
            ("occurred", timestamp(memory.occurred_at.as_ref())),
            ("created", timestamp(memory.create_time.as_ref())),
            ("updated", timestamp(memory.update_time.as_ref())),
            ("expires", timestamp(memory.expire_time.as_ref())),
            ("etag", memory.etag.clone()),
        ];
        for (name, value) in fields {
            if !value.is_empty() {
                say!(self, "{:<11} {value}", format!("{name}:"));
            }
        }
        for link in &memory.links {
            let kind = enum_label(link.kind().as_str_name());
            say!(
                self,
                "{:<11} {kind} {} ({})",
                "link:",
                link.memory_id,
                link.reason
            );
        }
    }

    pub fn memories(&self, response: &proto::ListMemoriesResponse) {
        if self.as_json(response) {
            return;
        }
        if response.memories.is_empty() {
            eprintln!("no memories");
        }
        for memory in &response.memories {
            say!(self, "{}", memory_line(memory));
        }
        if !response.next_page_token.is_empty() {
            // On standard error, so a pipe gets only the memories.
            eprintln!("more: --page-token {}", response.next_page_token);
        }
    }

    pub fn entities(&self, response: &proto::ListEntitiesResponse) {
        if self.as_json(response) {
            return;
        }
        if response.entities.is_empty() {
            eprintln!("no entities");
        }
        for entity in &response.entities {
            say!(self, "{}", entity_line(entity));
        }
        if !response.next_page_token.is_empty() {
            // On standard error, so a pipe gets only the entities.
            eprintln!("more: --page-token {}", response.next_page_token);
        }
    }

    pub fn entity(&self, response: &proto::GetEntityResponse) {
        if self.as_json(response) {
            return;
        }
        if let Some(entity) = &response.entity {
            say!(self, "{}", entity_line(entity));
            if !entity.aliases.is_empty() {
                say!(self, "also: {}", entity.aliases.join(", "));
            }
        }
        for relation in &response.relations {
            say!(self, "{}: {}", relation.predicate, relation.object);
        }
        for memory in &response.memories {
            say!(self, "{}", memory_line(memory));
        }
        if response.truncated {
            eprintln!("more memories name it: raise --limit");
        }
    }

    pub fn deleted(&self, id: &str, response: &proto::DeleteMemoryResponse) {
        if !self.as_json(response) {
            say!(self, "deleted {id}");
        }
    }

    pub fn episode_started(&self, episode: &proto::Episode) {
        if !self.as_json(episode) {
            // The id alone, so `id=$(engram episode start ...)` works.
            say!(self, "{}", episode.id);
        }
    }

    pub fn step_appended(&self, step_number: i32, response: &proto::AppendStepsResponse) {
        if !self.as_json(response) {
            say!(
                self,
                "recorded step {step_number} ({} steps in all)",
                response.step_count
            );
        }
    }

    pub fn completed(&self, response: &proto::CompleteEpisodeResponse) {
        if self.as_json(response) {
            return;
        }
        let episode = response.episode.clone().unwrap_or_default();
        let score = episode.outcome.map(|o| o.score).unwrap_or_default();
        say!(self, "completed {} with score {score:.2}", episode.id);
        let learned = response.learned.clone().unwrap_or_default();
        for rule in &learned.rules_added {
            say!(self, "learned: {rule}");
        }
        if learned.mistake_cards_merged > 0 {
            say!(
                self,
                "mistake cards updated: {}",
                learned.mistake_cards_merged
            );
        }
        if learned.consolidated {
            say!(self, "consolidated the namespace's rules");
        }
    }

    pub fn episode(&self, episode: &proto::Episode) {
        if self.as_json(episode) {
            return;
        }
        say!(
            self,
            "{}  {}  task {}  {} steps",
            episode.id,
            enum_label(episode.status().as_str_name()),
            episode.task_id,
            episode.step_count
        );
        for step in &episode.steps {
            say!(
                self,
                "  {:>4}. {} {} [{}]",
                step.step_number,
                step.tool,
                step.action,
                enum_label(step.result().as_str_name())
            );
        }
        if let Some(outcome) = &episode.outcome {
            say!(
                self,
                "score {:.2}, {}{}",
                outcome.score,
                if outcome.success {
                    "success"
                } else {
                    "failure"
                },
                if outcome.summary.is_empty() {
                    String::new()
                } else {
                    format!(": {}", outcome.summary)
                }
            );
        }
    }

    pub fn outcome(&self, response: &proto::RecordOutcomeResponse) {
        if self.as_json(response) {
            return;
        }
        let outcome = response.outcome.clone().unwrap_or_default();
        say!(
            self,
            "recorded {} (task type {}{})",
            outcome.id,
            outcome.task_type,
            if outcome.task_type_inferred {
                ", inferred"
            } else {
                ""
            }
        );
        if let Some(heuristic) = &response.heuristic {
            say!(
                self,
                "heuristic {}: {} (confidence {:.2}, {} of {})",
                change_label(response.heuristic_change()),
                heuristic.strategy,
                heuristic.confidence,
                heuristic.success_count,
                heuristic.occurrence_count
            );
        }
        if let Some(anti_pattern) = &response.anti_pattern {
            say!(
                self,
                "anti-pattern {}: {} ({} times)",
                change_label(response.anti_pattern_change()),
                anti_pattern.strategy,
                anti_pattern.occurrence_count
            );
        }
    }

    pub fn stats(&self, response: &proto::GetStatsResponse) {
        if self.as_json(response) {
            return;
        }
        say!(self, "episodes:      {}", response.total_episodes);
        say!(self, "global rules:  {}", response.global_rules);
        say!(
            self,
            "mistakes:      {} ({} cards)",
            response.mistakes,
            response.mistake_cards
        );
        say!(
            self,
            "outcomes:      {} ({} heuristics, {} anti-patterns)",
            response.outcomes,
            response.heuristics,
            response.anti_patterns
        );
        let memories: Vec<String> = response
            .memories_per_type
            .iter()
            .map(|count| {
                format!(
                    "{} {}",
                    count.count,
                    enum_label(count.memory_type().as_str_name()).to_lowercase()
                )
            })
            .collect();
        say!(
            self,
            "memories:      {}",
            if memories.is_empty() {
                "none".to_owned()
            } else {
                memories.join(", ")
            }
        );
        for task in &response.tasks {
            say!(
                self,
                "task {}: {} rules, {} scored episodes, mean score {:.2}",
                task.task_id,
                task.rules,
                task.scored_episodes,
                task.mean_score
            );
        }
        for task_type in &response.task_types {
            say!(
                self,
                "task type {}: {} outcomes, {:.0}% success",
                task_type.task_type,
                task_type.outcomes,
                task_type.success_rate * 100.0
            );
        }
    }
}

/// `MEMORY_TYPE_PREFERENCE` → `PREFERENCE`: the value without its enum's prefix.
fn enum_label(name: &str) -> String {
    const PREFIXES: &[&str] = &[
        "MEMORY_TYPE_",
        "MEMORY_LEVEL_",
        "ENTITY_TYPE_",
        "MEMORY_LINK_KIND_",
        "DECISION_SOURCE_",
        "EPISODE_STATUS_",
        "STEP_RESULT_",
    ];
    let label = PREFIXES
        .iter()
        .find_map(|prefix| name.strip_prefix(prefix))
        .unwrap_or(name);
    label.to_owned()
}

fn change_label(change: proto::LearningChange) -> &'static str {
    match change {
        proto::LearningChange::Created => "learned",
        proto::LearningChange::Updated => "updated",
        proto::LearningChange::Unspecified => "unchanged",
    }
}

/// One memory on one line: id, type and content.
fn memory_line(memory: &proto::Memory) -> String {
    format!(
        "{}  {:<10}  {}",
        memory.id,
        enum_label(memory.memory_type().as_str_name()),
        memory.content.replace('\n', " ")
    )
}

/// `id  TYPE  name  (N memories)`.
fn entity_line(entity: &proto::Entity) -> String {
    format!(
        "{}  {:<12}  {}  ({} memories)",
        entity.id,
        enum_label(entity.entity_type().as_str_name()),
        entity.name,
        entity.memory_count
    )
}

fn timestamp(time: Option<&prost_types::Timestamp>) -> String {
    time.map(ToString::to_string).unwrap_or_default()
}

/// An event of `engram watch`: its JSON on one line, so a reader takes
/// one object a line.
pub fn event_line(event: &proto::MemoryEvent) -> String {
    to_json_with(event, false)
}

/// `message` in the protobuf JSON mapping, with every field present
/// (defaults included), so scripts find the keys they look for.
fn to_json<M: prost::Name>(message: &M) -> String {
    to_json_with(message, true)
}

/// [`to_json`], indented or on one line.
fn to_json_with<M: prost::Name>(message: &M, pretty: bool) -> String {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        DescriptorPool::decode(engram::FILE_DESCRIPTOR_SET)
            .expect("the descriptor set compiled into this binary is valid")
    });
    let descriptor = pool
        .get_message_by_name(&M::full_name())
        .expect("every engram.v1 message is in the descriptor set");
    let dynamic = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice())
        .expect("a message decodes with its own descriptor");
    let options = SerializeOptions::new().skip_default_fields(false);
    let mut json = Vec::new();
    let serialized = if pretty {
        dynamic.serialize_with_options(&mut serde_json::Serializer::pretty(&mut json), &options)
    } else {
        dynamic.serialize_with_options(&mut serde_json::Serializer::new(&mut json), &options)
    };
    serialized.expect("a protobuf message serializes to JSON");
    String::from_utf8(json).expect("serde_json writes UTF-8")
}
