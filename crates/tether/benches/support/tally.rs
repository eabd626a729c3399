//! What a run's model requests cost, counted one way for every loop: from the usage the fake
//! server reported for each request it received — four characters to a token, tools included,
//! with its prompt cache's reads and writes (Anthropic's rules: see the test kit's
//! `prompt_cache`) — priced at one model's list prices.

use tether_model::Usage;

/// US dollars per million tokens: a Sonnet-class model's list prices.
pub const PRICE: Price = Price {
    input: 3.0,
    cache_write: 3.75,
    cache_read: 0.30,
    output: 15.0,
};

/// Prices per million tokens.
pub struct Price {
    pub input: f64,
    pub cache_write: f64,
    pub cache_read: f64,
    pub output: f64,
}

/// Tokens of a set of requests.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub calls: u64,
    /// All input, cache reads and writes included.
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
}

impl Tally {
    /// Input and output tokens.
    pub fn tokens(&self) -> u64 {
        self.input + self.output
    }

    /// US dollars at [`PRICE`].
    #[allow(clippy::cast_precision_loss)]
    pub fn dollars(&self) -> f64 {
        let fresh = self.input - self.cache_read - self.cache_write;
        (fresh as f64 * PRICE.input
            + self.cache_write as f64 * PRICE.cache_write
            + self.cache_read as f64 * PRICE.cache_read
            + self.output as f64 * PRICE.output)
            / 1e6
    }

    pub fn add(&mut self, other: &Tally) {
        self.calls += other.calls;
        self.input += other.input;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.output += other.output;
    }
}

impl From<&Usage> for Tally {
    /// One request's usage, as the fake server reported it.
    fn from(usage: &Usage) -> Tally {
        Tally {
            calls: 1,
            input: usage.input_tokens,
            cache_read: usage.cached_input_tokens,
            cache_write: usage.cache_write_input_tokens,
            output: usage.output_tokens,
        }
    }
}
