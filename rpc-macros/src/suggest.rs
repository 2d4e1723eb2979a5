//! "Did you mean" suggestions for names written wrong (keys, units,
//! capabilities, parameters, environments).

/// The closest of `candidates` to `name`, as a "; did you mean" suffix.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(c, name), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}
