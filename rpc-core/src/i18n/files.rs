//! Translation files (feature `translations`): `rpc.<lang>.yaml` and
//! `rpc/<group>.<lang>.yaml` in a directory, read with their lines so a
//! broken file is named with the line of its mistake.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_saphyr::Spanned;

use super::tag::LanguageTag;
use super::translations::{BASE, Entry, File, SERVER_KEY, TranslationError, Translations};

impl Translations {
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
fn language_of(path: &Path, rest: &str) -> Result<LanguageTag, TranslationError> {
    let tag = rest.strip_suffix(".yaml").unwrap_or(rest);
    LanguageTag::parse(tag).ok_or_else(|| {
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
