//! The registry: every method of every API version, resolved to the service
//! instances the application registered.
//!
//! Versions inherit: version N starts from version N-1's methods (the nearest
//! lower declared version), overrides or adds the methods declared for N, and
//! drops the names N's services list in `removed(...)`. Methods are kept sorted
//! by name, so every listing is deterministic.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::descriptor::{self, MethodDescriptor, ServiceDescriptor, ServiceInstance};
use crate::schema::{MethodSchemaSet, build_method_schemas};
use crate::validation::ParamValidator;

/// One callable method, with its service instance, schemas and validator.
pub struct Method {
    descriptor: &'static MethodDescriptor,
    service: &'static ServiceDescriptor,
    instance: ServiceInstance,
    schemas: MethodSchemaSet,
    validator: ParamValidator,
    /// A caller has read the method's results as JSON strings (MCP's text
    /// content): see [`Method::results_read_as_strings`].
    read_as_strings: AtomicBool,
}

impl Method {
    /// The full method name.
    pub fn name(&self) -> &'static str {
        self.descriptor.name
    }

    /// The compile-time metadata.
    pub fn descriptor(&self) -> &'static MethodDescriptor {
        self.descriptor
    }

    /// The service block the method was declared in.
    pub fn service(&self) -> &'static ServiceDescriptor {
        self.service
    }

    /// The self-contained input/output schemas.
    pub fn schemas(&self) -> &MethodSchemaSet {
        &self.schemas
    }

    /// The compiled input validator.
    pub fn validator(&self) -> &ParamValidator {
        &self.validator
    }

    /// The service instance the method runs on.
    pub fn instance(&self) -> &ServiceInstance {
        &self.instance
    }

    /// Whether the method belongs to API group `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.descriptor.groups.iter().any(|g| g.name == group)
    }

    /// The full description: summary and the rest of the doc comment.
    pub fn full_description(&self) -> Option<String> {
        match (self.descriptor.summary, self.descriptor.description) {
            (Some(s), Some(d)) => Some(format!("{s}\n\n{d}")),
            (Some(s), None) => Some(s.to_owned()),
            (None, Some(d)) => Some(d.to_owned()),
            (None, None) => None,
        }
    }

    /// Whether a caller has read the method's results written as JSON
    /// strings ([`Call::result_as_string`](crate::Call::result_as_string),
    /// MCP's text content) since the registry was built. From then on a
    /// result of it stored in the cache keeps room for that string,
    /// whoever's call stores it (`/rpc`, a warm-up after an invalidation),
    /// so that the next hit over MCP copies the string instead of escaping
    /// the result again.
    pub fn results_read_as_strings(&self) -> bool {
        self.read_as_strings.load(Ordering::Relaxed)
    }

    /// Records that a caller reads the method's results as JSON strings
    /// (written once: later calls only read the flag).
    pub(crate) fn note_read_as_strings(&self) {
        if !self.read_as_strings.load(Ordering::Relaxed) {
            self.read_as_strings.store(true, Ordering::Relaxed);
        }
    }

    /// `file:line` of the method's declaration.
    pub fn location(&self) -> String {
        format!("{}:{}", self.service.file, self.descriptor.line)
    }
}

impl fmt::Debug for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Method").field("name", &self.descriptor.name).field("service", &self.service.type_name).finish()
    }
}

/// All methods of one API version, sorted by name.
#[derive(Debug, Default, Clone)]
pub struct VersionTable {
    methods: BTreeMap<&'static str, Arc<Method>>,
    /// The same methods by name, for the lookup every call makes.
    by_name: HashMap<&'static str, Arc<Method>, foldhash::fast::RandomState>,
}

impl VersionTable {
    /// The method named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Method>> {
        self.by_name.get(name)
    }

    /// All methods, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Method>> {
        self.methods.values()
    }

    /// The methods of group `group`, sorted by name.
    pub fn group<'a>(&'a self, group: &'a str) -> impl Iterator<Item = &'a Arc<Method>> + 'a {
        self.methods.values().filter(move |m| m.in_group(group))
    }

    /// Number of methods.
    pub fn len(&self) -> usize {
        self.methods.len()
    }

    /// Whether the version has no methods.
    pub fn is_empty(&self) -> bool {
        self.methods.is_empty()
    }
}

/// The method registry: API versions x methods, with group membership.
#[derive(Debug)]
pub struct Registry {
    versions: BTreeMap<u32, VersionTable>,
    /// `(version, method)` of every method some `#[rpc::invalidates]` names.
    invalidated: HashSet<(u32, &'static str), foldhash::fast::RandomState>,
}

impl Registry {
    /// Starts building a registry: register each service instance with
    /// [`RegistryBuilder::service`], then [`build`](RegistryBuilder::build).
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The declared versions, ascending.
    pub fn versions(&self) -> impl Iterator<Item = u32> + '_ {
        self.versions.keys().copied()
    }

    /// The methods of `version`.
    pub fn version(&self, version: u32) -> Option<&VersionTable> {
        self.versions.get(&version)
    }

    /// Looks up `name` in `version`, optionally restricted to group `scope`.
    pub fn method(&self, version: u32, name: &str, scope: Option<&str>) -> Option<&Arc<Method>> {
        let method = self.versions.get(&version)?.get(name)?;
        match scope {
            Some(group) if !method.in_group(group) => None,
            _ => Some(method),
        }
    }

    /// Whether a method of `version` declares `#[rpc::invalidates]` naming
    /// `name`: its cached results then carry a generation stamp, so one
    /// invalidation reaches the entries of every caller.
    pub fn is_invalidated(&self, version: u32, name: &str) -> bool {
        self.invalidated.contains(&(version, name))
    }

    /// The versions in which group `group` has at least one method.
    pub fn group_versions<'a>(&'a self, group: &'a str) -> impl Iterator<Item = u32> + 'a {
        self.versions.iter().filter(move |(_, t)| t.group(group).next().is_some()).map(|(v, _)| *v)
    }

    /// The crate that declared group `group` (see [`ApiGroup::PACKAGE`](crate::ApiGroup::PACKAGE)),
    /// if some method belongs to it and the crate is known.
    pub fn group_package(&self, group: &str) -> Option<crate::Package> {
        self.versions
            .values()
            .flat_map(|t| t.iter())
            .flat_map(|m| m.descriptor.groups.iter())
            .find(|g| g.name == group && g.package.is_known())
            .map(|g| g.package)
    }

    /// The names of every group some method belongs to, sorted.
    pub fn groups(&self) -> BTreeSet<&'static str> {
        self.versions.values().flat_map(|t| t.iter()).flat_map(|m| m.descriptor.groups.iter().map(|g| g.name)).collect()
    }
}

/// Builds a [`Registry`] from service instances: each `.service(x)` brings
/// exactly the `#[rpc::service]` impl blocks of `x`'s type (all of their
/// versions); nothing else linked into the binary is pulled in.
#[derive(Default)]
pub struct RegistryBuilder {
    registered: Vec<Registered>,
}

struct Registered {
    type_id: TypeId,
    type_name: &'static str,
    instance: ServiceInstance,
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.registered.iter().map(|r| r.type_name)).finish()
    }
}

impl RegistryBuilder {
    /// Registers a service instance: the methods of every `#[rpc::service]`
    /// block of `T` run on it.
    pub fn service<T: Any + Send + Sync>(self, instance: T) -> Self {
        self.service_arc(Arc::new(instance))
    }

    /// Registers a shared service instance (e.g. one the application also
    /// uses elsewhere).
    pub fn service_arc<T: Any + Send + Sync>(mut self, instance: Arc<T>) -> Self {
        self.registered.push(Registered {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            instance,
        });
        self
    }

    /// Resolves the registered types to their service blocks, builds the
    /// version tables, schemas and validators. Reports every problem at once.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let mut problems = Vec::new();
        let mut linked: HashMap<TypeId, Vec<&'static ServiceDescriptor>> = HashMap::new();
        for service in descriptor::all_services() {
            linked.entry((service.type_id)()).or_default().push(service);
        }

        // The blocks of the registered types, each with its instance.
        let mut instances: HashMap<TypeId, ServiceInstance> = HashMap::new();
        let mut services: Vec<&'static ServiceDescriptor> = Vec::new();
        for registered in self.registered {
            if instances.contains_key(&registered.type_id) {
                problems.push(format!(
                    "`{}` is registered twice: register one instance per service type \
                     (share one with `.service_arc(...)`)",
                    registered.type_name
                ));
                continue;
            }
            let Some(blocks) = linked.get(&registered.type_id) else {
                problems.push(not_a_service(registered.type_name));
                continue;
            };
            services.extend(blocks.iter().copied());
            instances.insert(registered.type_id, registered.instance);
        }
        let baseless = missing_bases(&services, &linked);
        // A block without its base is reported once, not again for each name it removes.
        let orphaned: Vec<&str> = baseless.iter().map(|(service, _)| service.type_name).collect();
        problems.extend(baseless.iter().map(|(_, problem)| problem.clone()));

        // Build methods, per declared version.
        let mut declared: BTreeMap<u32, Vec<(&'static ServiceDescriptor, Arc<Method>)>> = BTreeMap::new();
        let mut removed: BTreeMap<u32, Vec<(&'static str, &'static ServiceDescriptor)>> = BTreeMap::new();
        services.sort_by_key(|s| (s.version, s.file, s.line));
        for service in &services {
            removed.entry(service.version).or_default().extend(service.removed.iter().map(|n| (*n, *service)));
            declared.entry(service.version).or_default();
            let Some(instance) = instances.get(&(service.type_id)()) else { continue };
            for descriptor in service.methods() {
                let schemas = build_method_schemas(descriptor);
                match ParamValidator::new(&schemas.input) {
                    Ok(validator) => declared.entry(service.version).or_default().push((
                        service,
                        Arc::new(Method {
                            descriptor,
                            service,
                            instance: instance.clone(),
                            schemas,
                            validator,
                            read_as_strings: AtomicBool::new(false),
                        }),
                    )),
                    Err(e) => {
                        problems.push(format!("method `{}`: its input schema does not compile: {e}", descriptor.name))
                    }
                }
            }
        }

        let mut versions: BTreeMap<u32, VersionTable> = BTreeMap::new();
        let mut previous = VersionTable::default();
        for (version, methods) in declared {
            let mut table = previous.clone();
            let mut own: HashMap<&str, &'static ServiceDescriptor> = HashMap::new();
            for (service, method) in methods {
                if let Some(first) = own.insert(method.name(), service) {
                    problems.push(format!(
                        "duplicate method name `{}` in version {version}: declared by `{}` ({}:{}) and `{}` ({}:{})",
                        method.name(),
                        first.type_name,
                        first.file,
                        first.line,
                        service.type_name,
                        service.file,
                        service.line
                    ));
                }
                table.methods.insert(method.name(), method);
            }
            for (name, service) in removed.remove(&version).unwrap_or_default() {
                if own.contains_key(name) {
                    problems.push(format!(
                        "version {version} both declares and removes `{name}` (removed by `{}` at {}:{})",
                        service.type_name, service.file, service.line
                    ));
                } else if table.methods.remove(name).is_none() && !orphaned.contains(&service.type_name) {
                    let near = table
                        .methods
                        .keys()
                        .map(|known| (strsim::jaro_winkler(known, name), *known))
                        .filter(|(score, _)| *score > 0.9)
                        .max_by(|a, b| a.0.total_cmp(&b.0))
                        .map(|(_, known)| format!("; did you mean `{known}`?"))
                        .unwrap_or_default();
                    problems.push(format!(
                        "version {version} removes `{name}`, which no earlier registered version has \
                         (removed by `{}` at {}:{}){near}",
                        service.type_name, service.file, service.line
                    ));
                }
            }
            table.by_name = table.methods.iter().map(|(name, method)| (*name, Arc::clone(method))).collect();
            previous = table.clone();
            versions.insert(version, table);
        }
        for (version, table) in &versions {
            problems.extend(relation_problems(*version, table));
        }
        problems.extend(group_problems(&versions));

        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        let invalidated = versions
            .iter()
            .flat_map(|(version, table)| {
                table.iter().flat_map(move |m| m.descriptor.invalidates.iter().map(move |r| (*version, r.method)))
            })
            .collect();
        Ok(Registry { versions, invalidated })
    }
}

/// Groups of one name declared twice (two `api_group!` with the same name,
/// e.g. a copy-pasted declaration): their methods would be served as one
/// group, a back-office method to AI agents among them.
fn group_problems(versions: &BTreeMap<u32, VersionTable>) -> Vec<String> {
    let mut seen: BTreeMap<&str, crate::group::GroupRef> = BTreeMap::new();
    let mut problems = Vec::new();
    let groups = versions.values().flat_map(|t| t.iter()).flat_map(|m| m.descriptor.groups.iter());
    for group in groups {
        match seen.get(group.name) {
            None => {
                seen.insert(group.name, *group);
            }
            Some(first) if first == group => {}
            Some(first) => {
                let problem = format!(
                    "group \"{}\" is declared twice: {} and {}; their methods would be served as one group: rename one",
                    group.name,
                    declaration(first),
                    declaration(group)
                );
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
    }
    problems
}

/// Where `group` was declared, for messages.
fn declaration(group: &crate::group::GroupRef) -> String {
    match group.declared_at {
        "" => format!("a hand-written `ApiGroup` (mcp = {})", group.mcp),
        at => at.to_owned(),
    }
}

/// What is wrong with the `#[rpc::invalidates]` relations of a version's
/// methods: each related method must exist in the same version and be
/// cached (else there is nothing to invalidate).
fn relation_problems(version: u32, table: &VersionTable) -> Vec<String> {
    let mut problems = Vec::new();
    for method in table.iter() {
        for relation in method.descriptor().invalidates {
            match table.get(relation.method) {
                Some(related) if related.descriptor().cache.is_none() => problems.push(format!(
                    "`{}` ({}) invalidates `{}`, which has no `#[rpc::cache]`: cache it, or drop it from the list",
                    method.name(),
                    method.location(),
                    relation.method
                )),
                Some(_) => {}
                None => {
                    let closest = table
                        .iter()
                        .map(|m| m.name())
                        .filter(|name| strsim::jaro_winkler(name, relation.method) > 0.8)
                        .max_by(|a, b| {
                            strsim::jaro_winkler(a, relation.method)
                                .total_cmp(&strsim::jaro_winkler(b, relation.method))
                        });
                    let hint = closest.map(|name| format!(" (did you mean `{name}`?)")).unwrap_or_default();
                    problems.push(format!(
                        "`{}` ({}) invalidates `{}`, which is not a method of version {version}{hint}",
                        method.name(),
                        method.location(),
                        relation.method
                    ));
                }
            }
        }
    }
    problems
}

/// Why a registered type brings no methods.
fn not_a_service(type_name: &str) -> String {
    let hint = match type_name.strip_prefix("alloc::sync::Arc<").and_then(|t| t.strip_suffix('>')) {
        Some(inner) => format!(": to register a shared `{inner}`, use `.service_arc(arc)` instead of `.service(arc)`"),
        None => ": annotate an impl block of it with `#[rpc::service]`, or register the type that has one".to_owned(),
    };
    format!("`{type_name}` has no `#[rpc::service]` impl block{hint}")
}

/// A later version of an API (by alias) builds on its earlier versions: a
/// registered version-N block whose alias has no registered lower version,
/// while such a block is linked into the binary under an unregistered type,
/// would silently lose the inherited methods.
fn missing_bases(
    services: &[&'static ServiceDescriptor],
    linked: &HashMap<TypeId, Vec<&'static ServiceDescriptor>>,
) -> Vec<(&'static ServiceDescriptor, String)> {
    let mut problems = Vec::new();
    let mut reported = BTreeSet::new();
    for service in services.iter().filter(|s| s.version > 1 && !s.alias.is_empty()) {
        let has_base = services.iter().any(|o| o.alias == service.alias && o.version < service.version);
        if has_base {
            continue;
        }
        let mut bases: Vec<&ServiceDescriptor> = linked
            .values()
            .flatten()
            .copied()
            .filter(|o| o.alias == service.alias && o.version < service.version)
            .collect();
        bases.sort_by_key(|o| (o.version, o.type_name));
        bases.dedup_by_key(|o| o.type_name);
        if bases.is_empty() || !reported.insert((service.alias, service.version)) {
            continue;
        }
        let named: Vec<String> = bases
            .iter()
            .map(|b| format!("version {} in `{}` ({}:{})", b.version, b.type_name, b.file, b.line))
            .collect();
        problems.push((
            *service,
            format!(
                "`{}` ({}:{}) declares version {} of `{}`, which builds on {}, but that type is not registered, \
             so version {} would lack the inherited methods: register it too with `.service(...)`",
                service.type_name,
                service.file,
                service.line,
                service.version,
                service.alias,
                named.join(" and "),
                service.version
            ),
        ));
    }
    problems
}

/// Why the registry could not be built: every problem found.
#[derive(Debug, Clone)]
pub struct RegistryError {
    problems: Vec<String>,
}

impl RegistryError {
    /// Each problem, as a sentence.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the RPC registry cannot be built:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistryError {}
