#!/usr/bin/env node
// check.mjs reads one Iceberg table with two readers that share no code with
// floe or iceberg-go — icebird (JavaScript, Parquet through hyparquet) and
// DuckDB (its core Parquet reader, driven from the manifests) — and prints
// the same statistics from each, so that floe's tests can compare them with
// what floe itself reads:
//
//   node interop/check.mjs <metadata.json: path, file:// or s3:// URI> [--path-prefix FROM=TO ...] [--s3-endpoint URL]
//   node interop/check.mjs --table-dir <table directory: path, file:// or s3:// URI> [...same flags]
//
// Output: one JSON object {"icebird": STATS, "duckdb": STATS} where STATS is
//   {"rows": N, "nonNull": {col: N}, "sums": {numericCol: "decimal string"}, "checksum": "hex"}
// --rows adds "canonicalRows": [row, ...] to each STATS: every row the reader
// returned, in the canonical form below, so that a test can compare the rows
// themselves (interop/deletes_test.go's checkRows).
// CHECK_DUMP=1 also prints each reader's canonical rows on stderr.
// On any failure it prints the error on stderr and exits 1 (2 for bad usage).
//
// --path-prefix FROM=TO rewrites every path the table refers to (metadata,
// manifest lists, manifests, data and delete files) that starts with FROM, so
// a table copied to another directory can be read where it now lives.
//
// --s3-endpoint URL (e.g. http://127.0.0.1:7070) makes s3://bucket/key (and
// s3a://) references real HTTP requests to that endpoint: path-style
// (URL/bucket/key), signed with AWS Signature Version 4 from the credentials
// in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN if set) and
// AWS_REGION (default us-east-1), which are never printed. Both readers read
// over it: icebird fetches through the fetch shim (Range requests pass
// through, so Parquet footers and column chunks are read by range), and the
// DuckDB path downloads the files it reads with the same signed GETs into a
// temporary directory (DuckDB without httpfs reads only local files).
// CHECK_S3_LOG=1 prints each S3 request on stderr as
// "s3: METHOD bucket/key [range] -> status" (never headers), so a test can
// see what really went over S3.
//
// The DuckDB side finds data and delete files from the manifests itself
// (through icebird's Avro decoder only) and applies the deletes itself, by
// the spec's rules: a position delete (a Parquet position delete file, or a
// deletion vector) to the data file it names whose data sequence number is
// <= its own; an equality delete to data files whose data sequence number is
// < its own, in its partition (same spec id and partition tuple) unless its
// spec is unpartitioned, when it applies to every partition. Deletion
// vectors (format v3: a Puffin blob at the manifest entry's content_offset,
// content_size_in_bytes) are decoded by dv.mjs, which shares no code with
// any Roaring library; each is checked against its Puffin footer and its
// manifest entry (referenced_data_file, record_count), and two live
// deletion vectors for one data file are an error, as the spec forbids them.
// icebird 0.3.1 reads no deletion vectors (it would parse the Puffin file as
// Parquet): on a snapshot with one, its side fails and says so.
// Format v1 snapshots that list their manifests inline, and v1 manifests
// without sequence numbers (all 0, as the spec says), are read too. Data
// files written without Parquet field ids are resolved through the table's
// schema.name-mapping.default (top-level names; a field no mapped name
// matches reads NULL). Avro fixed values
// (fixed[L] and decimal partition values), which icebird's decoder lacks,
// are re-encoded as bytes first (see reencodeAvro).
//
// --rows: see Output above.
//
// --reader duckdb|icebird runs only that reader (default: both), for tables
// the other one cannot read; the output then has only that reader's key.
//
// --hive-partition-cols COL,COL (DuckDB side only) fills each named top-level
// column, where a data file lacks it (reads NULL), from the `COL=VALUE`
// segment of that data file's path, as Hive-style writers lay partitions out:
// VALUE is URL-decoded, then cast to the column's Iceberg type (binary and
// fixed[L] values are base64, as Spark and PyIceberg write them), and
// __HIVE_DEFAULT_PARTITION__ or null is NULL. This takes identity-partition
// values from the writer's directory names rather than from the manifests.
//
// --table-dir DIR gives the table by its directory alone: icebird is called
// with tableUrl and no metadataFileName, so it finds the current metadata
// itself through DIR/metadata/version-hint.text (the Hadoop layout); the
// DuckDB path uses the metadata icebird resolved that way.
//
// CANONICAL FORM (the Go side, interop_test.go, implements the same):
// A row is a JSON object with the table's top-level columns as keys in schema
// order; a value is canonicalised by its Iceberg type:
//   null                  -> null (any type)
//   boolean               -> true / false
//   int, long             -> decimal string, "-12"
//   float                 -> 8 lowercase hex digits of the IEEE-754 binary32 bits, "3f8ccccd";
//   double                -> 16 hex digits of the binary64 bits; any NaN -> "NaN" (both)
//   decimal(P,S)          -> the unscaled integer as a decimal string, "-123456789"
//   date                  -> days since 1970-01-01, decimal string
//   time                  -> microseconds since midnight, decimal string
//   timestamp(tz)         -> microseconds since 1970-01-01T00:00:00Z, decimal string
//   string                -> the string
//   uuid                  -> lowercase 8-4-4-4-12 hex form
//   binary, fixed[L]      -> lowercase hex of the bytes
//   struct                -> object, fields in schema order
//   list                  -> array of canonical elements
//   map                   -> array of [key, value] pairs, sorted by the pair's canonical JSON
// JSON is written by hand (not JSON.stringify) so that Go can produce the
// same bytes: no whitespace; strings escape only '"', '\' and characters
// below U+0020 (as \u00XX, lowercase hex).
// checksum: the sum mod 2^64 of the first 8 bytes (big-endian) of the SHA-256
// of each row's canonical JSON, as 16 hex digits; order-independent, so
// readers that return rows in different orders agree.
// sums: for int and long, the exact sum; for decimal(P,S), the exact sum
// written with S fractional digits; for float and double, the values sorted
// ascending and added in that order as doubles (so every reader rounds the
// same way), written as toExponential(5) ("1.23457e+5"); NaN if any is NaN.
// Null values are skipped; a column with no non-null values sums to "0".

import { createHash, createHmac } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { inflateRawSync } from 'node:zlib'

import { DEFAULT_PARSERS } from 'hyparquet/src/convert.js'
import { icebergManifests, icebergMetadata, icebergRead } from 'icebird'
import { fetchAvroRecords } from 'icebird/src/fetch.js'
import { splitManifestEntries } from 'icebird/src/manifest.js'

import { readDV } from './dv.mjs'

// ---------------------------------------------------------------- arguments

function usage(msg) {
  process.stderr.write(`check.mjs: ${msg}\nusage: node check.mjs <metadata.json> | --table-dir DIR [--path-prefix FROM=TO ...] [--s3-endpoint URL] [--reader duckdb|icebird] [--hive-partition-cols COL,...] [--rows]\n`)
  process.exit(2)
}

const argv = process.argv.slice(2)
let metadataArg
let tableDirArg
let s3EndpointArg
let readerArg
let hiveCols = []
let wantRows = false
/** @type {[string, string][]} */
const prefixes = []
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]
  if (a === '--path-prefix') {
    const v = argv[++i]
    if (!v || !v.includes('=')) usage('--path-prefix needs FROM=TO')
    const eq = v.indexOf('=')
    prefixes.push([v.slice(0, eq), v.slice(eq + 1)])
  } else if (a.startsWith('--path-prefix=')) {
    const v = a.slice('--path-prefix='.length)
    const eq = v.indexOf('=')
    if (eq < 0) usage('--path-prefix needs FROM=TO')
    prefixes.push([v.slice(0, eq), v.slice(eq + 1)])
  } else if (a === '--table-dir' || a === '--s3-endpoint') {
    const v = argv[++i]
    if (!v) usage(`${a} needs a value`)
    if (a === '--table-dir') tableDirArg = v
    else s3EndpointArg = v
  } else if (a === '--reader' || a.startsWith('--reader=')) {
    readerArg = a === '--reader' ? argv[++i] : a.slice('--reader='.length)
    if (readerArg !== 'duckdb' && readerArg !== 'icebird') usage('--reader must be duckdb or icebird')
  } else if (a === '--hive-partition-cols' || a.startsWith('--hive-partition-cols=')) {
    const v = a === '--hive-partition-cols' ? argv[++i] : a.slice('--hive-partition-cols='.length)
    if (!v) usage('--hive-partition-cols needs COL[,COL...]')
    hiveCols = v.split(',').filter(Boolean)
  } else if (a === '--rows') {
    wantRows = true
  } else if (a.startsWith('--table-dir=')) {
    tableDirArg = a.slice('--table-dir='.length)
  } else if (a.startsWith('--s3-endpoint=')) {
    s3EndpointArg = a.slice('--s3-endpoint='.length)
  } else if (a.startsWith('-')) {
    usage(`unknown flag ${a}`)
  } else if (metadataArg === undefined) {
    metadataArg = a
  } else {
    usage(`unexpected argument ${a}`)
  }
}
if (metadataArg !== undefined && tableDirArg !== undefined) usage('give either a metadata.json path or --table-dir, not both')
if (!metadataArg && !tableDirArg) usage('missing the metadata.json path (or --table-dir DIR)')

/** S3 access when --s3-endpoint is given: the endpoint and the credentials. */
let s3 = null
if (s3EndpointArg !== undefined) {
  let endpoint
  try {
    endpoint = new URL(s3EndpointArg)
  } catch {
    usage(`--s3-endpoint ${s3EndpointArg} is not a URL`)
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') usage('--s3-endpoint must be an http:// or https:// URL')
  const accessKey = process.env.AWS_ACCESS_KEY_ID
  const secretKey = process.env.AWS_SECRET_ACCESS_KEY
  // Named, never shown: the message must not help leak a half-set pair.
  if (!accessKey || !secretKey) usage('--s3-endpoint needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment')
  s3 = {
    endpoint,
    accessKey,
    secretKey,
    token: process.env.AWS_SESSION_TOKEN || undefined,
    region: process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
  }
}

// ---------------------------------------------------------------- file access

/** Rewrites a path or URI by the first matching --path-prefix. */
function mapPrefix(p) {
  // icebird rewrites s3:// and s3a:// paths to AWS HTTPS URLs before it
  // fetches; undo that so prefixes written for the table's paths match.
  const m = /^https:\/\/([^./]+)\.s3\.amazonaws\.com\/(.*)$/.exec(p)
  const candidates = m ? [`s3://${m[1]}/${m[2]}`, `s3a://${m[1]}/${m[2]}`, p] : [p]
  for (const c of candidates) {
    for (const [from, to] of prefixes) {
      if (c.startsWith(from)) return to + c.slice(from.length)
    }
  }
  return p
}

/** Turns a table reference (file:// URI or path, after --path-prefix) into a local path. */
function localPath(ref) {
  const p = mapPrefix(ref)
  if (p.startsWith('file:')) return fileURLToPath(p)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) {
    const hint = s3Location(p) ? 'give --s3-endpoint to read it over S3, or --path-prefix to map it to a local path' : 'give --path-prefix to map it to a local path'
    throw new Error(`${ref}: only local files${s3 ? ' and S3' : ''} are supported (${hint})`)
  }
  return path.resolve(p)
}

const cache = new Map()
/** Reads a referenced file, re-encoding Avro containers (see reencodeAvro). */
function readRef(ref) {
  const p = localPath(ref)
  let buf = cache.get(p)
  if (!buf) {
    buf = readFileSync(p)
    if (p.endsWith('.avro')) buf = reencodeAvro(buf, p)
    cache.set(p, buf)
  }
  return buf
}

// Node 20's fetch rejects file:// and icebird fetches everything, so fetch is
// replaced by a disk reader. It always answers 200 with the whole file, which
// hyparquet accepts in place of a ranged 206; a missing file rejects.
// S3 references (with --s3-endpoint) go to the endpoint instead (s3Fetch).
const realFetch = globalThis.fetch
globalThis.fetch = async (input, init = {}) => {
  const ref = typeof input === 'string' ? input : input.url ?? String(input)
  const loc = s3 ? s3Location(mapPrefix(ref)) : null
  if (loc) return s3Fetch(ref, loc, init)
  let body
  try {
    body = readRef(ref)
  } catch (err) {
    // Rejecting (rather than answering 404) keeps the file name in the
    // error: hyparquet reports only the status of a failed response.
    if (err.code === 'ENOENT') throw new Error(`${ref}: file not found (${err.path})`)
    throw err
  }
  return new Response(body, { status: 200 })
}

// ---------------------------------------------------------------- S3

/**
 * Splits an S3 reference into bucket and key: s3://b/k, s3a://b/k, and the
 * https://b.s3.amazonaws.com/k form icebird turns those into before it
 * fetches (translateS3Url). Anything else is null.
 */
function s3Location(ref) {
  let m = /^s3a?:\/\/([^/]+)\/(.*)$/.exec(ref)
  if (!m) m = /^https:\/\/([^./]+)\.s3\.amazonaws\.com\/(.*)$/.exec(ref)
  if (!m) return null
  return { bucket: m[1], key: m[2] }
}

const sha256Hex = (data) => createHash('sha256').update(data).digest('hex')
const hmac = (key, data) => createHmac('sha256', key).update(data, 'utf8').digest()
// S3's canonical URI encodes each path segment as RFC 3986 does (only
// A-Z a-z 0-9 - _ . ~ unescaped); encodeURIComponent leaves !'()* as they are.
const rfc3986 = (s) => encodeURIComponent(s).replace(/[!'()*]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase())

/**
 * Sends one path-style S3 request (GET or HEAD, empty body) to the endpoint,
 * signed with AWS Signature Version 4. range, if given, is an HTTP Range
 * header value; it is signed too, so a proxy cannot change what is read.
 */
async function s3Request(method, { bucket, key }, range) {
  const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '') // 20060102T150405Z
  const day = amzDate.slice(0, 8)
  const base = s3.endpoint.pathname.replace(/\/+$/, '')
  const canonicalUri = `${base}/${rfc3986(bucket)}/${key.split('/').map(rfc3986).join('/')}`
  const payloadHash = sha256Hex('')
  const headers = { host: s3.endpoint.host, 'x-amz-content-sha256': payloadHash, 'x-amz-date': amzDate }
  if (range) headers.range = range
  if (s3.token) headers['x-amz-security-token'] = s3.token
  const names = Object.keys(headers).sort()
  const canonicalHeaders = names.map(n => `${n}:${String(headers[n]).trim()}\n`).join('')
  const signedHeaders = names.join(';')
  const canonicalRequest = [method, canonicalUri, '', canonicalHeaders, signedHeaders, payloadHash].join('\n')
  const scope = `${day}/${s3.region}/s3/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n')
  let k = hmac('AWS4' + s3.secretKey, day)
  for (const part of [s3.region, 's3', 'aws4_request']) k = hmac(k, part)
  const signature = createHmac('sha256', k).update(stringToSign, 'utf8').digest('hex')
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${s3.accessKey}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`
  // fetch derives Host from the URL (the same host:port signed above).
  delete headers.host
  const url = s3.endpoint.origin + canonicalUri
  const log = (what) => {
    if (process.env.CHECK_S3_LOG) process.stderr.write(`s3: ${method} ${bucket}/${key}${range ? ' ' + range : ''} -> ${what}\n`)
  }
  let res
  try {
    res = await realFetch(url, { method, headers })
  } catch (err) {
    log('error')
    throw new Error(`S3 ${method} ${url}: ${err.cause?.message ?? err.message}`)
  }
  log(res.status)
  if (!res.ok) {
    // S3 errors are XML with a <Code> (SignatureDoesNotMatch, NoSuchKey...);
    // it is what tells a bad signature from a missing object.
    const text = method === 'HEAD' ? '' : await res.text().catch(() => '')
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
    throw new Error(`S3 ${method} ${url}: ${res.status} ${res.statusText}${code ? ` (${code})` : ''}`)
  }
  return res
}

const s3Cache = new Map()
/** The whole object, Avro containers re-encoded as for local files. */
function s3Object(loc) {
  const id = `${loc.bucket}/${loc.key}`
  let p = s3Cache.get(id)
  if (!p) {
    p = s3Request('GET', loc).then(async res => {
      let buf = Buffer.from(await res.arrayBuffer())
      if (loc.key.endsWith('.avro')) buf = reencodeAvro(buf, `s3://${id}`)
      return buf
    })
    s3Cache.set(id, p)
  }
  return p
}

/** Answers icebird's (and hyparquet's) fetch of an S3 reference. */
async function s3Fetch(ref, loc, init) {
  const method = (init.method ?? 'GET').toUpperCase()
  const range = new Headers(init.headers).get('range')
  try {
    if (method === 'HEAD') {
      const res = await s3Request('HEAD', loc)
      return new Response(null, { status: 200, headers: { 'content-length': res.headers.get('content-length') ?? '' } })
    }
    if (method !== 'GET') throw new Error(`${method} is not supported`)
    if (!range) return new Response(await s3Object(loc), { status: 200 })
    // A ranged read goes to S3 as one: hyparquet reads Parquet footers and
    // column chunks this way, and the server must answer 206 with the range.
    const res = await s3Request('GET', loc, range)
    return new Response(await res.arrayBuffer(), { status: res.status, headers: { 'content-range': res.headers.get('content-range') ?? '' } })
  } catch (err) {
    // Rejecting keeps the reference in the error, as for local files.
    throw new Error(`${ref}: ${err.message}`)
  }
}

// The DuckDB path reads S3 objects from a temporary copy, removed at exit.
let s3TempDir
process.on('exit', () => {
  if (s3TempDir) rmSync(s3TempDir, { recursive: true, force: true })
})

/**
 * Returns a local path holding the file a table reference names: the file
 * itself, or, for an S3 reference, a copy downloaded with a signed GET (its
 * own request, not icebird's cached bytes, so the DuckDB path really reads
 * over S3).
 */
async function localFile(ref) {
  const loc = s3 ? s3Location(mapPrefix(ref)) : null
  if (!loc) return localPath(ref)
  s3TempDir ??= mkdtempSync(path.join(tmpdir(), 'check-s3-'))
  const dest = path.resolve(s3TempDir, loc.bucket, ...loc.key.split('/'))
  if (!dest.startsWith(s3TempDir + path.sep)) throw new Error(`${ref}: key escapes the download directory`)
  if (!existsSync(dest)) {
    let res
    try {
      res = await s3Request('GET', loc)
    } catch (err) {
      throw new Error(`${ref}: ${err.message}`)
    }
    mkdirSync(path.dirname(dest), { recursive: true })
    writeFileSync(dest, Buffer.from(await res.arrayBuffer()))
  }
  return dest
}

/** Reads a table reference as text: over S3 or from disk. */
async function readText(ref) {
  const loc = s3 ? s3Location(mapPrefix(ref)) : null
  if (loc) return (await s3Object(loc)).toString('utf8')
  return readFileSync(localPath(ref), 'utf8')
}

// icebird 0.3.1 mis-decodes deflate-compressed Avro blocks (what iceberg-go
// and Java write for manifests), overrunning its buffer. Inflating here with
// zlib and rewriting the container with codec "null" keeps its decoder on the
// path that works; the records are unchanged.

/** avroLong encodes an Avro long: zigzag, then base-128 varint. */
function avroLong(v) {
  let z = BigInt(v) >= 0n ? BigInt(v) << 1n : ((-BigInt(v)) << 1n) - 1n
  const bytes = []
  do {
    let b = Number(z & 0x7fn)
    z >>= 7n
    if (z > 0n) b |= 0x80
    bytes.push(b)
  } while (z > 0n)
  return Buffer.from(bytes)
}

function reencodeAvro(buf, name) {
  let off = 0
  const readLong = () => {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (off >= buf.length) throw new Error(`${name}: truncated Avro file`)
      const b = buf[off++]
      result |= BigInt(b & 0x7f) << shift
      if (!(b & 0x80)) break
      shift += 7n
    }
    return Number((result >> 1n) ^ -(result & 1n))
  }
  const readBytes = () => {
    const n = readLong()
    const out = buf.subarray(off, off + n)
    off += n
    return out
  }
  if (buf.length < 4 || buf.readUInt32BE(0) !== 0x4f626a01) throw new Error(`${name}: not an Avro container file`)
  off = 4
  const meta = []
  for (let n = readLong(); n !== 0; n = readLong()) {
    if (n < 0) { n = -n; readLong() }
    for (let i = 0; i < n; i++) meta.push([readBytes().toString('utf8'), Buffer.from(readBytes())])
  }
  const codecEntry = meta.find(([k]) => k === 'avro.codec')
  const codec = codecEntry ? codecEntry[1].toString() : 'null'
  const schemaEntry = meta.find(([k]) => k === 'avro.schema')
  const schema = schemaEntry ? JSON.parse(schemaEntry[1].toString('utf8')) : null
  const fixedToBytes = schema !== null && hasFixed(schema)
  if (codec === 'null' && !fixedToBytes) return buf
  if (codec !== 'deflate' && codec !== 'null') throw new Error(`${name}: Avro codec ${codec} is not supported`)
  if (fixedToBytes) schemaEntry[1] = Buffer.from(JSON.stringify(bytesSchema(schema, new Set())), 'utf8')
  const sync = buf.subarray(off, off + 16)
  off += 16
  const parts = []
  const writeLong = (v) => parts.push(avroLong(v))
  const writeBytes = (b) => { writeLong(b.length); parts.push(b) }
  parts.push(Buffer.from([0x4f, 0x62, 0x6a, 0x01]))
  writeLong(meta.length)
  for (const [k, v] of meta) {
    writeBytes(Buffer.from(k, 'utf8'))
    writeBytes(k === 'avro.codec' ? Buffer.from('null') : v)
  }
  writeLong(0)
  parts.push(sync)
  while (off < buf.length) {
    const count = readLong()
    const block = readBytes()
    const blockSync = buf.subarray(off, off + 16)
    off += 16
    if (!blockSync.equals(sync)) throw new Error(`${name}: Avro sync marker mismatch`)
    let data = codec === 'deflate' ? inflateRawSync(block) : block
    if (fixedToBytes) data = transcodeFixed(data, schema, count, name)
    writeLong(count)
    writeBytes(data)
    parts.push(sync)
  }
  return Buffer.concat(parts)
}

// icebird's Avro decoder has no fixed type, which manifests use for
// fixed[L] and decimal partition values (and some writers for other fields).
// reencodeAvro then rewrites the schema with each fixed as bytes, and each
// record with the length prefix bytes needs (transcodeFixed); the values
// are the same bytes.

/** Whether an Avro schema uses a fixed type anywhere. */
function hasFixed(t) {
  if (Array.isArray(t)) return t.some(hasFixed)
  if (t === null || typeof t !== 'object') return false
  if (t.type === 'fixed') return true
  if (t.type === 'record' || t.type === 'error') return t.fields.some(f => hasFixed(f.type))
  if (t.type === 'array') return hasFixed(t.items)
  if (t.type === 'map') return hasFixed(t.values)
  return typeof t.type === 'object' && hasFixed(t.type)
}

/** The schema with every fixed (and every reference to a named fixed) as bytes. */
function bytesSchema(t, fixedNames) {
  if (Array.isArray(t)) return t.map(x => bytesSchema(x, fixedNames))
  if (typeof t === 'string') return fixedNames.has(t) ? 'bytes' : t
  if (t === null || typeof t !== 'object') return t
  if (t.type === 'fixed') {
    if (t.name) fixedNames.add(t.name)
    const { name: _n, namespace: _ns, size: _s, aliases: _a, type: _t, ...rest } = t
    return Object.keys(rest).length === 0 ? 'bytes' : { ...rest, type: 'bytes' }
  }
  if (t.type === 'record' || t.type === 'error') return { ...t, fields: t.fields.map(f => ({ ...f, type: bytesSchema(f.type, fixedNames) })) }
  if (t.type === 'array') return { ...t, items: bytesSchema(t.items, fixedNames) }
  if (t.type === 'map') return { ...t, values: bytesSchema(t.values, fixedNames) }
  if (typeof t.type === 'object') return { ...t, type: bytesSchema(t.type, fixedNames) }
  return t
}

/** Re-encodes count records of schema from data, writing fixed values as bytes. */
function transcodeFixed(data, schema, count, name) {
  let off = 0
  const out = []
  const named = new Map()
  const varint = () => {
    const start = off
    while (data[off++] & 0x80) if (off >= data.length) throw new Error(`${name}: truncated Avro record`)
    return data.subarray(start, off)
  }
  const zz = (b) => {
    let r = 0n
    let shift = 0n
    for (const x of b) { r |= BigInt(x & 0x7f) << shift; shift += 7n }
    return Number((r >> 1n) ^ -(r & 1n))
  }
  const copy = (n) => { out.push(data.subarray(off, off + n)); off += n }
  const walk = (t) => {
    if (typeof t === 'string') {
      switch (t) {
        case 'null': return
        case 'boolean': return copy(1)
        case 'int': case 'long': return void out.push(varint())
        case 'float': return copy(4)
        case 'double': return copy(8)
        case 'bytes': case 'string': { const l = varint(); out.push(l); return copy(zz(l)) }
      }
      if (named.has(t)) return walk(named.get(t))
      throw new Error(`${name}: Avro type ${t} is not supported`)
    }
    if (Array.isArray(t)) { const l = varint(); out.push(l); return walk(t[zz(l)]) }
    if (t.name && t.type !== undefined && typeof t.type === 'string' && ['record', 'error', 'fixed', 'enum'].includes(t.type)) named.set(t.name, t)
    switch (t.type) {
      case 'record': case 'error': for (const f of t.fields) walk(f.type); return
      case 'fixed': out.push(avroLong(t.size)); return copy(t.size)
      case 'enum': return void out.push(varint())
      case 'array': case 'map':
        for (;;) {
          let n = zz(varint())
          if (n < 0) { n = -n; varint() } // the block size changes with fixed values; drop it
          out.push(avroLong(n))
          if (n === 0) return
          for (let i = 0; i < n; i++) {
            if (t.type === 'map') walk('string')
            walk(t.type === 'map' ? t.values : t.items)
          }
        }
    }
    return walk(t.type)
  }
  for (let i = 0; i < count; i++) walk(schema)
  if (off !== data.length) throw new Error(`${name}: ${data.length - off} bytes left after ${count} Avro records`)
  return Buffer.concat(out)
}

// ---------------------------------------------------------------- canonical form

/** Parses an Iceberg type into {kind, ...}. */
function parseType(t) {
  if (typeof t === 'object') {
    if (t.type === 'struct') return { kind: 'struct', fields: t.fields.map(f => ({ name: f.name, id: f.id, type: parseType(f.type) })) }
    if (t.type === 'list') return { kind: 'list', element: parseType(t.element) }
    if (t.type === 'map') return { kind: 'map', key: parseType(t.key), value: parseType(t.value) }
    throw new Error(`unknown nested type ${JSON.stringify(t)}`)
  }
  let m = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t)
  if (m) return { kind: 'decimal', precision: +m[1], scale: +m[2] }
  m = /^fixed\[(\d+)\]$/.exec(t)
  if (m) return { kind: 'fixed', length: +m[1] }
  const known = ['boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz',
    'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'binary']
  if (!known.includes(t)) throw new Error(`Iceberg type ${t} is not supported by the checker`)
  return { kind: t }
}

function jsonString(s) {
  let out = '"'
  for (const ch of s) {
    const c = ch.codePointAt(0)
    if (ch === '"') out += '\\"'
    else if (ch === '\\') out += '\\\\'
    else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0')
    else out += ch
  }
  return out + '"'
}

/** Writes a canonical value (null, boolean, string, array, or [name, value] pairs object) as JSON. */
function toJSON(v) {
  if (v === null) return 'null'
  if (v === true || v === false) return String(v)
  if (typeof v === 'string') return jsonString(v)
  if (Array.isArray(v)) return '[' + v.map(toJSON).join(',') + ']'
  if (v instanceof Obj) return '{' + v.entries.map(([k, x]) => jsonString(k) + ':' + toJSON(x)).join(',') + '}'
  throw new Error(`internal: not a canonical value: ${v}`)
}

/** An ordered JSON object: key order is the schema's, not insertion-by-JS-rules. */
class Obj {
  constructor(entries) { this.entries = entries }
}

const hex = (bytes) => Buffer.from(bytes).toString('hex')

function floatBits(x, single) {
  if (Number.isNaN(x)) return 'NaN'
  const dv = new DataView(new ArrayBuffer(8))
  if (single) { dv.setFloat32(0, x); return dv.getUint32(0).toString(16).padStart(8, '0') }
  dv.setFloat64(0, x)
  return dv.getBigUint64(0).toString(16).padStart(16, '0')
}

function uuidForm(h) {
  h = h.toLowerCase().replace(/-/g, '')
  if (h.length !== 32) throw new Error(`uuid of ${h.length / 2} bytes`)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** Sorts map pairs by their canonical JSON, so entry order does not matter. */
function canonMap(pairs) {
  return pairs.map(p => [toJSON(p), p]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(x => x[1])
}

// ---------------------------------------------------------------- stats

const NUMERIC = new Set(['int', 'long', 'float', 'double', 'decimal'])

/** Accumulates STATS over canonical rows (arrays of canonical values in schema order). */
class Stats {
  constructor(fields, label) {
    this.fields = fields
    this.label = label
    this.rows = 0
    this.nonNull = fields.map(() => 0)
    this.acc = fields.map(f => (f.type.kind === 'float' || f.type.kind === 'double' ? [] : 0n))
    this.sum = 0n
    this.canonicalRows = []
  }

  add(values, raw) {
    this.rows++
    const row = toJSON(new Obj(this.fields.map((f, i) => [f.name, values[i]])))
    // CHECK_DUMP=1 prints every canonical row, to find which rows differ.
    if (process.env.CHECK_DUMP) process.stderr.write(`${this.label}: ${row}\n`)
    if (wantRows) this.canonicalRows.push(row)
    const digest = createHash('sha256').update(row, 'utf8').digest()
    this.sum = (this.sum + digest.readBigUInt64BE(0)) & 0xffffffffffffffffn
    this.fields.forEach((f, i) => {
      if (values[i] === null) return
      this.nonNull[i]++
      const k = f.type.kind
      if (k === 'float' || k === 'double') this.acc[i].push(raw[i])
      else if (NUMERIC.has(k)) this.acc[i] += BigInt(values[i])
    })
  }

  result() {
    const nonNull = {}
    const sums = {}
    this.fields.forEach((f, i) => {
      nonNull[f.name] = this.nonNull[i]
      const t = f.type
      if (!NUMERIC.has(t.kind)) return
      if (t.kind === 'float' || t.kind === 'double') {
        const xs = this.acc[i]
        if (xs.some(Number.isNaN)) { sums[f.name] = 'NaN'; return }
        xs.sort((a, b) => a - b)
        let s = 0
        for (const x of xs) s += x
        sums[f.name] = xs.length === 0 ? '0' : s.toExponential(5)
      } else if (t.kind === 'decimal') {
        sums[f.name] = decimalString(this.acc[i], t.scale)
      } else {
        sums[f.name] = this.acc[i].toString()
      }
    })
    const out = { rows: this.rows, nonNull, sums, checksum: this.sum.toString(16).padStart(16, '0') }
    if (wantRows) out.canonicalRows = this.canonicalRows.map(r => JSON.parse(r))
    return out
  }
}

function decimalString(unscaled, scale) {
  if (scale === 0) return unscaled.toString()
  const neg = unscaled < 0n
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0')
  return (neg ? '-' : '') + digits.slice(0, -scale) + '.' + digits.slice(-scale)
}

// ---------------------------------------------------------------- icebird

// hyparquet's default conversions lose information the checksum needs:
// timestamps become millisecond Dates, and binary columns are decoded as
// UTF-8 text. icebird passes no parsers of its own, so the defaults are
// adjusted: timestamps stay bigint microseconds, and byte arrays are decoded
// as latin1 (one char per byte, lossless); canonIcebird re-decodes string
// columns as UTF-8 and binary columns as hex. Paths in delete files are ASCII,
// so icebird's delete matching sees the same strings either way.
DEFAULT_PARSERS.timestampFromMicroseconds = (micros) => ({ micros: BigInt(micros) })
DEFAULT_PARSERS.timestampFromMilliseconds = (millis) => ({ micros: BigInt(millis) * 1000n })
DEFAULT_PARSERS.timestampFromNanoseconds = (nanos) => ({ nanos: BigInt(nanos) })
DEFAULT_PARSERS.stringFromBytes = (bytes) => bytes && Buffer.from(bytes).toString('latin1')

const latin1Bytes = (s) => Buffer.from(s, 'latin1')

/** Canonicalises a value as icebird (hyparquet) returns it. */
function canonIcebird(v, t) {
  if (v === null || v === undefined) return null
  switch (t.kind) {
    case 'boolean': return Boolean(v)
    case 'int': case 'long': return BigInt(v).toString()
    case 'float': return floatBits(Number(v), true)
    case 'double': return floatBits(Number(v), false)
    // hyparquet turns decimals into doubles (unscaled * 10^-S); rounding back
    // is exact while |unscaled| < 2^53, which the tests' values respect.
    case 'decimal': return BigInt(Math.round(Number(v) * 10 ** t.scale)).toString()
    case 'date': return String(Math.round((v instanceof Date ? v.getTime() : Number(v) * 86400000) / 86400000))
    case 'time': return BigInt(v).toString()
    case 'timestamp': case 'timestamptz':
      if (v instanceof Date) return (BigInt(v.getTime()) * 1000n).toString()
      return v.micros.toString()
    case 'timestamp_ns': case 'timestamptz_ns':
      return (v.nanos ?? v.micros * 1000n).toString()
    case 'string': return typeof v === 'string' ? latin1Bytes(v).toString('utf8') : Buffer.from(v).toString('utf8')
    case 'uuid': return uuidForm(typeof v === 'string' ? (v.length === 16 ? hex(latin1Bytes(v)) : v) : hex(v))
    case 'binary': case 'fixed': return hex(typeof v === 'string' ? latin1Bytes(v) : v)
    case 'struct': return new Obj(t.fields.map(f => [f.name, canonIcebird(v[f.name], f.type)]))
    case 'list': return Array.from(v, x => canonIcebird(x, t.element))
    case 'map': {
      // hyparquet returns maps as plain objects keyed by the (string) key, or
      // as arrays of {key, value} for keys that are not strings.
      const pairs = Array.isArray(v)
        ? v.map(e => [canonIcebird(e.key, t.key), canonIcebird(e.value, t.value)])
        : Object.entries(v).map(([k, x]) => [canonIcebird(k, t.key), canonIcebird(x, t.value)])
      return canonMap(pairs)
    }
  }
  throw new Error(`internal: type ${t.kind}`)
}

function rawNumber(v, t) {
  if (v === null || v === undefined) return null
  return t.kind === 'float' ? Math.fround(Number(v)) : Number(v)
}

/**
 * Reads the table with icebird. table is {tableUrl, metadataFileName}; with
 * no metadataFileName (--table-dir) icebird resolves the current metadata
 * itself, through metadata/version-hint.text.
 */
async function readIcebird({ tableUrl, metadataFileName }, fields) {
  const metadata = await icebergMetadata({ tableUrl, metadataFileName })
  const stats = new Stats(fields, 'icebird')
  if (!hasRows(metadata)) return stats.result()
  // icebergRead throws when the snapshot has no live data file (an empty
  // overwrite); that table simply has no rows.
  const { dataEntries, deleteEntries } = splitManifestEntries(await icebergManifests(metadata))
  if (dataEntries.length === 0) return stats.result()
  const dv = deleteEntries.find(isDeletionVector)
  if (dv) throw new Error(`icebird 0.3.1 cannot apply deletion vectors (it reads Puffin delete files such as ${dv.data_file.file_path} as Parquet); read this table with --reader duckdb`)
  const rows = await icebergRead({ tableUrl, metadataFileName, metadata })
  for (const r of rows) {
    const raw = fields.map(f => rawNumber(r[f.name], f.type))
    stats.add(fields.map(f => canonIcebird(r[f.name], f.type)), raw)
  }
  return stats.result()
}

/** icebird throws on a table without a snapshot; such a table has no rows. */
function hasRows(metadata) {
  const id = metadata['current-snapshot-id']
  return id !== undefined && id !== null && id >= 0
}

// ---------------------------------------------------------------- DuckDB

function duckType(t) {
  switch (t.kind) {
    case 'boolean': return 'BOOLEAN'
    case 'int': return 'INTEGER'
    case 'long': return 'BIGINT'
    case 'float': return 'FLOAT'
    case 'double': return 'DOUBLE'
    case 'decimal': return `DECIMAL(${t.precision},${t.scale})`
    case 'date': return 'DATE'
    case 'time': return 'TIME'
    case 'timestamp': return 'TIMESTAMP'
    case 'timestamptz': return 'TIMESTAMPTZ'
    case 'timestamp_ns': return 'TIMESTAMP_NS'
    case 'timestamptz_ns': return 'TIMESTAMP_NS'
    case 'string': return 'VARCHAR'
    case 'uuid': return 'UUID'
    case 'binary': case 'fixed': return 'BLOB'
    case 'struct': return `STRUCT(${t.fields.map(f => `${sqlIdent(f.name)} ${duckType(f.type)}`).join(', ')})`
    case 'list': return `${duckType(t.element)}[]`
    case 'map': return `MAP(${duckType(t.key)}, ${duckType(t.value)})`
  }
  throw new Error(`internal: type ${t.kind}`)
}

const sqlIdent = (s) => '"' + s.replace(/"/g, '""') + '"'
const sqlString = (s) => "'" + s.replace(/'/g, "''") + "'"

/** Canonicalises a DuckDBValue. */
function canonDuck(v, t) {
  if (v === null || v === undefined) return null
  switch (t.kind) {
    case 'boolean': return Boolean(v)
    case 'int': case 'long': return BigInt(v).toString()
    case 'float': return floatBits(v, true)
    case 'double': return floatBits(v, false)
    case 'decimal': return v.value.toString()
    case 'date': return String(v.days)
    case 'time': return v.micros.toString()
    case 'timestamp': case 'timestamptz': return v.micros.toString()
    case 'timestamp_ns': case 'timestamptz_ns': return v.nanos.toString()
    case 'string': return String(v)
    case 'uuid': return uuidForm(v.toString())
    case 'binary': case 'fixed': return hex(v.bytes)
    case 'struct': return new Obj(t.fields.map(f => [f.name, canonDuck(v.entries[f.name], f.type)]))
    case 'list': return v.items.map(x => canonDuck(x, t.element))
    case 'map': return canonMap(v.entries.map(e => [canonDuck(e.key, t.key), canonDuck(e.value, t.value)]))
  }
  throw new Error(`internal: type ${t.kind}`)
}

/**
 * The current snapshot's manifests with their entries, for the DuckDB side.
 * Unlike icebergManifests it reads format v1 as the spec defines it: a v1
 * snapshot may list its manifests inline ("manifests", paths) instead of a
 * manifest list, and v1 manifest lists and manifests have no sequence-number
 * fields: every sequence number is then 0 (spec: "When reading v1 manifests
 * with no sequence number column, sequence numbers for all files must default
 * to 0"); an ADDED entry without one inherits its manifest's.
 */
async function duckManifests(metadata) {
  const id = metadata['current-snapshot-id']
  const snapshot = metadata.snapshots?.find(x => BigInt(x['snapshot-id']) === BigInt(id))
  if (!snapshot) throw new Error(`snapshot ${id} not found in metadata`)
  let manifests
  if (snapshot['manifest-list']) manifests = await fetchAvroRecords(snapshot['manifest-list'])
  else if (Array.isArray(snapshot.manifests)) manifests = snapshot.manifests.map(m => (typeof m === 'string' ? { manifest_path: m } : m))
  else throw new Error(`snapshot ${id} has neither manifest-list nor manifests`)
  return Promise.all(manifests.map(async m => {
    const entries = await fetchAvroRecords(m.manifest_path)
    const mseq = m.sequence_number ?? 0n
    // Equality deletes are scoped by spec id, which only the manifest list
    // records (v1 lists may leave it out: every v1 file then has spec 0).
    const specId = Number(m.partition_spec_id ?? 0)
    for (const e of entries) {
      e.sequence_number ??= e.status === 1 ? mseq : 0n
      e.file_sequence_number ??= e.status === 1 ? mseq : 0n
      e.specId = specId
    }
    return { url: m.manifest_path, entries }
  }))
}

/**
 * For a Parquet file written without field ids, the SELECT list that reads
 * fields by the table's schema.name-mapping.default (spec: "Column
 * Projection"): a top-level field is the file column whose name is one of
 * its mapped names, else NULL. null when the file has field ids.
 */
async function nameMappedSelect(con, local, fields, mapping) {
  const r = await con.runAndReadAll(`SELECT name, field_id FROM parquet_schema(${sqlString(local)}) WHERE name <> 'schema'`)
  const cols = r.getRows()
  if (cols.some(c => c[1] !== null)) return null
  const top = new Set((await con.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet(${sqlString(local)}))`)).getRows().map(x => x[0]))
  return fields.map(f => {
    const names = mapping.find(m => m['field-id'] === f.id)?.names ?? []
    const col = names.find(n => top.has(n))
    return `${col === undefined ? 'NULL' : `CAST(${sqlIdent(col)} AS ${duckType(f.type)})`} AS ${sqlIdent(f.name)}`
  })
}

/** A partition tuple as one comparable string: values by field name, in name order. */
function partitionKey(p) {
  if (p === null || p === undefined) return '{}'
  const value = (v) => {
    if (v === null || v === undefined) return null
    if (typeof v === 'bigint') return `${v}`
    if (v instanceof Uint8Array) return hex(v)
    return v
  }
  return JSON.stringify(Object.keys(p).sort().map(k => [k, value(p[k])]))
}

/** Whether partition spec specId has no fields (its equality deletes are global). */
function unpartitionedSpec(metadata, specId) {
  const specs = metadata['partition-specs'] ?? (metadata['partition-spec'] ? [{ 'spec-id': 0, fields: metadata['partition-spec'] }] : [])
  const spec = specs.find(s => s['spec-id'] === specId)
  if (!spec) throw new Error(`partition spec ${specId} is not in the table metadata`)
  return spec.fields.length === 0
}

/** Whether a delete manifest entry is a deletion vector (a Puffin blob) rather than a Parquet file. */
const isDeletionVector = (e) => e.data_file.content === 1 && String(e.data_file.file_format).toLowerCase() === 'puffin'

/**
 * Decodes the deletion vectors of dvs with dv.mjs and adds their positions
 * to pos_deletes under the data file each one names.
 */
async function appendDeletionVectors(con, dvs) {
  const seen = new Map()
  for (const e of dvs) {
    const df = e.data_file
    const ref = df.referenced_data_file
    if (!ref) throw new Error(`deletion vector ${df.file_path} has no referenced_data_file`)
    if (df.content_offset == null || df.content_size_in_bytes == null) throw new Error(`deletion vector ${df.file_path} for ${ref} has no content_offset or content_size_in_bytes`)
    // The spec allows one deletion vector per data file: a writer adding
    // deletes to a file that has one must merge them and remove the old one.
    if (seen.has(ref)) throw new Error(`two deletion vectors for data file ${ref}: ${seen.get(ref)} and ${df.file_path} at offset ${df.content_offset}; the spec allows one per data file`)
    seen.set(ref, `${df.file_path} at offset ${df.content_offset}`)
  }
  const appender = await con.createAppender('pos_deletes')
  try {
    for (const e of dvs) {
      const df = e.data_file
      const file = readFileSync(await localFile(df.file_path))
      let positions
      try {
        positions = readDV(file, df.content_offset, df.content_size_in_bytes, { referencedDataFile: df.referenced_data_file, cardinality: df.record_count })
      } catch (err) {
        throw new Error(`deletion vector ${df.file_path} at offset ${df.content_offset} for ${df.referenced_data_file}: ${err.message}`)
      }
      const seq = BigInt(e.sequence_number)
      for (const pos of positions) {
        appender.appendVarchar(df.referenced_data_file)
        appender.appendBigInt(pos)
        appender.appendBigInt(seq)
        appender.endRow()
      }
    }
    appender.flushSync()
  } finally {
    appender.closeSync()
  }
}

async function readDuckDB(metadata, fields) {
  const stats = new Stats(fields, 'duckdb')
  if (!hasRows(metadata)) return stats.result()
  const manifests = await duckManifests(metadata)
  const { dataEntries, deleteEntries } = splitManifestEntries(manifests)
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const db = await DuckDBInstance.create(':memory:')
  const con = await db.connect()
  try {
    if (dataEntries.length === 0) return stats.result()
    // Data files: local path, the path the manifests name (position deletes
    // refer to it), the data sequence number, partition spec id and
    // partition tuple (deletes apply by them).
    // localFile downloads S3 objects first, so every path here is local.
    const locals = []
    for (const e of dataEntries) locals.push(await localFile(e.data_file.file_path))
    const dataRows = dataEntries.map((e, i) => `(${sqlString(locals[i])}, ${sqlString(e.data_file.file_path)}, ${BigInt(e.sequence_number)}, ${e.specId}, ${sqlString(partitionKey(e.data_file.partition))})`)
    await con.run(`CREATE TABLE data_files(local VARCHAR, ref VARCHAR, seq BIGINT, spec INTEGER, part VARCHAR); INSERT INTO data_files VALUES ${dataRows.join(', ')}`)
    // Columns resolve by Iceberg field id, not by name, as the spec requires.
    const schemaMap = fields.map(f => `${f.id}: {name: ${sqlString(f.name)}, type: ${sqlString(duckType(f.type))}, default_value: NULL}`).join(', ')
    // Files written without field ids resolve through the name mapping.
    const mappingProp = metadata.properties?.['schema.name-mapping.default']
    const mapping = mappingProp ? JSON.parse(mappingProp) : null
    const byId = []
    const byName = []
    for (const l of new Set(locals)) {
      const sel = mapping ? await nameMappedSelect(con, l, fields, mapping) : null
      if (sel) byName.push(`SELECT ${sel.join(', ')}, filename AS __filename, file_row_number FROM read_parquet(${sqlString(l)}, filename = true, file_row_number = true)`)
      else byId.push(l)
    }
    const parts = byName
    if (byId.length > 0) parts.unshift(`SELECT ${fields.map(f => sqlIdent(f.name)).join(', ')}, __filename, file_row_number FROM read_parquet([${byId.map(sqlString).join(', ')}], schema = MAP {${schemaMap}}, filename = '__filename', file_row_number = true)`)
    await con.run(`CREATE VIEW data AS SELECT d.*, f.ref AS __ref, f.seq AS __seq, f.spec AS __spec, f.part AS __part
      FROM (${parts.join(' UNION ALL ')}) d
      JOIN data_files f ON f.local = d.__filename`)
    const conds = []
    const posDeletes = deleteEntries.filter(e => e.data_file.content === 1)
    if (posDeletes.length > 0) {
      await con.run('CREATE TABLE pos_deletes(file_path VARCHAR, pos BIGINT, seq BIGINT)')
      const dvs = posDeletes.filter(isDeletionVector)
      for (const e of posDeletes.filter(x => !isDeletionVector(x))) {
        await con.run(`INSERT INTO pos_deletes SELECT file_path, pos, ${BigInt(e.sequence_number)} FROM read_parquet(${sqlString(await localFile(e.data_file.file_path))})`)
      }
      if (dvs.length > 0) await appendDeletionVectors(con, dvs)
      // A position delete applies to data files with a sequence number <= its own.
      conds.push(`NOT EXISTS (SELECT 1 FROM pos_deletes p WHERE p.file_path = data.__ref AND p.pos = data.file_row_number AND data.__seq <= p.seq)`)
    }
    for (const e of deleteEntries.filter(x => x.data_file.content === 2)) {
      const ids = e.data_file.equality_ids
      if (!ids || ids.length === 0) throw new Error(`equality delete file ${e.data_file.file_path} has no equality_ids`)
      const cols = ids.map(id => {
        const f = fields.find(x => x.id === Number(id))
        if (!f) throw new Error(`equality delete file ${e.data_file.file_path}: field id ${id} is not a top-level column`)
        return f
      })
      const m = cols.map(f => `${f.id}: {name: ${sqlString(f.name)}, type: ${sqlString(duckType(f.type))}, default_value: NULL}`).join(', ')
      const seq = BigInt(e.sequence_number)
      // An equality delete applies to data files with a strictly smaller
      // sequence number, in its own partition unless its spec has none.
      const scope = [`data.__seq < ${seq}`]
      if (!unpartitionedSpec(metadata, e.specId)) scope.push(`data.__spec = ${e.specId}`, `data.__part = ${sqlString(partitionKey(e.data_file.partition))}`)
      const match = cols.map(f => `q.${sqlIdent(f.name)} IS NOT DISTINCT FROM data.${sqlIdent(f.name)}`).join(' AND ')
      conds.push(`NOT EXISTS (SELECT 1 FROM read_parquet(${sqlString(await localFile(e.data_file.file_path))}, schema = MAP {${m}}) q WHERE ${scope.join(' AND ')} AND ${match})`)
    }
    const where = conds.length ? `WHERE ${conds.join(' AND ')}` : ''
    const colExpr = (f) => {
      if (!hiveCols.includes(f.name)) return sqlIdent(f.name)
      // --hive-partition-cols: the value a data file lacks, from its path.
      const seg = f.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      const raw = `url_decode(regexp_extract(data.__ref, ${sqlString(`/${seg}=([^/]*)/`)}, 1))`
      const t = duckType(f.type)
      const v = t === 'BLOB' ? `from_base64(${raw})` : `CAST(${raw} AS ${t})`
      return `COALESCE(${sqlIdent(f.name)}, CASE WHEN ${raw} = '' OR ${raw} = '__HIVE_DEFAULT_PARTITION__' OR ${raw} = 'null' THEN NULL ELSE ${v} END)`
    }
    const missing = hiveCols.filter(c => !fields.some(f => f.name === c))
    if (missing.length > 0) throw new Error(`--hive-partition-cols: no top-level column ${missing.join(', ')}`)
    const reader = await con.runAndReadAll(`SELECT ${fields.map(colExpr).join(', ')} FROM data ${where}`)
    for (const r of reader.getRows()) {
      const raw = fields.map((f, i) => (r[i] === null ? null : f.type.kind === 'float' || f.type.kind === 'double' ? Number(r[i]) : null))
      stats.add(fields.map((f, i) => canonDuck(r[i], f.type)), raw)
    }
  } finally {
    con.closeSync?.()
    db.closeSync?.()
  }
  return stats.result()
}

// ---------------------------------------------------------------- main

/** Strips trailing slashes, so tableUrl + '/metadata/...' has one. */
const trimSlash = (s) => s.replace(/\/+$/, '')

/**
 * Where icebird finds the table: {tableUrl, metadataFileName} and a name for
 * messages. A metadata file lives in <table>/metadata/, so the table is its
 * grandparent; S3 references stay s3:// URLs (icebird fetches them through
 * the shim), local ones become file:// URLs.
 */
function tableRef() {
  if (tableDirArg !== undefined) {
    const mapped = mapPrefix(tableDirArg)
    const tableUrl = s3Location(mapped) ? trimSlash(mapped) : pathToFileURL(localPath(tableDirArg)).href
    return { tableUrl, metadataFileName: undefined, name: tableDirArg }
  }
  const mapped = mapPrefix(metadataArg)
  if (s3Location(mapped)) {
    const parts = mapped.split('/')
    return { tableUrl: parts.slice(0, -2).join('/'), metadataFileName: parts.at(-1), name: metadataArg }
  }
  const metaPath = localPath(metadataArg)
  return { tableUrl: pathToFileURL(path.dirname(path.dirname(metaPath))).href, metadataFileName: path.basename(metaPath), name: metaPath }
}

async function main() {
  const table = tableRef()
  let metadata
  try {
    // With --table-dir, this is icebird's own version-hint.text lookup; the
    // DuckDB path then reads the metadata it resolved.
    metadata = table.metadataFileName === undefined
      ? await icebergMetadata({ tableUrl: table.tableUrl })
      : JSON.parse(await readText(metadataArg))
  } catch (err) {
    throw new Error(`read table metadata ${table.name}: ${err.message}`)
  }
  const schema = metadata.schemas?.find(s => s['schema-id'] === metadata['current-schema-id']) ?? metadata.schema
  if (!schema) throw new Error(`${table.name}: no current schema`)
  const fields = parseType(schema).fields
  // Both readers run (unless --reader picks one), so a broken table shows
  // what each one makes of it.
  const out = {}
  const errors = []
  if (readerArg !== 'duckdb') {
    try {
      out.icebird = await readIcebird(table, fields)
    } catch (err) {
      errors.push(`icebird: ${err.message ?? err}`)
    }
  }
  if (readerArg !== 'icebird') {
    try {
      out.duckdb = await readDuckDB(metadata, fields)
    } catch (err) {
      errors.push(`duckdb: ${err.message ?? err}`)
    }
  }
  if (errors.length > 0) throw new Error(errors.join('\n'))
  process.stdout.write(JSON.stringify(out) + '\n')
}

main().catch(err => {
  process.stderr.write(`check.mjs: ${err.message ?? err}\n`)
  process.exit(1)
})
