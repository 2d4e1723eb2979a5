//! The registry: every method of every API version, resolved to the service
//! instances the application registered.
//!
//! Versions inherit: version N starts from version N-1's methods (the nearest
//! lower declared version), overrides or adds the methods declared for N, and
//! drops the names N's services list in `removed(...)`. Methods are kept sorted
//! by name, so every listing is deterministic.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use crate::descriptor::{self, MethodDescriptor, ServiceDescriptor, ServiceInstance};
use crate::schema::{MethodSchemaSet, ParamValidator, build_method_schemas};

/// One callable method, with its service instance, schemas and validator.
pub struct Method {
    descriptor: &'static MethodDescriptor,
    service: &'static ServiceDescriptor,
    instance: ServiceInstance,
    schemas: MethodSchemaSet,
    validator: ParamValidator,
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
}

impl VersionTable {
    /// The method named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Method>> {
        self.methods.get(name)
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
}

impl Registry {
    /// Starts building a registry from the methods linked into this binary.
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

    /// The versions in which group `group` has at least one method.
    pub fn group_versions<'a>(&'a self, group: &'a str) -> impl Iterator<Item = u32> + 'a {
        self.versions.iter().filter(move |(_, t)| t.group(group).next().is_some()).map(|(v, _)| *v)
    }

    /// The names of every group some method belongs to, sorted.
    pub fn groups(&self) -> BTreeSet<&'static str> {
        self.versions.values().flat_map(|t| t.iter()).flat_map(|m| m.descriptor.groups.iter().map(|g| g.name)).collect()
    }
}

/// Builds a [`Registry`]: register the service instances, then [`build`](Self::build).
#[derive(Default)]
pub struct RegistryBuilder {
    instances: HashMap<TypeId, ServiceInstance>,
    services: Option<Vec<&'static ServiceDescriptor>>,
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBuilder").field("instances", &self.instances.len()).finish_non_exhaustive()
    }
}

impl RegistryBuilder {
    /// Registers a service instance; its methods run on it.
    pub fn service<T: Any + Send + Sync>(self, instance: T) -> Self {
        self.service_arc(Arc::new(instance))
    }

    /// Registers a shared service instance.
    pub fn service_arc<T: Any + Send + Sync>(mut self, instance: Arc<T>) -> Self {
        self.instances.insert(TypeId::of::<T>(), instance);
        self
    }

    /// Uses exactly these service descriptors instead of every one linked
    /// into the binary (useful to build several independent registries).
    pub fn descriptors(mut self, services: impl IntoIterator<Item = &'static ServiceDescriptor>) -> Self {
        self.services = Some(services.into_iter().collect());
        self
    }

    /// Uses only the services declared in module `module` or below it
    /// (e.g. `"catalog"` or `"catalog::services"`), so several applications
    /// linked into one binary each get their own registry.
    pub fn module(mut self, module: &str) -> Self {
        let prefix = format!("{module}::");
        let services = self.services.take().unwrap_or_else(|| descriptor::all_services().collect());
        self.services = Some(services.into_iter().filter(|s| s.type_name.starts_with(&prefix)).collect());
        self
    }

    /// Resolves every method to its service instance, builds the version
    /// tables, schemas and validators. Reports every problem at once.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let services = self.services.unwrap_or_else(|| descriptor::all_services().collect());
        let mut problems = Vec::new();

        // Resolve instances and build methods, per declared version.
        let mut declared: BTreeMap<u32, Vec<(&'static ServiceDescriptor, Arc<Method>)>> = BTreeMap::new();
        let mut removed: BTreeMap<u32, Vec<(&'static str, &'static ServiceDescriptor)>> = BTreeMap::new();
        let mut sorted = services;
        sorted.sort_by_key(|s| (s.version, s.file, s.line));
        for service in sorted {
            removed.entry(service.version).or_default().extend(service.removed.iter().map(|n| (*n, service)));
            declared.entry(service.version).or_default();
            if service.methods.is_empty() {
                continue;
            }
            let Some(instance) = self.instances.get(&(service.type_id)()) else {
                let names: Vec<&str> = service.methods.iter().map(|m| m.name).collect();
                problems.push(format!(
                    "service `{}` (declared at {}:{}) was never registered, but its methods {} need it: \
                     call `.service(...)` with an instance when building the registry",
                    service.type_name,
                    service.file,
                    service.line,
                    names.join(", ")
                ));
                continue;
            };
            for descriptor in service.methods {
                let schemas = build_method_schemas(descriptor);
                match ParamValidator::new(&schemas.input) {
                    Ok(validator) => declared.entry(service.version).or_default().push((
                        service,
                        Arc::new(Method { descriptor, service, instance: instance.clone(), schemas, validator }),
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
                } else if table.methods.remove(name).is_none() {
                    problems.push(format!(
                        "version {version} removes `{name}`, which no earlier version has (removed by `{}` at {}:{})",
                        service.type_name, service.file, service.line
                    ));
                }
            }
            previous = table.clone();
            versions.insert(version, table);
        }

        if problems.is_empty() { Ok(Registry { versions }) } else { Err(RegistryError { problems }) }
    }
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
