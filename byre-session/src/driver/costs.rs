//! What each subagent of a turn cost. The CLI reports cost for the whole session only; each
//! subagent's API calls are in the transcript it keeps of the subagent
//! (`<session>/subagents/agent-<id>.jsonl`), so their tokens are priced at the rates of the
//! turn's result: each model's cost over its weighted tokens, output tokens weighing 5 input
//! ones, cache writes 1.25 and cache reads 0.1, as Anthropic's prices stand for every model.

use std::collections::HashMap;
use std::io;

use byre_proto::{ModelUsageMap, SessionEntry};
use byre_transport::{SessionHistory, SessionLog};
use serde_json::Value;

use super::turn::TurnOutput;

/// What one subagent of a turn cost.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SubagentCost {
    /// The `Agent` tool call that started it.
    pub tool_use_id: String,
    /// The subagent's id (`agentId` on its entries).
    pub agent_id: String,
    /// Its type (`general-purpose`, a name from `Options::agents`).
    pub agent_type: Option<String>,
    /// What it was asked to do.
    pub description: Option<String>,
    /// Its API calls' tokens, by model.
    pub tokens: HashMap<String, Tokens>,
    /// What it cost in US dollars; `None` when one of its models is not in the result's
    /// usage (no rate to price it at).
    pub cost_usd: Option<f64>,
}

/// Tokens of API calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens written to the prompt cache.
    pub cache_write: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
}

impl Tokens {
    /// Their weight in input-token prices.
    fn weight(&self) -> f64 {
        self.input as f64
            + 5.0 * self.output as f64
            + 1.25 * self.cache_write as f64
            + 0.1 * self.cache_read as f64
    }

    fn add(&mut self, other: Tokens) {
        self.input += other.input;
        self.output += other.output;
        self.cache_write += other.cache_write;
        self.cache_read += other.cache_read;
    }
}

impl TurnOutput {
    /// What each subagent this turn started cost, in the order started, read from the
    /// transcripts the CLI keeps of them under `history` (the CLI's configuration folder:
    /// `SessionHistory::from_env()` when the CLI ran with this process's `HOME`). A subagent
    /// whose transcript is not there (a CLI run elsewhere, with other settings, or without
    /// session persistence) is left out.
    pub fn subagent_costs(&self, history: &SessionHistory) -> io::Result<Vec<SubagentCost>> {
        let Some(session) = self.result.session_id.as_deref() else {
            return Ok(Vec::new());
        };
        if self.agent_calls.is_empty() {
            return Ok(Vec::new());
        }
        let rates = rates(self.result.model_usage.as_ref());
        let subagents = history.subagents(session)?;
        let mut costs = Vec::new();
        for call in &self.agent_calls {
            let Some(info) = subagents
                .iter()
                .find(|s| s.tool_use_id.as_deref() == Some(call))
            else {
                continue;
            };
            let tokens = tokens_by_model(&SessionLog::read(&info.path)?.entries);
            let cost = tokens
                .iter()
                .map(|(model, tokens)| rates.get(model).map(|rate| rate * tokens.weight()))
                .sum::<Option<f64>>();
            costs.push(SubagentCost {
                tool_use_id: call.clone(),
                agent_id: info.agent_id.clone(),
                agent_type: info.agent_type.clone(),
                description: info.description.clone(),
                tokens,
                cost_usd: cost,
            });
        }
        Ok(costs)
    }
}

/// Each model's cost per weighted token, from a result's usage.
fn rates(usage: Option<&ModelUsageMap>) -> HashMap<String, f64> {
    let mut rates = HashMap::new();
    for (model, usage) in usage.into_iter().flatten() {
        let tokens = Tokens {
            input: usage.input_tokens.unwrap_or_default(),
            output: usage.output_tokens.unwrap_or_default(),
            cache_write: usage.cache_creation_input_tokens.unwrap_or_default(),
            cache_read: usage.cache_read_input_tokens.unwrap_or_default(),
        };
        let cost = usage.cost_usd.as_ref().and_then(|n| n.as_f64());
        if let Some(cost) = cost.filter(|_| tokens.weight() > 0.0) {
            rates.insert(model.clone(), cost / tokens.weight());
        }
    }
    rates
}

/// The tokens of the API calls in `entries`, by model: each message once (the CLI writes a
/// message's blocks as entries of their own, each with the message's usage; the fullest is
/// kept).
fn tokens_by_model(entries: &[SessionEntry]) -> HashMap<String, Tokens> {
    let mut by_message: HashMap<String, (String, Tokens)> = HashMap::new();
    let mut by_model: HashMap<String, Tokens> = HashMap::new();
    for entry in entries {
        let Some(message) = entry.message.as_ref() else {
            continue;
        };
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let (Some(model), Some(usage)) = (
            message.get("model").and_then(Value::as_str),
            message.get("usage"),
        ) else {
            continue;
        };
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or_default();
        let tokens = Tokens {
            input: count("input_tokens"),
            output: count("output_tokens"),
            cache_write: count("cache_creation_input_tokens"),
            cache_read: count("cache_read_input_tokens"),
        };
        match message.get("id").and_then(Value::as_str) {
            Some(id) => {
                let slot = by_message
                    .entry(id.to_owned())
                    .or_insert_with(|| (model.to_owned(), tokens));
                if tokens.weight() > slot.1.weight() {
                    slot.1 = tokens;
                }
            }
            None => by_model.entry(model.to_owned()).or_default().add(tokens),
        }
    }
    for (model, tokens) in by_message.into_values() {
        by_model.entry(model).or_default().add(tokens);
    }
    by_model
}
