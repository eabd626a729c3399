//! How much of the built-in agent's input a provider's prompt cache serves, and what that does
//! to its cost.
//!
//! The agent runs a goal loop's worth of work against tether-testkit's fake model server playing
//! each provider's prompt cache (its documented rules, four characters to a token): ten
//! iterations, each a fresh conversation with the same long prompt (a goal loop's framing and
//! plan) and seven model calls — reading two source files, listing, grepping, writing and
//! editing a file, reading it back — then a final answer. For Anthropic and OpenAI chat it
//! prints the input tokens, what was read from the cache and written to it, and the cost at
//! Sonnet-like prices (input $3, cache read $0.30, cache write $3.75, output $15 per million)
//! against the same tokens all priced as fresh input. Bar: at least 80 % of Anthropic's input
//! read from the cache; the bench exits non-zero below it.
//!
//! Run with `cargo bench -p tether-agent --bench builtin_cache`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss
)]

use std::sync::Arc;

use serde_json::json;
use tether_agent::{
    Access, AgentEvent, BuiltinAgent, Executor, TurnObserver, TurnOutcome, TurnRequest,
};
use tether_config::{Api, Price, TokenCounts};
use tether_model::scripted::{Script, Turn};
use tether_model::{Endpoint, HttpModel, HttpOptions};
use tether_testkit::FakeModelServer;
use tether_tools::{ToolOptions, ToolSet};
use tokio_util::sync::CancellationToken;

const ITERATIONS: u32 = 10;
/// The least share of Anthropic's input the cache must serve.
const BAR: f64 = 0.80;

struct Quiet;

impl TurnObserver for Quiet {
    fn event(&self, _: AgentEvent) {}
}

/// One iteration's calls: seven tool calls, then the final answer.
fn iteration() -> Vec<Turn> {
    vec![
        Turn::tool("read", json!({"path": "src/lib.rs"})),
        Turn::tool("read", json!({"path": "src/cache.rs"})),
        Turn::tool("ls", json!({"path": "src"})),
        Turn::tool("grep", json!({"pattern": "fn ", "path": "src"})),
        Turn::tool(
            "write",
            json!({"path": "notes.md", "content": "eviction: LRU\n"}),
        ),
        Turn::tool(
            "edit",
            json!({"path": "notes.md", "old_text": "LRU", "new_text": "LRU, 1k entries"}),
        ),
        Turn::tool("read", json!({"path": "notes.md"})),
        Turn::text("Chose LRU with 1k entries; tests next."),
    ]
}

/// A goal loop's prompt: its framing and plan injection, the same every iteration.
fn prompt() -> String {
    let goal = "## cache-layer — Implement the cache layer\ndone_when: p95 < 50ms on the bench\n\
                verify: cargo test -p cache\n- [ ] eviction policy\n- [ ] metrics\n";
    format!(
        "{}\n\n<plan file=\"plan.md\">\n{}</plan>",
        "You work toward the goals in plan.md, in a loop; the plan and its log are your memory. "
            .repeat(20),
        goal.repeat(6)
    )
}

fn source(name: &str) -> String {
    (0..120)
        .map(|i| format!("pub fn {name}_{i}(key: u64) -> Option<u64> {{ lookup(key + {i}) }}\n"))
        .collect()
}

async fn run(api: Api) -> TurnOutcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), source("lib")).unwrap();
    std::fs::write(dir.path().join("src/cache.rs"), source("cache")).unwrap();
    let turns = (0..ITERATIONS).flat_map(|_| iteration());
    let server = FakeModelServer::builder(Script::turns(turns))
        .prompt_cache()
        .start()
        .await
        .unwrap();
    let endpoint = Endpoint::new(api, server.base_url(api), "m");
    let model = Arc::new(HttpModel::with_options(endpoint, HttpOptions::default()).unwrap());
    let tools = ToolSet::builtin(dir.path(), &ToolOptions::default()).unwrap();
    let agent = BuiltinAgent::new(model, tools, "bench".into());
    let mut total = TurnOutcome::default();
    for n in 1..=ITERATIONS {
        let request = TurnRequest {
            iteration: n,
            prompt: prompt(),
            transcript: dir
                .path()
                .join(format!(".tether/runs/r/iteration-{n:04}.jsonl")),
            access: Access::Work,
            context: tether_agent::Context::Fresh,
        };
        let outcome = agent
            .run_turn(request, &Quiet, CancellationToken::new())
            .await
            .unwrap();
        total.input_tokens += outcome.input_tokens;
        total.cached_input_tokens += outcome.cached_input_tokens;
        total.cache_write_input_tokens += outcome.cache_write_input_tokens;
        total.output_tokens += outcome.output_tokens;
    }
    total
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let price = Price {
        input: 3.0,
        cache_read: 0.3,
        cache_write: 3.75,
        output: 15.0,
    };
    let mut missed = false;
    for api in [Api::Anthropic, Api::OpenAiChat] {
        let used = runtime.block_on(run(api));
        let tokens = TokenCounts {
            input: used.input_tokens,
            cache_read: used.cached_input_tokens,
            cache_write: used.cache_write_input_tokens,
            output: used.output_tokens,
        };
        let flat = price.cost(TokenCounts {
            cache_read: 0,
            cache_write: 0,
            ..tokens
        });
        let share = used.cached_input_tokens as f64 / used.input_tokens.max(1) as f64;
        println!(
            "{api:?}: {} iterations, {} input tokens: {} read from the cache ({:.1} %), {} written, \
             {} fresh; {} output",
            ITERATIONS,
            used.input_tokens,
            used.cached_input_tokens,
            share * 100.0,
            used.cache_write_input_tokens,
            used.input_tokens - used.cached_input_tokens - used.cache_write_input_tokens,
            used.output_tokens
        );
        println!(
            "{api:?}: cost ${:.4} priced by part, ${flat:.4} with every input token at the fresh price",
            price.cost(tokens)
        );
        if api == Api::Anthropic && share < BAR {
            println!(
                "missed the bar: {:.1} % read, at least {:.0} % wanted",
                share * 100.0,
                BAR * 100.0
            );
            missed = true;
        }
    }
    if missed {
        std::process::exit(1);
    }
}
