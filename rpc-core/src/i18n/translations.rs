//! Translation files: loading, checking, and the fallback chain.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use fluent_langneg::LanguageIdentifier;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::Language;
use crate::registry::Registry;

/// The reserved key of the endpoint's own texts (server title,
/// description, MCP `instructions`).
pub const SERVER_KEY: &str = "$server";

/// The stem of the base translation files (`rpc.<lang>.yaml`) and the name
/// of the directory of group files (`rpc/<group>.<lang>.yaml`): a group of
/// that name could not be told from the base, so it is refused.
const BASE: &str = "rpc";

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
struct Entry {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    instructions: Option<String>,
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
struct File {
    path: PathBuf,
    entries: BTreeMap<String, (Entry, u64)>,
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
    fn new(file: &Path, line: Option<u64>, reason: impl Into<String>) -> Self {
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
    /// The default language first, then the others in the order found.
    languages: Vec<LanguageIdentifier>,
    /// The tags, kept for the life of the process (a few bytes per
    /// language, once): transports put them in headers without copying.
    tags: Vec<&'static str>,
    base: HashMap<usize, File>,
    groups: HashMap<String, HashMap<usize, File>>,
    configured: bool,
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
        let default: LanguageIdentifier = DEFAULT_LANGUAGE.parse().unwrap_or_default();
        let mut translations = Translations {
            languages: Vec::new(),
            tags: Vec::new(),
            base: HashMap::new(),
            groups: HashMap::new(),
            configured: false,
        };
        translations.push_language(default);
        translations
    }

    /// Loads `rpc.<lang>.yaml` and `rpc/<group>.<lang>.yaml` from `dir`;
    /// the default language is English until
    /// [`with_default_language`](Self::with_default_language) says otherwise.
    /// Fails on the first file that cannot be used, naming it (and the line).
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, TranslationError> {
        let dir = dir.as_ref();
        let mut translations = Translations::none();
        translations.configured = true;
        for path in yaml_files(dir)? {
            let name = file_name(&path);
            match name.strip_prefix("rpc.") {
                Some(rest) => {
                    let lang = language_of(&path, rest)?;
                    let file = read(&path)?;
                    let index = translations.language_index(lang);
                    translations.base.insert(index, file);
                }
                None => tracing::warn!(file = %path.display(), "ignored: translation files are named rpc.<lang>.yaml"),
            }
        }
        let group_dir = dir.join(BASE);
        let group_files = if group_dir.is_dir() { yaml_files(&group_dir)? } else { Vec::new() };
        for path in group_files {
            let name = file_name(&path);
            let Some((group, rest)) = name.split_once('.') else { continue };
            if group == BASE {
                return Err(TranslationError::new(
                    &path,
                    None,
                    format!(
                        "`{BASE}` is reserved for the base translation (`{BASE}.<lang>.yaml`): no group can be named `{BASE}`"
                    ),
                ));
            }
            let lang = language_of(&path, rest)?;
            let file = read(&path)?;
            let index = translations.language_index(lang);
            translations.groups.entry(group.to_owned()).or_default().insert(index, file);
        }
        Ok(translations)
    }

    /// The default language, the last step before the code's own texts
    /// (BCP 47, e.g. `en`, `uk`, `pt-BR`).
    pub fn with_default_language(mut self, tag: &str) -> Result<Self, TranslationError> {
        let lang: LanguageIdentifier = tag.parse().map_err(|_| {
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
            let languages: Vec<LanguageIdentifier> = order.iter().map(|i| self.languages[*i].clone()).collect();
            self.languages.clear();
            self.tags.clear();
            for lang in languages {
                self.push_language(lang);
            }
        }
        Ok(self)
    }

    /// Whether translation files were loaded (endpoints then say which
    /// language they answer in: `Content-Language`, `Vary: Accept-Language`).
    pub fn is_configured(&self) -> bool {
        self.configured
    }

    /// The languages served, the default first.
    pub fn languages(&self) -> &[LanguageIdentifier] {
        &self.languages
    }

    /// The BCP 47 tag of `lang` (`uk`, `en-US`).
    pub fn tag(&self, lang: Language) -> &str {
        self.static_tag(lang)
    }

    /// The BCP 47 tag of `lang`, for the life of the process (a
    /// `Content-Language` value without a copy).
    pub fn static_tag(&self, lang: Language) -> &'static str {
        self.tags.get(lang.0).copied().unwrap_or(DEFAULT_LANGUAGE)
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

    fn push_language(&mut self, lang: LanguageIdentifier) {
        self.tags.push(interned(&lang.to_string()));
        self.languages.push(lang);
    }

    fn language_index(&mut self, lang: LanguageIdentifier) -> usize {
        match self.languages.iter().position(|l| *l == lang) {
            Some(index) => index,
            None => {
                self.push_language(lang);
                self.languages.len() - 1
            }
        }
    }
}

/// `field` of `key` in the file of `lang` among `files`.
fn lookup<'a>(files: Option<&'a HashMap<usize, File>>, lang: Language, key: &str, field: Field) -> Option<&'a str> {
    files?.get(&lang.0)?.entries.get(key).and_then(|(entry, _)| entry.get(field))
}

/// The `*.yaml` files of `dir`, sorted by name.
fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, TranslationError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| TranslationError::new(dir, None, format!("cannot read the translations directory: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The language of a file from the rest of its name (`uk.yaml`, `pt-BR.yaml`).
fn language_of(path: &Path, rest: &str) -> Result<LanguageIdentifier, TranslationError> {
    let tag = rest.strip_suffix(".yaml").unwrap_or(rest);
    tag.parse().map_err(|_| {
        TranslationError::new(
            path,
            None,
            format!("`{tag}` is not a BCP 47 language tag (the file name is <name>.<language>.yaml, e.g. rpc.uk.yaml)"),
        )
    })
}

/// Reads and parses one file: a mapping of keys to entries.
fn read(path: &Path) -> Result<File, TranslationError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| TranslationError::new(path, None, format!("cannot read the file: {e}")))?;
    parse(path, &text)
}

fn parse(path: &Path, text: &str) -> Result<File, TranslationError> {
    let parsed: Option<HashMap<Spanned<String>, Spanned<Entry>>> = serde_saphyr::from_str(text).map_err(|e| {
        let line = e.location().map(|l| l.line());
        // The message without the location the error would repeat.
        let reason = e.to_string();
        let reason = reason.lines().next().unwrap_or("invalid YAML").to_owned();
        TranslationError::new(path, line, reason)
    })?;
    let mut entries = BTreeMap::new();
    for (key, spanned) in parsed.unwrap_or_default() {
        let key_line = key.defined.line();
        let key = key.value;
        if key != SERVER_KEY && spanned.value.instructions.is_some() {
            return Err(TranslationError::new(
                path,
                Some(spanned.defined.line()),
                format!("`instructions` belongs under `{SERVER_KEY}`, not under the method `{key}`"),
            ));
        }
        entries.insert(key, (spanned.value, key_line));
    }
    Ok(File { path: path.to_owned(), entries })
}

/// `tag` for the life of the process, each distinct tag stored once (so
/// loading translations again leaks nothing). BCP 47 tags are ASCII
/// letters, digits and `-`: valid header values.
fn interned(tag: &str) -> &'static str {
    static TAGS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut tags = TAGS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = tags.iter().find(|t| **t == tag) {
        return known;
    }
    let leaked: &'static str = Box::leak(tag.to_owned().into_boxed_str());
    tags.push(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<File, TranslationError> {
        parse(Path::new("rpc.en.yaml"), text)
    }

    #[test]
    fn entries_and_errors_with_lines() {
        let file = parse_text("A.b:\n  title: T\n  description: D\n$server:\n  instructions: I\n").unwrap();
        assert_eq!(file.entries["A.b"].0.title.as_deref(), Some("T"));
        assert_eq!(file.entries["$server"].0.instructions.as_deref(), Some("I"));
        assert!(parse_text("").unwrap().entries.is_empty());
        assert!(parse_text("# only a comment\n").unwrap().entries.is_empty());
        let unknown = parse_text("A.b:\n  title: T\n  summary: S\n").unwrap_err();
        assert_eq!(unknown.line, Some(3), "{unknown}");
        assert!(unknown.reason.contains("summary"), "{unknown}");
        let broken = parse_text("A.b:\n  title: [unclosed\n").unwrap_err();
        assert!(broken.line.is_some(), "{broken}");
        let misplaced = parse_text("A.b:\n  instructions: no\n").unwrap_err();
        assert_eq!(misplaced.line, Some(2), "{misplaced}");
        assert!(parse_text("A.b:\n  title: 42\n").is_ok(), "YAML scalars read as text");
        assert!(parse_text("A.b:\n  title: [1, 2]\n").is_err());
        let twice = parse_text("A.b:\n  title: one\nA.b:\n  title: two\n").unwrap_err();
        assert_eq!(twice.line, Some(3), "a key given twice: {twice}");
        assert!(parse_text("- a\n- b\n").is_err(), "not a mapping");
    }
}
