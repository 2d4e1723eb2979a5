//! Translation files: loading, checking, and the fallback chain.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::tag::LanguageTag;

use super::Language;
use crate::registry::Registry;

/// The reserved key of the endpoint's own texts (server title,
/// description, MCP `instructions`).
pub const SERVER_KEY: &str = "$server";

/// The stem of the base translation files (`rpc.<lang>.yaml`) and the name
/// of the directory of group files (`rpc/<group>.<lang>.yaml`): a group of
/// that name could not be told from the base, so it is refused.
pub(super) const BASE: &str = "rpc";

/// The language used when nothing else is configured.
const DEFAULT_LANGUAGE: &str = "en";

/// A text field of a translation entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// `title`: a tool's title, an OpenRPC method's summary, the server's title.
    Title,
    /// `description`.
    Description,
    /// `instructions` (MCP, `$server` only).
    Instructions,
}

/// One entry of a file, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Entry {
    #[serde(default)]
    pub(super) title: Option<String>,
    #[serde(default)]
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) instructions: Option<String>,
}

impl Entry {
    fn get(&self, field: Field) -> Option<&str> {
        match field {
            Field::Title => self.title.as_deref(),
            Field::Description => self.description.as_deref(),
            Field::Instructions => self.instructions.as_deref(),
        }
    }
}

/// One loaded file: its entries with the line each starts on.
#[derive(Debug, Clone)]
pub(super) struct File {
    pub(super) path: PathBuf,
    pub(super) entries: BTreeMap<String, (Entry, u64)>,
}

/// A translation file that cannot be used: which, where, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranslationError {
    /// The file (or directory).
    pub file: PathBuf,
    /// The line, when the reason has one.
    pub line: Option<u64>,
    /// What is wrong.
    pub reason: String,
}

impl TranslationError {
    pub(super) fn new(file: &Path, line: Option<u64>, reason: impl Into<String>) -> Self {
        TranslationError { file: file.to_owned(), line, reason: reason.into() }
    }
}

impl fmt::Display for TranslationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.reason),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

impl std::error::Error for TranslationError {}

/// The translations of an application: per language, a base file and
/// group files. Cheap to share (`Arc`); endpoints take it with
/// `.translations(..)`.
#[derive(Debug, Clone)]
pub struct Translations {
    /// The default language first, then the others in the order found
    /// (tags live for the life of the process: transports put them in
    /// headers without copying).
    pub(super) languages: Vec<LanguageTag>,
    pub(super) base: HashMap<usize, File>,
    pub(super) groups: HashMap<String, HashMap<usize, File>>,
    pub(super) configured: bool,
}

impl Default for Translations {
    fn default() -> Self {
        Translations::none()
    }
}

impl Translations {
    /// No translations: every text comes from the code; no
    /// `Content-Language` is claimed.
    pub fn none() -> Self {
        let mut translations =
            Translations { languages: Vec::new(), base: HashMap::new(), groups: HashMap::new(), configured: false };
        if let Some(default) = LanguageTag::parse(DEFAULT_LANGUAGE) {
            translations.languages.push(default);
        }
        translations
    }

    /// The default language, the last step before the code's own texts
    /// (BCP 47, e.g. `en`, `uk`, `pt-BR`).
    pub fn with_default_language(mut self, tag: &str) -> Result<Self, TranslationError> {
        let lang = LanguageTag::parse(tag).ok_or_else(|| {
            TranslationError::new(Path::new("default language"), None, format!("`{tag}` is not a BCP 47 language tag"))
        })?;
        let index = self.language_index(lang);
        if index != 0 {
            // Move it to the front, renumbering the files.
            let order: Vec<usize> =
                std::iter::once(index).chain((0..self.languages.len()).filter(|i| *i != index)).collect();
            let renumber = |files: HashMap<usize, File>| -> HashMap<usize, File> {
                files
                    .into_iter()
                    .map(|(old, file)| (order.iter().position(|o| *o == old).unwrap_or(old), file))
                    .collect()
            };
            self.base = renumber(std::mem::take(&mut self.base));
            self.groups = std::mem::take(&mut self.groups).into_iter().map(|(g, f)| (g, renumber(f))).collect();
            self.languages = order.iter().map(|i| self.languages[*i]).collect();
        }
        Ok(self)
    }

    /// Whether translation files were loaded (endpoints then say which
    /// language they answer in: `Content-Language`, `Vary: Accept-Language`).
    pub fn is_configured(&self) -> bool {
        self.configured
    }

    /// The languages served, the default first.
    pub fn languages(&self) -> &[LanguageTag] {
        &self.languages
    }

    /// The BCP 47 tag of `lang` (`uk`, `en-US`).
    pub fn tag(&self, lang: Language) -> &str {
        self.static_tag(lang)
    }

    /// The BCP 47 tag of `lang`, for the life of the process (a
    /// `Content-Language` value without a copy).
    pub fn static_tag(&self, lang: Language) -> &'static str {
        self.languages.get(lang.0).map_or(DEFAULT_LANGUAGE, |t| t.as_str())
    }

    /// Every language served, the default first.
    pub fn all(&self) -> impl Iterator<Item = Language> + '_ {
        (0..self.languages.len()).map(Language)
    }

    /// `field` of `key` (a method name or [`SERVER_KEY`]) for `group`
    /// (`None`: the base only) in `lang`, by the fallback chain: group +
    /// `lang` → group + default → base + `lang` → base + default. `None`:
    /// no file has it (use the code's own text).
    pub fn text(&self, group: Option<&str>, lang: Language, key: &str, field: Field) -> Option<&str> {
        let group_files = group.and_then(|g| self.groups.get(g));
        lookup(group_files, lang, key, field)
            .or_else(|| lookup(group_files, Language::DEFAULT, key, field))
            .or_else(|| lookup(Some(&self.base), lang, key, field))
            .or_else(|| lookup(Some(&self.base), Language::DEFAULT, key, field))
    }

    /// Checks the translations against the methods of `registry`: an API
    /// group named like the base file is an error; keys that name no
    /// method (of the file's group) and files of groups no service
    /// declares are warnings (translations may cover methods of other
    /// builds), returned and logged.
    pub fn check(&self, registry: &Registry) -> Result<Vec<String>, TranslationError> {
        let groups = registry.groups();
        if groups.contains(BASE) {
            return Err(TranslationError::new(
                Path::new(BASE),
                None,
                format!(
                    "the API group `{BASE}` has the name of the base translation files (`{BASE}.<lang>.yaml`): rename the group"
                ),
            ));
        }
        let mut all = BTreeSet::new();
        let mut by_group: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for version in registry.versions() {
            for method in registry.version(version).into_iter().flat_map(|t| t.iter()) {
                all.insert(method.name());
                for group in method.descriptor().groups {
                    by_group.entry(group.name).or_default().insert(method.name());
                }
            }
        }
        let mut warnings = Vec::new();
        let unknown_keys = |file: &File, known: Option<&BTreeSet<&str>>, warnings: &mut Vec<String>| {
            for (key, (_, line)) in &file.entries {
                if key != SERVER_KEY && !known.is_some_and(|k| k.contains(key.as_str())) {
                    warnings.push(format!("{}:{line}: `{key}` names no method here", file.path.display()));
                }
            }
        };
        for file in self.base.values() {
            unknown_keys(file, Some(&all), &mut warnings);
        }
        for (group, files) in &self.groups {
            let known = by_group.get(group.as_str());
            for file in files.values() {
                if known.is_none() {
                    warnings.push(format!("{}: no service declares the group `{group}`", file.path.display()));
                    continue;
                }
                unknown_keys(file, known, &mut warnings);
            }
        }
        warnings.sort();
        for warning in &warnings {
            tracing::warn!("translations: {warning}");
        }
        Ok(warnings)
    }

    pub(super) fn language_index(&mut self, lang: LanguageTag) -> usize {
        match self.languages.iter().position(|l| *l == lang) {
            Some(index) => index,
            None => {
                self.languages.push(lang);
                self.languages.len() - 1
            }
        }
    }
}

/// `field` of `key` in the file of `lang` among `files`.
fn lookup<'a>(files: Option<&'a HashMap<usize, File>>, lang: Language, key: &str, field: Field) -> Option<&'a str> {
    files?.get(&lang.0)?.entries.get(key).and_then(|(entry, _)| entry.get(field))
}
