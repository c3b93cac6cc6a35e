// The reference CMCD decoder for cdnlab's cross-check (crates/cdnlab/tests/cmcd.rs): SVTA's
// Common Media Library (@svta/cml-cmcd, pinned in package.json). Reads one JSON line per case,
// {"dict": "..."} (a CMCD dictionary) or {"query": "..."} (a URL query string), and writes one
// JSON line per case: {"ok": {key: value, ...}} or {"err": "..."}. An item with parameters
// becomes its bare value, as cdnlab's decoder keeps none; a byte sequence {"bytes": [...]}, a
// date {"date": seconds since the epoch}.
import { decodeCmcd, fromCmcdQuery } from '@svta/cml-cmcd';
import { createInterface } from 'node:readline';

const bare = (v) => {
  if (v instanceof Uint8Array) return { bytes: Array.from(v) };
  if (v instanceof Date) return { date: v.getTime() / 1000 };
  if (Array.isArray(v)) return v.map(bare);
  if (v && typeof v === 'object' && 'value' in v) return bare(v.value);
  return v;
};
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const c = JSON.parse(line);
  let out;
  try {
    const d = 'dict' in c ? decodeCmcd(c.dict) : fromCmcdQuery(c.query);
    const o = {};
    for (const [k, v] of Object.entries(d)) o[k] = bare(v);
    out = { ok: o };
  } catch (e) {
    out = { err: String(e.message) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
