#!/usr/bin/env node
// ingest_duckdb.mjs copies the rows of input files into one Parquet file with
// DuckDB (@duckdb/node-api, in-memory database), for floe's formats benchmark:
//
//   node bench/ingest_duckdb.mjs < request.json
//
// request: {"modules": DIR, "format": "csv" | "json" | "parquet", "files": [path, ...],
//           "out": path, "threads": N or 0, "level": N or 0, "rowGroupSize": N or 0}
// where DIR is a directory whose node_modules holds @duckdb/node-api (interop/).
// The statement is what a user would write for typed rows into zstd Parquet:
//   SET threads = N;   -- when threads > 0, else DuckDB's default (one per core)
//   COPY (SELECT * FROM read_csv([...], header = true, columns = {...}))   -- or read_json, read_parquet
//     TO out (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL level, ROW_GROUP_SIZE n)
// with the columns of floe's events (ts a TIMESTAMP) for the text formats; level
// and rowGroupSize are left to DuckDB when 0.
// Output: one JSON line {"rows": "N", "wallMs": T, "cpuMs": C}; wall
// (performance.now) and CPU (process.cpuUsage: user + system of every thread of
// this process, DuckDB's included) cover the COPY alone, not node's start-up
// nor opening the database. Exit 1 with the error on stderr on any failure.
import { createRequire } from 'node:module'
import path from 'node:path'

async function readStdin() {
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  return Buffer.concat(chunks).toString('utf8')
}

const sqlString = s => `'${String(s).replaceAll("'", "''")}'`

// The events' columns, as floe's benchmark declares them to floe.
const columns = "{'id': 'BIGINT', 'ts': 'TIMESTAMP', 'category': 'VARCHAR', 'v': 'DOUBLE', 'payload': 'VARCHAR'}"

function reader(format, files) {
  const list = `[${files.map(sqlString).join(', ')}]`
  switch (format) {
    case 'csv': return `read_csv(${list}, header = true, columns = ${columns})`
    case 'json': return `read_json(${list}, format = 'newline_delimited', columns = ${columns})`
    case 'parquet': return `read_parquet(${list})`
    default: throw new Error(`format ${JSON.stringify(format)}: want csv, json or parquet`)
  }
}

try {
  const req = JSON.parse(await readStdin())
  const require = createRequire(path.join(path.resolve(req.modules), 'package.json'))
  const { DuckDBInstance } = require('@duckdb/node-api')
  const db = await DuckDBInstance.create(':memory:')
  const con = await db.connect()
  if (req.threads > 0) await con.run(`SET threads = ${Number(req.threads)}`)
  const opts = ['FORMAT parquet', 'COMPRESSION zstd']
  if (req.level > 0) opts.push(`COMPRESSION_LEVEL ${Number(req.level)}`)
  if (req.rowGroupSize > 0) opts.push(`ROW_GROUP_SIZE ${Number(req.rowGroupSize)}`)
  const sql = `COPY (SELECT * FROM ${reader(req.format, req.files)}) TO ${sqlString(req.out)} (${opts.join(', ')})`
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const result = await con.runAndReadAll(sql)
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  // COPY answers with the number of rows it wrote.
  const rows = result.getRows()[0]?.[0]
  process.stdout.write(JSON.stringify({ rows: String(rows), wallMs, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n')
  con.closeSync?.()
} catch (err) {
  process.stderr.write(`ingest_duckdb.mjs: ${err?.stack ?? err}\n`)
  process.exit(1)
}
