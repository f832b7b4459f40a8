// Settings the whole team service must agree on, stored once in aa_settings (migration 2) instead of per node: a node
// started with its own --retention-s must not delete what the rest of the fleet keeps. The first API node of a
// database stores its values (given, or the defaults); every later node uses the stored ones and, when it was
// given a different value, says so in a warning. An admin changes them with `article-audio settings set NAME VALUE`;
// API nodes re-read them at every retention sweep (at most a minute). The lease (lease-s) is the workers': the first
// worker stores it, each worker reads it at start (its heartbeat follows from it), so all of them agree on how long a
// silent worker's jobs wait before another takes them.
import type { Pool } from 'pg';
import type { Logger } from '../core/logger';
import { UsageError } from '../settings';

export const FLEET_SETTINGS = {
  'retention-s': { min: 1, help: 'seconds a finished job, its events and files are kept (default 86400)' },
  'queue-depth': { min: 1, help: 'jobs waiting over the whole service before submissions get 429 (default 100)' },
  'token-max-jobs': { min: 0, help: 'unfinished jobs one token may have at once; 0: no limit (default 20)' },
  'token-submit-rate': { min: 0, help: 'submissions one token may make a minute; 0: no limit (default 60)' },
  'lease-s': {
    min: 1,
    help: "seconds a worker's claim holds without a heartbeat (default 30; heartbeats every third of it, at most 5 s); stored by the first worker",
  },
} as const;

/** When the nodes take a changed value: API nodes re-read theirs at every sweep, workers read the lease at start. */
function takesEffect(name: FleetSettingName): string {
  return name === 'lease-s'
    ? 'workers use it from their next start; restart them one at a time'
    : 'API nodes use it from their next sweep, within a minute';
}

export type FleetSettingName = keyof typeof FLEET_SETTINGS;
export type FleetValues = Record<FleetSettingName, number>;
/** The settings API nodes agree on (the lease is the workers'). */
export type ApiFleetValues = Omit<FleetValues, 'lease-s'>;

export interface StoredSetting {
  name: string;
  value: string;
  set_at: Date;
  set_by: string;
}

export function isFleetSetting(name: string): name is FleetSettingName {
  return Object.hasOwn(FLEET_SETTINGS, name);
}

/** A setting's value from the command line or the table: a number within its range, else undefined. */
export function parseSetting(name: FleetSettingName, text: string): number | undefined {
  if (!/^\d{1,12}(\.\d{1,3})?$/.test(text.trim())) return undefined;
  const value = Number(text);
  return value >= FLEET_SETTINGS[name].min ? value : undefined;
}

export async function readSettings(pool: Pool): Promise<StoredSetting[]> {
  const { rows } = await pool.query<StoredSetting>('SELECT name, value, set_at, set_by FROM aa_settings ORDER BY name');
  return rows;
}

/**
 * The stored values of the settings in `base`, over `base` (a stored value this release cannot read is ignored, with
 * a warning; settings not in `base` are not this node's).
 */
export function storedValues<V extends Partial<FleetValues>>(rows: readonly StoredSetting[], base: V, log?: Logger): V {
  const values: Partial<FleetValues> = { ...base };
  for (const row of rows) {
    if (!isFleetSetting(row.name) || !Object.hasOwn(base, row.name)) continue;
    const value = parseSetting(row.name, row.value);
    if (value === undefined) log?.('warn', `Ignoring the stored fleet setting ${row.name} = "${row.value}".`);
    else values[row.name] = value;
  }
  return values as V;
}

/**
 * At a node's start: stores `defaults` for the settings of `defaults` nobody stored yet (the first node sets them),
 * then returns the stored values of those settings; every value this node was `given` that differs from the stored
 * one is warned about. API nodes agree on retention, queue depth and token limits; workers on the lease.
 */
export async function agreeOnSettings<N extends FleetSettingName>(
  pool: Pool,
  given: Partial<Record<N, number>>,
  defaults: Record<N, number>,
  node: string,
  log: Logger,
): Promise<Record<N, number>> {
  const names = Object.keys(defaults) as N[];
  for (const name of names) {
    await pool.query(
      'INSERT INTO aa_settings (name, value, set_by) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
      [name, String(given[name] ?? defaults[name]), `the first node, ${node}`],
    );
  }
  const rows = (await readSettings(pool)).filter((r) => (names as string[]).includes(r.name));
  const values = storedValues(rows, defaults as Partial<FleetValues>, log) as Record<N, number>;
  for (const name of names) {
    const wanted = given[name];
    if (wanted === undefined || wanted === values[name]) continue;
    const row = rows.find((r) => r.name === name);
    log(
      'warn',
      `--${name} ${wanted} differs from the fleet's stored ${name} ${values[name]} (set by ${row?.set_by ?? '?'} at ` +
        `${row?.set_at.toISOString() ?? '?'}): using the stored value. To change it for every node: ` +
        `article-audio settings set ${name} ${wanted} --database …`,
      { setting: name, given: wanted, stored: values[name] },
    );
  }
  return values;
}

/** `article-audio settings [list] | set NAME VALUE`: prints lines for stdout. */
export async function manageSettings(
  pool: Pool,
  args: readonly string[],
  by: string,
  print: (line: string) => void,
): Promise<boolean> {
  const [action = 'list', name, value, ...extra] = args;
  if (action === 'list' && name === undefined) {
    const rows = await readSettings(pool);
    for (const known of Object.keys(FLEET_SETTINGS)) {
      const row = rows.find((r) => r.name === known);
      print(
        row
          ? `${known}\t${row.value}\tset by ${row.set_by} at ${row.set_at.toISOString()}`
          : `${known}\t(not stored yet: the first ${known === 'lease-s' ? 'worker' : 'API node'} stores its own)`,
      );
    }
    return true;
  }
  if (action !== 'set' || name === undefined || value === undefined || extra.length > 0) return false;
  if (!isFleetSetting(name))
    throw new UsageError(`Unknown setting "${name}". Settings: ${Object.keys(FLEET_SETTINGS).join(', ')}.`);
  const parsed = parseSetting(name, value);
  if (parsed === undefined)
    throw new UsageError(`${name} must be a number of at least ${FLEET_SETTINGS[name].min}, not "${value}".`);
  await pool.query(
    `INSERT INTO aa_settings (name, value, set_by) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, set_by = EXCLUDED.set_by, set_at = now()`,
    [name, String(parsed), by],
  );
  print(`${name} = ${parsed} (${takesEffect(name)})`);
  return true;
}
