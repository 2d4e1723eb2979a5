// Node 20 lacks fs.globSync, which @modelcontextprotocol/conformance imports by
// name (it uses it only to summarise result folders in `tier-check`), so on
// Node 20 the suite fails to load. Preload this file (node --import, or
// NODE_OPTIONS=--import=...) to give the suite's modules an `fs` that has it.
// Used by scripts/interop.sh only when `node` lacks fs.globSync.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
