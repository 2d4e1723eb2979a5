//! The black-box tests, linked into one test binary: one link and one copy
//! of the client and server code instead of one per file (CI builds this
//! crate in a minute instead of nine). Each module holds one area; services
//! are registered by type, so the modules' services never meet.
//!
//! `mcp_session_memory` stays its own binary: it measures this process's
//! resident memory, so nothing else may run beside it.

mod jsonrpc_common;

mod app;
mod axum_mount;
mod cache_control;
mod compact_descriptors;
mod docs_page;
mod hostile_props;
mod i18n;
mod jsonrpc_arity;
mod jsonrpc_chaining;
mod jsonrpc_errors;
mod jsonrpc_http;
mod jsonrpc_methods;
mod jsonrpc_openrpc;
mod jsonrpc_params;
mod jsonrpc_schemas;
mod jsonrpc_services;
mod jsonrpc_spec;
mod jsonrpc_versions;
mod mcp_asking;
mod mcp_context;
mod mcp_documents;
mod mcp_http;
mod mcp_resources;
mod mcp_rmcp;
mod mcp_rmcp_eras;
mod mcp_schemas;
mod mcp_session_bounds;
mod mcp_stateless;
mod mcp_task_queue;
mod mcp_tasks;
mod mcp_updates;
mod oauth_fixture;
mod pipeline_cache;
mod pipeline_events;
mod pipeline_locks;
mod pipeline_queue;
mod pipeline_raw_params;
mod pipeline_special;
mod registration;
mod router_nesting;
mod security_access;
mod security_limits;
mod security_oauth;
mod security_oauth_introspection;
mod security_oauth_scopes;
mod security_rate_limits;
mod security_rebinding;
mod server_limits;
mod stores;
mod validation_bounds;
mod validation_rules;
