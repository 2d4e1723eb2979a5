// Module resolution hook: `fs` / `node:fs`, imported from the conformance
// suite's own files, resolves to ./fs.mjs (all of node:fs plus globSync).
const shim = new URL('./fs.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL?.includes('/@modelcontextprotocol/conformance/')
  ) {
    return { url: shim, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
