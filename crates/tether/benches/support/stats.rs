//! Order statistics of measured durations, printed in milliseconds.

use std::time::Duration;

/// Median, p90, p99 and max in milliseconds.
pub struct Stats {
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(mut times: Vec<Duration>) -> Stats {
        times.sort();
        let at =
            |q: f64| times[((times.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
        Stats {
            median: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            self.median, self.p90, self.p99, self.max
        )
    }
}
