/**
 * The HTTP contract of the bridge: every route's parameters, request bodies and answers as zod
 * schemas (they feed the OpenAPI document and validate requests) and the TypeScript types inferred
 * from them (the typed client `devicebridge/client` and the tests use these). One place: routes,
 * the application layer and the client import from here.
 */
export * from './adb-endpoint.ts';
export * from './devices.ts';
export * from './doctor.ts';
export * from './errors.ts';
export * from './farm.ts';
export * from './glass.ts';
export * from './health.ts';
export * from './helper-operations.ts';
export * from './helpers.ts';
export * from './leases.ts';
export * from './mcp.ts';
export * from './screen.ts';
export * from './whoami.ts';
