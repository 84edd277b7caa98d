#!/usr/bin/env node
// scan_duckdb.mjs answers one scan query of floe's scan benchmark with
// DuckDB (@duckdb/node-api, in-memory database) over a list of Parquet files:
//
//   node bench/scan_duckdb.mjs < request.json
//
// request: {"modules": DIR, "files": [path, ...], "where": "SQL predicate or empty"}
// where DIR is a directory whose node_modules holds @duckdb/node-api (interop/).
// Output: one JSON line {"rows": "N", "sum": X, "wallMs": T, "cpuMs": C}; wall
// (performance.now) and CPU (process.cpuUsage: user + system of every thread of
// this process, DuckDB's included) cover the query alone, not node's start-up
// nor opening the database. Exit 1 with the error on stderr on any failure.
import { createRequire } from 'node:module'
import path from 'node:path'

async function readStdin() {
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  return Buffer.concat(chunks).toString('utf8')
}

const sqlString = s => `'${String(s).replaceAll("'", "''")}'`

try {
  const req = JSON.parse(await readStdin())
  const require = createRequire(path.join(path.resolve(req.modules), 'package.json'))
  const { DuckDBInstance } = require('@duckdb/node-api')
  const db = await DuckDBInstance.create(':memory:')
  const con = await db.connect()
  let sql = `SELECT count(*)::BIGINT AS n, sum(v)::DOUBLE AS s FROM read_parquet([${req.files.map(sqlString).join(', ')}])`
  if (req.where) sql += ` WHERE ${req.where}`
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const reader = await con.runAndReadAll(sql)
  const rows = reader.getRowObjects()
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const { n, s } = rows[0]
  process.stdout.write(JSON.stringify({ rows: String(n), sum: s ?? 0, wallMs, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n')
  con.closeSync?.()
} catch (err) {
  process.stderr.write(`scan_duckdb.mjs: ${err?.stack ?? err}\n`)
  process.exit(1)
}
