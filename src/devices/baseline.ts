/**
 * A device's baseline and the reset between tenants, pure: the shell script that reads what adb can
 * see of a device in one round trip (third-party packages, files where the shell user writes,
 * settings, shell-user processes), its parser, the difference between a reading and the baseline,
 * and the batched scripts that undo it (one script per kind of step) with their parsers. The I/O
 * lives in `device-reset.ts`; what a farm configures in `reset-policy.ts`.
 *
 * Every device-controlled string is treated as hostile: the sections of a reading are delimited by a
 * random marker the device cannot guess, paths come NUL-separated from `find -print0`, and every
 * argument of a reset script goes through the one quoting function.
 */
import { quoteShellArg } from '../adb/shell-quote.ts';
import type { ResetPolicy } from './reset-policy.ts';

export const SETTINGS_TABLES = ['global', 'secure', 'system'] as const;
export type SettingsTable = (typeof SETTINGS_TABLES)[number];

export interface BaselinePackage {
  /** The APK path (`pm list packages -f`): a reinstall moves it. */
  path: string;
  /** null where `pm` cannot print it (Android 8.1 and older). */
  versionCode: number | null;
  /** sha256 of the APK (recorded for the baseline only). */
  sha256?: string | null;
}

export interface ShellProcess {
  pid: number;
  args: string;
  /** The SELinux context where `ps` prints it (Android 8+): adbd's is `u:r:adbd:s0`. */
  label?: string;
}

/** What one reading of a device shows. */
export interface DeviceReading {
  packages: Record<string, BaselinePackage>;
  /** Directories under the scanned roots (not under a folder left alone), sorted. */
  dirs: string[];
  /** Everything else under the scanned roots (files, links), sorted. */
  files: string[];
  settings: Record<SettingsTable, Record<string, string>>;
  /** Shell-user processes (the reading's own shell and its children excluded). */
  processes: ShellProcess[];
}

/** What the reset restores a device to: a reading taken when the device joined the pool. */
export interface DeviceBaseline extends DeviceReading {
  version: 1;
  capturedAt: number;
}

/** The counts shown in the devices API. */
export interface BaselineSummary {
  capturedAt: number;
  packages: number;
  files: number;
  settings: number;
  processes: number;
}

export function summarizeBaseline(b: DeviceBaseline): BaselineSummary {
  return {
    capturedAt: b.capturedAt,
    packages: Object.keys(b.packages).length,
    files: b.files.length + b.dirs.length,
    settings: SETTINGS_TABLES.reduce((n, t) => n + Object.keys(b.settings[t]).length, 0),
    processes: b.processes.length,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading.

/** The reading's sections, in the order the script prints them. */
export const READING_SECTIONS = [
  'packages',
  'settings-global',
  'settings-secure',
  'settings-system',
  'dirs',
  'files',
  'self',
  'processes',
  'end',
] as const;
type Section = (typeof READING_SECTIONS)[number];

/** A marker the device cannot predict (hex). */
export function readingMarker(random: () => string): string {
  const nonce = random();
  if (!/^[0-9a-f]{16,64}$/.test(nonce)) throw new Error('reading marker nonce must be 16-64 hex digits');
  return `@@devicebridge-${nonce}`;
}

/**
 * The one-round-trip reading script. Each section starts on a line of its own (`MARKER:name`);
 * `find` lists NUL-separated paths (`-H`: a root that is a link, such as `/sdcard`, is followed);
 * `ps` prints PID, PPID, USER and ARGS (toybox, Android 8+), or the old toolbox table (Android 7).
 */
/**
 * Third-party packages with their APK paths and versionCodes; `--show-versioncode` is Android 9+ (an
 * older `pm` refuses the option: list without it).
 */
export const PACKAGE_LIST_COMMAND =
  '{ pm list packages -3 -f --show-versioncode || pm list packages -3 -f; } 2>/dev/null';

export function readingScript(policy: Pick<ResetPolicy, 'roots'>, marker: string): string {
  const roots = policy.roots.map(quoteShellArg).join(' ');
  const at = (s: Section) => `echo; echo ${marker}:${s}`;
  return [
    `${at('packages')}; ${PACKAGE_LIST_COMMAND}`,
    ...SETTINGS_TABLES.map((t) => `${at(`settings-${t}`)}; settings list ${t} 2>/dev/null`),
    `${at('dirs')}; find -H ${roots} -mindepth 1 -type d -print0 2>/dev/null`,
    `${at('files')}; find -H ${roots} -mindepth 1 ! -type d -print0 2>/dev/null`,
    `${at('self')}; echo $$`,
    `${at('processes')}; ps -A -o PID,PPID,USER,LABEL,ARGS 2>/dev/null || ps`,
    at('end'),
  ].join('\n');
}

/** Split a reading's output into its sections; throws when a section is missing (a cut reading). */
function sections(out: Buffer, marker: string): Record<Section, Buffer> {
  const found = {} as Record<Section, Buffer>;
  let cursor = 0;
  let current: Section | null = null;
  for (const name of READING_SECTIONS) {
    const tag = Buffer.from(`\n${marker}:${name}\n`);
    const at = out.indexOf(tag, cursor);
    if (at === -1) throw new Error(`the device's reading has no ${name} section (output cut short?)`);
    if (current !== null) found[current] = out.subarray(cursor, at);
    cursor = at + tag.length;
    current = name;
  }
  found.end = out.subarray(cursor);
  return found;
}

/** `package:<path>=<name> [versionCode:<n>]` lines (the path may itself hold `=`). */
export function parsePackageList(text: string): Record<string, BaselinePackage> {
  const out: Record<string, BaselinePackage> = Object.create(null);
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('package:')) continue;
    let body = line.slice('package:'.length);
    let versionCode: number | null = null;
    const vc = / versionCode:(\d{1,18})$/.exec(body);
    if (vc) {
      versionCode = Number(vc[1]);
      body = body.slice(0, vc.index);
    }
    const eq = body.lastIndexOf('=');
    if (eq <= 0) continue;
    const name = body.slice(eq + 1);
    if (!/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/.test(name)) continue;
    out[name] = { path: body.slice(0, eq), versionCode };
  }
  return out;
}

/** `settings list` output: `key=value` lines (a value runs to the end of its line). */
export function parseSettingsList(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out[line.slice(0, eq)] = line.slice(eq + 1).replace(/\r$/, '');
  }
  return out;
}

/** NUL-separated paths, sorted (duplicates dropped). */
export function parsePathList(bytes: Buffer): string[] {
  const paths = new Set<string>();
  for (const p of bytes.toString('utf8').split('\0')) {
    const path = p.replace(/^\n/, '');
    if (path.startsWith('/')) paths.add(path);
  }
  return [...paths].sort();
}

/**
 * Shell-user processes from `ps -A -o PID,PPID,USER,LABEL,ARGS` (toybox; `PID,PPID,USER,ARGS` read
 * too) or plain `ps` (toolbox: `USER PID PPID VSIZE RSS WCHAN PC NAME`), without the reading's own
 * shell (`self`) and its children.
 */
export function parseProcesses(text: string, self: number | null): ShellProcess[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = (lines.shift() ?? '').trim().split(/\s+/);
  const out: ShellProcess[] = [];
  const toybox = header[0] === 'PID';
  const labelled = toybox && header[3] === 'LABEL';
  for (const line of lines) {
    const cols = line.trim().split(/\s+/);
    let pid: number;
    let ppid: number;
    let user: string | undefined;
    let args: string;
    let label: string | undefined;
    if (toybox) {
      pid = Number(cols[0]);
      ppid = Number(cols[1]);
      user = cols[2];
      if (labelled) label = cols[3];
      args = cols.slice(labelled ? 4 : 3).join(' ');
    } else {
      user = cols[0];
      pid = Number(cols[1]);
      ppid = Number(cols[2]);
      args = cols.slice(8).join(' ') || (cols[cols.length - 1] ?? '');
    }
    if (!Number.isSafeInteger(pid) || pid <= 0 || user !== 'shell') continue;
    if (self !== null && (pid === self || ppid === self)) continue;
    out.push(label === undefined ? { pid, args } : { pid, args, label });
  }
  return out.sort((a, b) => a.pid - b.pid);
}

/** Whether `path` is `prefix` or inside it. */
export function isUnder(path: string, prefix: string): boolean {
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return path === p || path.startsWith(`${p}/`);
}

/** Parse the reading script's output (taken with `marker`) under the policy's folders left alone. */
export function parseReading(
  out: Buffer,
  marker: string,
  policy: Pick<ResetPolicy, 'leaveAlone'>,
): DeviceReading {
  const s = sections(out, marker);
  const text = (b: Buffer) => b.toString('utf8');
  const kept = (p: string) => !policy.leaveAlone.some((prefix) => isUnder(p, prefix));
  const selfText = text(s.self).trim();
  const self = /^\d+$/.test(selfText) ? Number(selfText) : null;
  return {
    packages: parsePackageList(text(s.packages)),
    dirs: parsePathList(s.dirs).filter(kept),
    files: parsePathList(s.files).filter(kept),
    settings: {
      global: parseSettingsList(text(s['settings-global'])),
      secure: parseSettingsList(text(s['settings-secure'])),
      system: parseSettingsList(text(s['settings-system'])),
    },
    processes: parseProcesses(text(s.processes), self),
  };
}

// ---------------------------------------------------------------------------------------------
// Difference.

export interface SettingChange {
  table: SettingsTable;
  key: string;
  /** The baseline's value; null: the key was added during the lease (delete it). */
  value: string | null;
  /** What the device holds now; null: the key was deleted during the lease. */
  now: string | null;
}

export interface ReplacedPackage {
  name: string;
  baseline: BaselinePackage;
  now: BaselinePackage;
}

/** What differs from the baseline, as the reset sees it. */
export interface DeviceDiff {
  /** Packages added during the lease (to uninstall). */
  addedPackages: string[];
  /** Baseline packages whose APK moved (reinstalled): the caller decides by sha256. */
  movedPackages: ReplacedPackage[];
  /** Baseline packages that are gone. */
  missingPackages: string[];
  /** Added files and directories, only the topmost of each added tree (to `rm -rf`). */
  addedPaths: string[];
  /** Baseline files or directories that are gone. */
  missingPaths: string[];
  settings: SettingChange[];
  /** Shell-user processes not in the baseline (to kill). */
  processes: ShellProcess[];
}

export interface DiffContext {
  /** Packages that are not the tenant's to leave: kept apps, the bridge's own helpers (decided by the caller). */
  keepPackages?: ReadonlySet<string>;
  /** Paths the bridge itself keeps on the device (helper jars), never removed. */
  keepPaths?: ReadonlySet<string>;
}

function settingKey(table: SettingsTable, key: string): string {
  return `${table}:${key}`;
}

/** Whether the farm manages this setting (left alone by the reset). */
export function isManagedSetting(
  policy: Pick<ResetPolicy, 'managedSettings'>,
  table: SettingsTable,
  key: string,
): boolean {
  const full = settingKey(table, key);
  return policy.managedSettings.some((m) => (m.endsWith('*') ? full.startsWith(m.slice(0, -1)) : full === m));
}

/** `settings put` cannot write an empty value (hosts delete the key instead): '' and absent are one. */
function sameSetting(a: string | undefined, b: string | undefined): boolean {
  return (a ?? '') === (b ?? '');
}

/**
 * adbd runs as the shell user on production builds: it is never the tenant's (killing it would cut
 * the device off), whatever its pid after a reboot. Known by its SELinux domain, which a shell-user
 * process cannot take whatever it calls itself; where `ps` prints no label (Android 7), by its path.
 */
export function isAdbd(p: ShellProcess): boolean {
  if (p.label !== undefined) return p.label === 'u:r:adbd:s0';
  const program = p.args.split(' ', 1)[0] ?? '';
  return program === '/sbin/adbd' || program === '/system/bin/adbd';
}

export function diffReading(
  baseline: DeviceReading,
  now: DeviceReading,
  policy: Pick<ResetPolicy, 'managedSettings' | 'keepPackages' | 'keepProcesses'>,
  context: DiffContext = {},
): DeviceDiff {
  const keepPackage = (name: string) =>
    policy.keepPackages.includes(name) || context.keepPackages?.has(name) === true;
  const addedPackages: string[] = [];
  const movedPackages: ReplacedPackage[] = [];
  for (const [name, pkg] of Object.entries(now.packages)) {
    const base = baseline.packages[name];
    if (keepPackage(name)) continue;
    if (base === undefined) addedPackages.push(name);
    else if (
      base.path !== pkg.path ||
      (base.versionCode !== null && pkg.versionCode !== null && base.versionCode !== pkg.versionCode)
    )
      movedPackages.push({ name, baseline: base, now: pkg });
  }
  const missingPackages = Object.keys(baseline.packages).filter(
    (name) => now.packages[name] === undefined && !keepPackage(name),
  );

  const basePaths = new Set([...baseline.dirs, ...baseline.files]);
  const nowPaths = [...now.dirs, ...now.files].sort();
  const addedPaths: string[] = [];
  for (const path of nowPaths) {
    if (basePaths.has(path) || context.keepPaths?.has(path)) continue;
    // Only the topmost of an added tree: `rm -rf` of it removes the rest.
    const last = addedPaths[addedPaths.length - 1];
    if (last !== undefined && isUnder(path, last)) continue;
    addedPaths.push(path);
  }
  const nowSet = new Set(nowPaths);
  const missingPaths = [...basePaths].filter((p) => !nowSet.has(p)).sort();

  const settings: SettingChange[] = [];
  for (const table of SETTINGS_TABLES) {
    const base = baseline.settings[table];
    const cur = now.settings[table];
    for (const key of new Set([...Object.keys(base), ...Object.keys(cur)])) {
      if (isManagedSetting({ managedSettings: policy.managedSettings }, table, key)) continue;
      if (sameSetting(base[key], cur[key])) continue;
      settings.push({ table, key, value: base[key] ?? null, now: cur[key] ?? null });
    }
  }
  settings.sort((a, b) => (settingKey(a.table, a.key) < settingKey(b.table, b.key) ? -1 : 1));

  const baseProcs = new Set(baseline.processes.map((p) => `${p.pid} ${p.args}`));
  const keepProc = (p: ShellProcess) =>
    isAdbd(p) || policy.keepProcesses.some((re) => new RegExp(re).test(p.args));
  const processes = now.processes.filter((p) => !baseProcs.has(`${p.pid} ${p.args}`) && !keepProc(p));

  return {
    addedPackages: addedPackages.sort(),
    movedPackages: movedPackages.sort((a, b) => (a.name < b.name ? -1 : 1)),
    missingPackages: missingPackages.sort(),
    addedPaths,
    missingPaths,
    settings,
    processes,
  };
}

/** What the reset does about packages (pure: the APK sums were read by the caller). */
export interface PackageDecisions {
  /** Packages to uninstall: added by the tenant, or an impostor under a helper's name. */
  uninstall: string[];
  /** Baseline entries to write (a package reinstalled with the same APK, a helper the bridge updated), or to drop (null). */
  baseline: Record<string, BaselinePackage | null>;
  /** Said in the record. */
  notes: string[];
  /** What cannot be undone (the device leaves the pool). */
  failures: string[];
}

/**
 * Decide about added, moved and missing packages. `helpers` maps the bridge's own helper packages to
 * the sha256s of their published releases: such a package stays (and its baseline entry follows it)
 * when its APK is one of them, whether added, updated by the bridge or gone (the bridge installs it
 * again when needed); under a helper's name any other APK is uninstalled. A baseline package whose
 * APK moved stays when its bytes are the baseline's; replaced or uninstalled, it cannot be restored.
 */
export function decidePackages(
  diff: Pick<DeviceDiff, 'addedPackages' | 'movedPackages' | 'missingPackages'>,
  reading: Pick<DeviceReading, 'packages'>,
  sums: ReadonlyMap<string, string | null>,
  helpers: ReadonlyMap<string, ReadonlySet<string>>,
): PackageDecisions {
  const out: PackageDecisions = { uninstall: [], baseline: {}, notes: [], failures: [] };
  const helperApk = (name: string, path: string): boolean | null => {
    const allowed = helpers.get(name);
    if (allowed === undefined) return null;
    const sum = sums.get(path);
    return sum !== null && sum !== undefined && allowed.has(sum);
  };
  for (const name of diff.addedPackages) {
    if (helperApk(name, reading.packages[name]!.path) !== true) out.uninstall.push(name);
  }
  for (const m of diff.movedPackages) {
    const sum = sums.get(m.now.path) ?? null;
    const helper = helperApk(m.name, m.now.path);
    if (helper === true || (sum !== null && sum === m.baseline.sha256)) {
      out.baseline[m.name] = { ...m.now, sha256: sum };
      out.notes.push(
        helper === true
          ? `the bridge's helper ${m.name} is a published release: its baseline entry follows it`
          : `baseline package ${m.name} was reinstalled with the same APK`,
      );
      continue;
    }
    if (helper === false) {
      out.uninstall.push(m.name);
      out.baseline[m.name] = null;
      continue;
    }
    const from = m.baseline.versionCode ?? '?';
    const to = m.now.versionCode ?? '?';
    out.failures.push(
      `baseline package ${m.name} was replaced during the lease (versionCode ${from} -> ${to}, another APK): it cannot be restored without its APK`,
    );
  }
  for (const name of diff.missingPackages) {
    if (helpers.has(name)) {
      out.baseline[name] = null;
      out.notes.push(`the bridge's helper ${name} is gone: the bridge installs it again when needed`);
      continue;
    }
    out.failures.push(
      `baseline package ${name} was uninstalled during the lease: it cannot be restored without its APK`,
    );
  }
  out.uninstall.sort();
  return out;
}

/** Whether nothing differs (what the verification after a reset wants). */
export function isClean(diff: DeviceDiff): boolean {
  return (
    diff.addedPackages.length === 0 &&
    diff.movedPackages.length === 0 &&
    diff.missingPackages.length === 0 &&
    diff.addedPaths.length === 0 &&
    diff.missingPaths.length === 0 &&
    diff.settings.length === 0 &&
    diff.processes.length === 0
  );
}

/** One line per difference, for a teardown record or a quarantine reason. */
export function describeDiff(diff: DeviceDiff, limit = 20): string[] {
  const lines = [
    ...diff.addedPackages.map((p) => `package ${p} added`),
    ...diff.movedPackages.map((p) => `package ${p.name} replaced`),
    ...diff.missingPackages.map((p) => `package ${p} removed`),
    ...diff.addedPaths.map((p) => `${JSON.stringify(p)} added`),
    ...diff.missingPaths.map((p) => `${JSON.stringify(p)} removed`),
    ...diff.settings.map(
      (s) =>
        `setting ${s.table} ${s.key} ${s.value === null ? 'added' : s.now === null ? 'deleted' : 'changed'}`,
    ),
    ...diff.processes.map((p) => `process ${p.pid} (${p.args.slice(0, 80)}) running`),
  ];
  return lines.length > limit ? [...lines.slice(0, limit), `… and ${lines.length - limit} more`] : lines;
}

// ---------------------------------------------------------------------------------------------
// Reset scripts: one per kind of step, each item's outcome on a line of its own after the marker.

/** Whether a value can be carried through `adb shell` (no NUL or line break). */
export function quotable(value: string): boolean {
  return !/[\0\r\n]/.test(value);
}

/** `pm uninstall` of each package, each answer after `MARKER:<index>`. */
export function uninstallScript(packages: readonly string[], marker: string): string {
  return packages.map((p, i) => `echo ${marker}:${i}; pm uninstall ${quoteShellArg(p)} 2>&1`).join('\n');
}

/** `rm -rf` of each path, each exit status after `MARKER:<index>`. */
export function removeScript(paths: readonly string[], marker: string): string {
  return paths.map((p, i) => `rm -rf -- ${quoteShellArg(p)} 2>&1; echo ${marker}:${i}:$?`).join('\n');
}

/** `settings put` (or `delete` for an added or empty key) of each change, each exit status after the marker. */
export function settingsScript(changes: readonly SettingChange[], marker: string): string {
  return changes
    .map((c, i) => {
      const key = quoteShellArg(c.key);
      const command =
        c.value === null || c.value === ''
          ? `settings delete ${c.table} ${key}`
          : `settings put ${c.table} ${key} ${quoteShellArg(c.value)}`;
      return `${command} >/dev/null 2>&1; echo ${marker}:${i}:$?`;
    })
    .join('\n');
}

/** `kill -9` of each pid, each exit status after the marker. */
export function killScript(pids: readonly number[], marker: string): string {
  return pids
    .map((pid, i) => {
      if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`not a pid: ${pid}`);
      return `kill -9 ${pid} 2>/dev/null; echo ${marker}:${i}:$?`;
    })
    .join('\n');
}

/**
 * Wake the screen, dismiss a keyguard that has no credential (`wm dismiss-keyguard`, Android 8+; the
 * menu key on older versions), go home.
 */
export const HOME_SCRIPT =
  'input keyevent KEYCODE_WAKEUP; { wm dismiss-keyguard || input keyevent KEYCODE_MENU; } 2>/dev/null; input keyevent KEYCODE_HOME';

/**
 * The per-item outcomes of a reset script: index → exit status (`MARKER:i:status` lines) or the
 * text that followed `MARKER:i` up to the next marker (pm's `Success` / `Failure [...]`).
 */
export function parseItemOutcomes(out: string, marker: string): Map<number, string> {
  const outcomes = new Map<number, string>();
  const lines = out.split('\n');
  let open: { index: number; text: string[] } | null = null;
  const close = () => {
    if (open !== null) outcomes.set(open.index, open.text.join('\n').trim());
    open = null;
  };
  for (const line of lines) {
    if (!line.startsWith(`${marker}:`)) {
      open?.text.push(line);
      continue;
    }
    close();
    const [index, status] = line.slice(marker.length + 1).split(':');
    if (!/^\d+$/.test(index ?? '')) continue;
    if (status !== undefined) outcomes.set(Number(index), status.trim());
    else open = { index: Number(index), text: [] };
  }
  close();
  return outcomes;
}
