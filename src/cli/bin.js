#!/usr/bin/env node
// Development launcher: runs the CLI from the TypeScript sources through tsx, without a build
// (`node src/cli/bin.js …`; the test suite's CLI helper uses it). The installed `devicebridge`
// command is the built dist/cli/bin.js (`npm run build`), which never loads tsx.
import { register } from 'tsx/esm/api';

register();
await import('./bin.ts');
