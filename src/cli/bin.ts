#!/usr/bin/env node
// Entry point of the `devicebridge` command (package.json `bin` → dist/cli/bin.js, plain Node).
// From a checkout without a build, `node src/cli/bin.js` runs this file through tsx.

// The AWS SDK is pinned to the last line that supports Node 20 (package.json; the package itself now
// needs Node 22+, so the pin may move on); its notice that later versions need Node 22 is known and
// would only clutter `--json` output on stderr. Set before the
// CLI (and through it the SDK) is imported, hence the dynamic import.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { installCrashHandlers, main } = await import('./main.ts');
installCrashHandlers();
const code = await main(process.argv);
// A failed command has printed its one line and awaited its own cleanup: end now rather than wait
// for the runtime to wind down (seconds on a loaded machine). Output to pipes, files and terminals
// is written synchronously on Linux, so nothing printed is lost. Success exits naturally.
if (code !== 0) process.exit(code);
process.exitCode = code;
