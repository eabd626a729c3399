//! "Did you mean …?" for unknown keys and values.
//!
//! A typo in `tether.toml` should cost the user one glance, so unknown keys name the closest
//! valid key — but only when it is really close, since a wrong guess is worse than none.

/// The candidate closest to `word`, if one is close enough to be a likely typo.
///
/// Close means an edit distance (insertions, deletions, substitutions and swaps of adjacent
/// characters, ignoring case and `-` versus `_`) of at most a third of the word's length (at
/// least 1); failing that, `word` being a prefix of the candidate (`timeout` → `timeout_secs`)
/// or the candidate a prefix of `word` (`listen_addr` → `listen`).
pub(crate) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word = normalize(word);
    let limit = (word.chars().count() / 3).max(1);
    let by_distance = candidates
        .iter()
        .map(|c| (distance(&word, &normalize(c)), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c);
    by_distance.or_else(|| {
        if word.chars().count() < 3 {
            return None;
        }
        candidates
            .iter()
            .find(|c| normalize(c).starts_with(&word))
            .or_else(|| {
                candidates.iter().find(|c| {
                    let c = normalize(c);
                    c.chars().count() >= 4 && word.starts_with(&c)
                })
            })
            .copied()
    })
}

fn normalize(word: &str) -> String {
    word.to_lowercase().replace('-', "_")
}

/// Optimal-string-alignment distance: Levenshtein plus adjacent transpositions.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j] = distance between a[..i] and b[..j]
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    if let Some(first) = rows.first_mut() {
        for (j, cell) in first.iter_mut().enumerate() {
            *cell = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
#[path = "suggest_tests.rs"]
mod tests;
