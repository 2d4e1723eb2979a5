//! What an MCP endpoint serves besides tools, per API version: resources
//! and resource templates, prompts, completion providers — built once from
//! the registry, like the tools.

use std::collections::BTreeMap;
use std::sync::Arc;

use rpc::{Method, Registry};

use crate::completion::Completions;
use crate::config::McpConfig;
use crate::pages::ListTexts;
use crate::prompts::PromptSet;
use crate::resources::ResourceSet;

/// Resources, prompts and completions of one version.
#[derive(Debug, Default)]
pub struct Features {
    /// Resources and templates.
    pub resources: ResourceSet,
    /// Prompts.
    pub prompts: PromptSet,
    /// Completion providers.
    pub completions: Completions,
}

/// The features of a group, per API version.
#[derive(Debug, Default)]
pub struct GroupFeatures {
    versions: BTreeMap<u32, Features>,
    empty: Features,
}

impl GroupFeatures {
    /// Builds the features of `group` in every version that has methods in
    /// it (with `scoped_callers`, lists per grant of scopes).
    pub fn build(
        registry: &Registry,
        group: &str,
        config: &McpConfig,
        texts: &Arc<ListTexts>,
        scoped_callers: bool,
    ) -> GroupFeatures {
        let mut versions = BTreeMap::new();
        for version in registry.group_versions(group) {
            let Some(table) = registry.version(version) else { continue };
            let methods: Vec<&Arc<Method>> = table.group(group).collect();
            let features = Features {
                resources: ResourceSet::build(&methods, config, texts, scoped_callers),
                prompts: PromptSet::build(&methods, config, texts, scoped_callers),
                completions: Completions::build(&methods),
            };
            versions.insert(version, features);
        }
        GroupFeatures { versions, empty: Features::default() }
    }

    /// The features of `version` (none when it has none).
    pub fn version(&self, version: u32) -> &Features {
        self.versions.get(&version).unwrap_or(&self.empty)
    }
}
