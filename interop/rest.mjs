#!/usr/bin/env node
// rest.mjs drives a running Iceberg REST catalog (floe serve) with clients
// that share no code with floe or iceberg-go — the npm package iceberg-js
// (an independent REST catalog client) and plain fetch — and checks every
// response against the Iceberg REST OpenAPI document, so that floe's tests
// can tell whether its server speaks the specification rather than only
// what iceberg-go expects:
//
//   node interop/rest.mjs --uri http://127.0.0.1:PORT [--token TOKEN] [--prefix P] [--oauth-client ID:SECRET] [--spec FILE] [--keep-going]
//   node interop/rest.mjs --self-test [--spec FILE]
//
// Output (stdout, exit 0): one JSON object
//   {"validated": N, "checks": ["name", ...]}
// where N counts the response bodies validated against the document and
// checks names every behavioural check that passed, in order. Progress, one
// line per request ("GET /v1/namespaces -> 200"), goes to stderr.
// On a failed check, or a response that breaks the document, it prints on
// stderr the request (method, path, and body), the status, the response body
// and ajv's errors, and exits 1 (2 for bad usage). Schema violations do not
// stop the run: every one found is listed before the exit. A failed check
// stops it, unless --keep-going: then each failed check is recorded, the
// next one runs, and all are listed at the end (later checks may then fail
// only because an earlier one did).
//
// --token TOKEN sends "Authorization: Bearer TOKEN" with every request, and
// also checks that requests without it, or with another token, get 401 with
// an error body. --prefix P is the warehouse asked for: GET /v1/config is
// called with ?warehouse=P and, as clients do, the prefix used in every
// path is the config's overrides.prefix, else defaults.prefix, else P, else
// none (paths are then /v1/namespaces...). --spec FILE is the OpenAPI
// document (default $REST_SPEC, else shared/fixtures/rest-catalog-open-api.yaml
// beside the repository). --self-test needs no server: it validates the
// document's own examples and a few broken bodies against it, and resolves
// sample paths to operations, to show that the validator works.
//
// The server is expected to start with an empty warehouse: the scenario
// creates namespaces js_ns and raw_ns (and, with --token, tries auth_ns
// without it), and drops everything it created when it passes.
//
// VALIDATION: every response is matched to the document's operation by its
// method and path (path templates /v1/{prefix}/..., with {prefix} the
// prefix in use, or the "/{prefix}" segment dropped when it is empty). Its
// status must be one the operation lists (exactly, else NXX, else default);
// the response found (following $ref into components/responses) gives the
// schema of an application/json body, and a body is validated against it
// with ajv's JSON Schema 2020-12 validator, the whole document added as one
// schema so that #/components/schemas/... references resolve. A body where
// the document gives none, no body where it gives one (except HEAD), or a
// JSON body without an application/json Content-Type, is a violation too.
// Three details of the document: (1) it is OpenAPI 3.1.1 but still writes
// `nullable: true` (an OpenAPI 3.0 keyword) where null is allowed, e.g.
// next-page-token and a staged table's metadata-location; ajv honours
// `nullable` beside `type`, so null is accepted there as the document
// means. (2) A few error responses (406 UnsupportedOperationResponse, the
// views' errors) give the bare ErrorModel as schema while their own
// examples, like every other error, are {"error": ErrorModel}: for those,
// the wrapped form is accepted too. (3) `discriminator` and `example` are
// annotations only. Requests this script sends are validated against the
// document's request schemas too, so that a failure is never the script's
// own malformed request.
//
// SCENARIO
// 0. GET /v1/config: the prefix, and, when it lists endpoints, every
//    endpoint used below except transactions/commit must be listed.
// 1. iceberg-js (its own API, with a fetch wrapper that records and
//    validates every response): loadConfig; create namespace js_ns with a
//    property (and again: 409); list; exists; load; set a property
//    (updateNamespaceProperties); create table js_ns.events (id long
//    required, name string, ts timestamp; partitioned by day(ts)) and again
//    (409); load it (also with snapshots=refs); conditional load with its
//    ETag (null on 304); exists; commit a property through updateTable with
//    assert-table-uuid and assert-current-schema-id; list tables; drop the
//    non-empty namespace (409); rename the table and back; drop it; load
//    the dropped table (404 NoSuchTableException); drop the namespace; load
//    it (404 NoSuchNamespaceException). iceberg-js 1.0.0 offers all of these
//    itself, commits included; it has no multi-table transactions.
// 2. plain fetch: create namespace raw_ns twice with one Idempotency-Key
//    (same status and body, never 409) and then with another key (409);
//    HEAD namespace/table 204 and 404; 404 bodies (with the Java exception
//    types clients switch on) for a missing namespace and table; 400 for
//    malformed JSON and a string namespace; properties update
//    (updated/removed/missing); ETag and If-None-Match -> 304 (and 200 with
//    a new ETag after a commit); a commit whose assert-table-uuid fails ->
//    409 CommitFailedException with metadata-location and properties
//    unchanged; 400 for an unknown update action and an unknown requirement;
//    a commit with assert-table-uuid that succeeds, and its retry with the
//    same Idempotency-Key (same answer, no second commit); a scan metrics report
//    (204), if advertised; stage-create (the table must not exist yet), then
//    the create transaction's commit (assign-uuid, add-schema, add-spec, ...
//    with assert-create) and the same commit again (409); rename (and 404
//    for a missing source or target namespace, 409 onto an existing table);
//    register over another table's files (400), register a dropped table
//    from its metadata-location (and 409 when repeated, 404 into a missing
//    namespace); transactions/commit over two tables, and with one failing
//    requirement 409 with neither table changed
//    (if the config does not advertise transactions/commit: the route must
//    fail and change nothing); list tables whole and page by page
//    (pageSize=1); drop without purge (its local metadata file stays),
//    drop with purgeRequested=true (its local metadata
//    file is gone), drop the non-empty namespace (409), drop the last table
//    (its files stay) and the namespace, 404 for dropping what is gone.
// 3. with --token: 401 with an error body without the header, with a wrong
//    token, and for a create-namespace (which must not have happened).
//    --oauth-client ID:SECRET first gets a token from POST /v1/oauth/tokens
//    (client credentials; the route is deprecated but served), checks that
//    a wrong secret gets 401 invalid_client, and uses the token as --token
//    unless one was given.

import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { randomUUID } from 'node:crypto'

import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import YAML from 'yaml'
import { IcebergError, IcebergRestCatalog, generateIdempotencyKey } from 'iceberg-js'

// ---------------------------------------------------------------- arguments

const here = path.dirname(fileURLToPath(import.meta.url))

function usage(msg) {
  process.stderr.write(`rest.mjs: ${msg}\nusage: node rest.mjs --uri http://HOST:PORT [--token TOKEN] [--prefix P] [--oauth-client ID:SECRET] [--spec FILE] [--keep-going] | --self-test [--spec FILE]\n`)
  process.exit(2)
}

const argv = process.argv.slice(2)
let uriArg
let tokenArg
let prefixArg
let specArg = process.env.REST_SPEC || path.join(here, '..', '..', 'shared', 'fixtures', 'rest-catalog-open-api.yaml')
let selfTest = false
let keepGoing = false
let oauthArg
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]
  const value = () => {
    const v = argv[++i]
    if (v === undefined) usage(`${a} needs a value`)
    return v
  }
  if (a === '--uri') uriArg = value()
  else if (a === '--token') tokenArg = value()
  else if (a === '--prefix') prefixArg = value()
  else if (a === '--spec') specArg = value()
  else if (a === '--self-test') selfTest = true
  else if (a === '--keep-going') keepGoing = true
  else if (a === '--oauth-client') oauthArg = value()
  else usage(`unknown argument ${a}`)
}
if (!selfTest && !uriArg) usage('--uri is required')
if (!existsSync(specArg)) usage(`no OpenAPI document at ${specArg} (give --spec or REST_SPEC)`)

const log = (msg) => process.stderr.write(`${msg}\n`)

// ---------------------------------------------------------------- the document and the validator

const SPEC_ID = 'https://floe.invalid/iceberg/rest-catalog-open-api.json'
const doc = YAML.parse(readFileSync(specArg, 'utf8'), { maxAliasCount: -1 })

const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
addFormats(ajv)
for (const keyword of ['example', 'discriminator', 'xml', 'externalDocs']) {
  if (!ajv.getKeyword(keyword)) ajv.addKeyword({ keyword })
}
ajv.addSchema(doc, SPEC_ID)

const escapePointer = (s) => String(s).replaceAll('~', '~0').replaceAll('/', '~1')

/** resolve a JSON pointer ("/a/b") inside the document */
function atPointer(pointer) {
  let node = doc
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (node == null || !(key in node)) throw new Error(`the document has nothing at #${pointer}`)
    node = node[key]
  }
  return node
}

/** follow local $refs ("#/components/...") from a node at pointer */
function deref(pointer) {
  let node = atPointer(pointer)
  for (let hops = 0; node && typeof node.$ref === 'string' && node.$ref.startsWith('#/'); hops++) {
    if (hops > 20) throw new Error(`$ref loop at #${pointer}`)
    pointer = node.$ref.slice(1)
    node = atPointer(pointer)
  }
  return { pointer, node }
}

const ERROR_WRAPPER = '/components/schemas/IcebergErrorResponse'
const validators = new Map()
/** an ajv validator for the schema at a pointer in the document */
function validatorAt(pointer) {
  let v = validators.get(pointer)
  if (!v) {
    const frag = pointer.split('/').map(encodeURIComponent).join('/')
    v = ajv.compile({ $ref: `${SPEC_ID}#${frag}` })
    validators.set(pointer, v)
  }
  return v
}

/** "#/components/schemas/X" for a schema that is a plain $ref, else the pointer */
function schemaName(pointer) {
  const node = atPointer(pointer)
  return node && typeof node.$ref === 'string' ? node.$ref : `#${pointer}`
}

const METHODS = ['get', 'put', 'post', 'delete', 'head', 'patch', 'options']
const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * The document's operations as matchers for concrete paths, given the
 * prefix in use. Literal segments win over parameters when both match.
 */
function buildRoutes(prefix) {
  const routes = []
  for (const template of Object.keys(doc.paths)) {
    let concrete = template
    if (concrete.includes('/{prefix}')) concrete = prefix ? concrete.replace('{prefix}', () => prefix) : concrete.replace('/{prefix}', '')
    const params = (concrete.match(/\{[^}]+\}/g) ?? []).length
    const source = concrete.split(/(\{[^}]+\})/).map((part) => (part.startsWith('{') ? '([^/]+)' : escapeRegex(part))).join('')
    for (const method of METHODS) {
      const op = doc.paths[template][method]
      if (!op) continue
      routes.push({ template, method, params, re: new RegExp(`^${source}$`), op, pointer: `/paths/${escapePointer(template)}/${method}` })
    }
  }
  routes.sort((a, b) => a.params - b.params)
  return routes
}

let routes = buildRoutes('')
let basePath = ''

function findRoute(method, pathname) {
  let p = pathname
  if (basePath && p.startsWith(basePath)) p = p.slice(basePath.length)
  return routes.find((r) => r.method === method.toLowerCase() && r.re.test(p))
}

/** the response the document gives for a status: exact, NXX, else default */
function responseFor(route, status) {
  const responses = route.op.responses ?? {}
  for (const key of [String(status), `${String(status)[0]}XX`, `${String(status)[0]}xx`, 'default']) {
    if (key in responses) {
      const { pointer, node } = deref(`${route.pointer}/responses/${escapePointer(key)}`)
      const media = node.content?.['application/json']
      // The document gives a few error responses (406 UnsupportedOperation,
      // the views' errors) the bare ErrorModel schema while their own
      // examples, like every other error, wrap it as {"error": ErrorModel}:
      // there the wrapped form (IcebergErrorResponse) is accepted too.
      const bareErrorModel = media?.schema?.$ref === '#/components/schemas/ErrorModel'
      return { key, pointer, bareErrorModel, schemaPointer: media?.schema ? `${pointer}/content/application~1json/schema` : undefined }
    }
  }
  return undefined
}

// ---------------------------------------------------------------- recording every exchange

const state = { validated: 0, responses: 0, violations: [], requestErrors: [] }
const checks = []

class CheckFailure extends Error {}

const short = (text, n = 1500) => (text.length > n ? `${text.slice(0, n)}… (${text.length} chars)` : text)
const ajvText = (errors) => (errors ?? []).map((e) => `    ${e.instancePath || '/'} ${e.message}${e.params && Object.keys(e.params).length ? ' ' + JSON.stringify(e.params) : ''} (schema ${e.schemaPath})`).join('\n')

function describe(ex) {
  const lines = [`request:  ${ex.method} ${ex.url.pathname}${ex.url.search}`]
  if (ex.reqBody) lines.push(`  body:   ${short(String(ex.reqBody), 800)}`)
  lines.push(`response: ${ex.status}${ex.contentType ? ' (' + ex.contentType + ')' : ''}`)
  if (ex.text) lines.push(`  body:   ${short(ex.text)}`)
  return lines.join('\n')
}

function violation(ex, what, errors) {
  const msg = `${what}\n${describe(ex)}${errors ? '\n  ajv errors:\n' + ajvText(errors) : ''}`
  state.violations.push(msg)
  log(`  SPEC VIOLATION: ${what}`)
}

/** checks one response against the document; records violations */
function checkExchange(ex) {
  state.responses++
  const route = findRoute(ex.method, ex.url.pathname)
  log(`  ${ex.method} ${ex.url.pathname}${ex.url.search} -> ${ex.status}${route ? '' : ' (no operation)'}`)
  if (!route) return violation(ex, `no operation in the document matches ${ex.method} ${ex.url.pathname}`)
  const opName = route.op.operationId ?? `${route.method} ${route.template}`
  // The request body, when the document gives its schema: a bad request is
  // this script's fault, not the server's.
  const reqSchema = route.op.requestBody?.content?.['application/json']?.schema
  if (ex.reqBody && reqSchema && !ex.invalidOnPurpose) {
    let body
    try {
      body = JSON.parse(ex.reqBody)
    } catch {}
    const v = validatorAt(`${route.pointer}/requestBody/content/application~1json/schema`)
    if (body !== undefined && !v(body)) state.requestErrors.push(`this script sent a request that breaks ${opName}'s request schema\n${describe(ex)}\n  ajv errors:\n${ajvText(v.errors)}`)
  }
  const resp = responseFor(route, ex.status)
  if (!resp) {
    return violation(ex, `status ${ex.status} is not listed for ${opName} (${route.method.toUpperCase()} ${route.template}; listed: ${Object.keys(route.op.responses ?? {}).join(', ')})`)
  }
  if (ex.text === '') {
    if (resp.schemaPointer && ex.method !== 'HEAD') violation(ex, `${opName} ${ex.status}: the document gives a JSON body (${schemaName(resp.schemaPointer)}) but the response has none`)
    return
  }
  if (!resp.schemaPointer) return violation(ex, `${opName} ${ex.status}: the document gives no body for this response, but one was sent`)
  if (!/^application\/json\b/i.test(ex.contentType ?? '')) violation(ex, `${opName} ${ex.status}: Content-Type is ${JSON.stringify(ex.contentType)}, not application/json`)
  let body
  try {
    body = JSON.parse(ex.text)
  } catch (err) {
    return violation(ex, `${opName} ${ex.status}: the body is not JSON (${err.message})`)
  }
  const validate = validatorAt(resp.schemaPointer)
  state.validated++
  if (!validate(body) && !(resp.bareErrorModel && validatorAt(ERROR_WRAPPER)(body))) return violation(ex, `${opName} ${ex.status}: the body breaks ${schemaName(resp.schemaPointer)} (response ${resp.key} of ${route.method.toUpperCase()} ${route.template})`, validate.errors)
  ex.json = body
}

/**
 * fetch that records and validates every response. iceberg-js is handed
 * this as its fetch; the raw requests below go through it too.
 */
async function recordingFetch(input, init = {}) {
  const url = new URL(typeof input === 'string' || input instanceof URL ? String(input) : input.url)
  const method = (init.method ?? 'GET').toUpperCase()
  const res = await fetch(url, init)
  const text = method === 'HEAD' || res.status === 204 || res.status === 304 ? '' : await res.clone().text()
  const ex = { method, url, status: res.status, headers: res.headers, contentType: res.headers.get('content-type'), text, reqBody: init.body, invalidOnPurpose: init.invalidOnPurpose }
  checkExchange(ex)
  lastExchange = ex
  return res
}
let lastExchange

// ---------------------------------------------------------------- helpers for checks

function expect(cond, msg, ex = lastExchange) {
  if (!cond) throw new CheckFailure(`${msg}${ex ? '\n' + describe(ex) : ''}`)
}

const failures = []
async function check(name, fn) {
  log(`check ${name}`)
  if (!keepGoing) {
    await fn()
    checks.push(name)
    return
  }
  try {
    await fn()
    checks.push(name)
  } catch (err) {
    log(`  FAILED ${name}`)
    failures.push(`${name}: ${failureText(err)}`)
  }
}

function failureText(err) {
  if (err instanceof CheckFailure) return err.message
  if (err instanceof IcebergError) return `iceberg-js: ${err.message} (status ${err.status}, type ${err.icebergType})${lastExchange ? '\n' + describe(lastExchange) : ''}`
  return `${err.stack ?? err}${lastExchange ? '\nlast exchange:\n' + describe(lastExchange) : ''}`
}

const authHeader = () => (tokenArg ? { Authorization: `Bearer ${tokenArg}` } : {})
let uri
let root // uri + /v1[/prefix]
let advertised // the config's endpoints, when it lists them

/**
 * a raw request; relPath is under /v1/{prefix} unless it starts with /v1/.
 * Returns {status, headers, text, json}; json is the parsed body if any.
 */
async function api(method, relPath, { body, rawBody, headers = {}, auth = true, idempotencyKey, invalidOnPurpose } = {}) {
  const url = relPath.startsWith('/v1/') ? `${uri}${relPath}` : `${root}${relPath}`
  const h = { ...(auth ? authHeader() : {}), ...headers }
  let payload
  if (body !== undefined) payload = JSON.stringify(body)
  if (rawBody !== undefined) payload = rawBody
  if (payload !== undefined) h['Content-Type'] = 'application/json'
  if (idempotencyKey) h['Idempotency-Key'] = idempotencyKey
  const res = await recordingFetch(url, { method, headers: h, body: payload, invalidOnPurpose })
  const ex = lastExchange
  let json
  if (ex.text) {
    try {
      json = JSON.parse(ex.text)
    } catch {}
  }
  return { status: res.status, headers: res.headers, text: ex.text, json, ex }
}

function expectStatus(r, want, what) {
  const wants = Array.isArray(want) ? want : [want]
  expect(wants.includes(r.status), `${what}: want status ${wants.join(' or ')}, got ${r.status}`, r.ex)
}

/** an error response: status, the ErrorModel's code equal to it, and its type if given */
function expectError(r, status, type, what) {
  expectStatus(r, status, what)
  const e = r.json?.error
  expect(e && typeof e.message === 'string', `${what}: no {"error": {...}} body`, r.ex)
  expect(e.code === status, `${what}: error.code is ${e.code}, the status is ${status}`, r.ex)
  if (type) {
    const types = Array.isArray(type) ? type : [type]
    expect(types.includes(e.type), `${what}: error.type is ${JSON.stringify(e.type)}, want ${types.join(' or ')}`, r.ex)
  }
}

/** runs a library call that must fail, returning its IcebergError */
async function expectIcebergError(promise, status, what) {
  try {
    await promise
  } catch (err) {
    if (err instanceof IcebergError) {
      expect(err.status === status, `${what}: want an IcebergError with status ${status}, got ${err.status} (${err.message})`)
      return err
    }
    throw err
  }
  throw new CheckFailure(`${what}: succeeded, want status ${status}\n${describe(lastExchange)}`)
}

const nsPath = (ns) => ns.map(encodeURIComponent).join('%1F')
const tablePath = (ns, name) => `/namespaces/${nsPath(ns)}/tables/${encodeURIComponent(name)}`

/** a local file for a metadata location, or undefined for object stores */
function localFile(loc) {
  if (typeof loc !== 'string') return undefined
  if (loc.startsWith('file:')) return fileURLToPath(loc)
  if (loc.startsWith('/')) return loc
  return undefined
}

const eventsSchema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', type: 'long', required: true },
    { id: 2, name: 'name', type: 'string', required: false },
    { id: 3, name: 'ts', type: 'timestamp', required: false },
  ],
}

function currentSchema(meta) {
  return meta.schemas?.find((s) => s['schema-id'] === meta['current-schema-id'])
}

function expectEventsSchema(meta, what) {
  const s = currentSchema(meta)
  expect(s, `${what}: metadata has no current schema`)
  const got = s.fields.map((f) => [f.name, f.type, f.required])
  expect(isDeepStrictEqual(got, [['id', 'long', true], ['name', 'string', false], ['ts', 'timestamp', false]]), `${what}: schema fields are ${JSON.stringify(got)}`)
}

// ---------------------------------------------------------------- 1. iceberg-js

async function icebergJsPart(prefix) {
  const catalog = new IcebergRestCatalog({
    baseUrl: uri,
    // iceberg-js reads /v1/config only when it has a warehouse; it then uses
    // overrides.prefix / defaults.prefix, else the warehouse, as the prefix.
    warehouse: prefixArg ?? (prefix || undefined),
    auth: tokenArg ? { type: 'bearer', token: tokenArg } : { type: 'none' },
    fetch: recordingFetch,
  })
  const ns = { namespace: ['js_ns'] }
  const id = { namespace: ['js_ns'], name: 'events' }

  await check('js:loadConfig', async () => {
    const cfg = await catalog.loadConfig()
    expect(cfg && typeof cfg.defaults === 'object' && typeof cfg.overrides === 'object', 'loadConfig: no defaults/overrides')
  })
  await check('js:createNamespace', async () => {
    const res = await catalog.createNamespace(ns, { properties: { owner: 'floe-interop' } })
    expect(isDeepStrictEqual(res?.namespace, ['js_ns']), `createNamespace returned namespace ${JSON.stringify(res?.namespace)}`)
    if (res.properties) expect(res.properties.owner === 'floe-interop', `createNamespace returned properties ${JSON.stringify(res.properties)}`)
  })
  await check('js:createNamespace-again-409', async () => {
    const err = await expectIcebergError(catalog.createNamespace(ns), 409, 'createNamespace js_ns again')
    expect(err.icebergType === 'AlreadyExistsException', `409 type is ${err.icebergType}, want AlreadyExistsException`)
  })
  await check('js:listNamespaces', async () => {
    const { namespaces } = await catalog.listNamespaces()
    expect(namespaces.some((n) => isDeepStrictEqual(n.namespace, ['js_ns'])), `listNamespaces lacks js_ns: ${JSON.stringify(namespaces)}`)
  })
  await check('js:namespaceExists', async () => {
    expect((await catalog.namespaceExists(ns)) === true, 'namespaceExists(js_ns) is false')
    expect((await catalog.namespaceExists({ namespace: ['js_ns_missing'] })) === false, 'namespaceExists(js_ns_missing) is true')
  })
  await check('js:loadNamespaceMetadata', async () => {
    const md = await catalog.loadNamespaceMetadata(ns)
    expect(md.properties.owner === 'floe-interop', `loadNamespaceMetadata properties ${JSON.stringify(md.properties)}`)
  })
  await check('js:updateNamespaceProperties', async () => {
    const res = await catalog.updateNamespaceProperties(ns, { updates: { tier: 'gold' } })
    expect(isDeepStrictEqual(res.updated, ['tier']), `updateNamespaceProperties updated=${JSON.stringify(res.updated)}`)
    const md = await catalog.loadNamespaceMetadata(ns)
    expect(md.properties.tier === 'gold' && md.properties.owner === 'floe-interop', `properties after update ${JSON.stringify(md.properties)}`)
  })

  let created
  await check('js:createTable', async () => {
    created = await catalog.createTableResult(ns, {
      name: 'events',
      schema: eventsSchema,
      'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 3, 'field-id': 1000, name: 'ts_day', transform: 'day' }] },
      'write-order': { 'order-id': 0, fields: [] },
      properties: { 'write.format.default': 'parquet' },
    })
    const meta = created.metadata
    expectEventsSchema(meta, 'createTable')
    expect(typeof created['metadata-location'] === 'string' && created['metadata-location'], 'createTable returned no metadata-location')
    const spec = meta['partition-specs']?.find((s) => s['spec-id'] === meta['default-spec-id'])
    const ts = currentSchema(meta).fields.find((f) => f.name === 'ts')
    expect(spec && spec.fields.length === 1 && spec.fields[0].transform === 'day' && spec.fields[0]['source-id'] === ts.id, `createTable: default partition spec is ${JSON.stringify(spec)}, want day(ts)`)
    expect(meta.properties?.['write.format.default'] === 'parquet', `createTable: properties ${JSON.stringify(meta.properties)}`)
  })
  await check('js:createTable-again-409', async () => {
    await expectIcebergError(catalog.createTable(ns, { name: 'events', schema: eventsSchema }), 409, 'createTable js_ns.events again')
  })
  let loaded
  await check('js:loadTable', async () => {
    loaded = await catalog.loadTableResult(id)
    expect(loaded['metadata-location'] === created['metadata-location'], `loadTable metadata-location ${loaded['metadata-location']}, created ${created['metadata-location']}`)
    expect(loaded.metadata['table-uuid'] === created.metadata['table-uuid'], 'loadTable table-uuid differs from createTable')
    expectEventsSchema(loaded.metadata, 'loadTable')
    const refs = await catalog.loadTable(id, { snapshots: 'refs' })
    expect(refs && refs['table-uuid'] === created.metadata['table-uuid'], 'loadTable snapshots=refs returned another table')
  })
  await check('js:loadTable-ifNoneMatch-304', async () => {
    expect(typeof loaded.etag === 'string' && loaded.etag, 'loadTable returned no ETag header')
    const again = await catalog.loadTable(id, { ifNoneMatch: loaded.etag })
    expect(again === null, 'loadTable with If-None-Match set to its own ETag did not get 304')
  })
  await check('js:tableExists', async () => {
    expect((await catalog.tableExists(id)) === true, 'tableExists(js_ns.events) is false')
    expect((await catalog.tableExists({ namespace: ['js_ns'], name: 'missing' })) === false, 'tableExists(js_ns.missing) is true')
  })
  await check('js:updateTable', async () => {
    const res = await catalog.updateTable(id, {
      requirements: [
        { type: 'assert-table-uuid', uuid: loaded.metadata['table-uuid'] },
        { type: 'assert-current-schema-id', 'current-schema-id': loaded.metadata['current-schema-id'] },
      ],
      updates: [{ action: 'set-properties', updates: { 'floe.interop': 'iceberg-js' } }],
    })
    expect(res['metadata-location'] !== loaded['metadata-location'], 'updateTable: metadata-location did not change')
    expect(res.metadata.properties?.['floe.interop'] === 'iceberg-js', `updateTable: properties ${JSON.stringify(res.metadata.properties)}`)
    const after = await catalog.loadTableResult(id)
    expect(after['metadata-location'] === res['metadata-location'], 'loadTable after updateTable: metadata-location is not the commit\'s')
    expect(after.metadata.properties?.['floe.interop'] === 'iceberg-js', 'loadTable after updateTable: property missing')
  })
  await check('js:listTables', async () => {
    const { identifiers } = await catalog.listTables(ns)
    expect(identifiers.some((t) => t.name === 'events' && isDeepStrictEqual(t.namespace, ['js_ns'])), `listTables lacks js_ns.events: ${JSON.stringify(identifiers)}`)
  })
  await check('js:dropNamespace-nonempty-409', async () => {
    await expectIcebergError(catalog.dropNamespace(ns), 409, 'dropNamespace js_ns with a table in it')
  })
  await check('js:renameTable', async () => {
    const moved = { namespace: ['js_ns'], name: 'events_moved' }
    await catalog.renameTable({ source: id, destination: moved })
    expect((await catalog.tableExists(moved)) === true && (await catalog.tableExists(id)) === false, 'renameTable: old name still there or new name missing')
    await catalog.renameTable({ source: moved, destination: id })
    const back = await catalog.loadTable(id)
    expect(back['table-uuid'] === loaded.metadata['table-uuid'], 'renameTable there and back changed the table-uuid')
  })
  await check('js:dropTable', async () => {
    await catalog.dropTable(id)
    expect((await catalog.tableExists(id)) === false, 'tableExists after dropTable is true')
    const err = await expectIcebergError(catalog.loadTable(id), 404, 'loadTable after dropTable')
    expect(err.icebergType === 'NoSuchTableException', `404 type is ${err.icebergType}, want NoSuchTableException`)
  })
  await check('js:dropNamespace', async () => {
    await catalog.dropNamespace(ns)
    expect((await catalog.namespaceExists(ns)) === false, 'namespaceExists after dropNamespace is true')
    const err = await expectIcebergError(catalog.loadNamespaceMetadata(ns), 404, 'loadNamespaceMetadata after dropNamespace')
    expect(err.icebergType === 'NoSuchNamespaceException', `404 type is ${err.icebergType}, want NoSuchNamespaceException`)
  })
}

// ---------------------------------------------------------------- 2. raw fetch

const createReq = (name, extra = {}) => ({ name, schema: eventsSchema, properties: { 'write.format.default': 'parquet' }, ...extra })

async function load(ns, name) {
  const r = await api('GET', tablePath(ns, name))
  expectStatus(r, 200, `load ${ns.join('.')}.${name}`)
  return r
}

async function rawPart() {
  const ns = ['raw_ns']
  const key = generateIdempotencyKey()

  await check('raw:createNamespace-idempotent-replay', async () => {
    const body = { namespace: ns, properties: { owner: 'floe-interop' } }
    const first = await api('POST', '/namespaces', { body, idempotencyKey: key })
    expectStatus(first, 200, 'create raw_ns')
    const second = await api('POST', '/namespaces', { body, idempotencyKey: key })
    expect(second.status !== 409, 'the same create-namespace with the same Idempotency-Key was answered 409, not replayed', second.ex)
    expect(second.status === first.status, `replay status ${second.status}, first ${first.status}`, second.ex)
    expect(isDeepStrictEqual(second.json, first.json), `replay body ${second.text} differs from the first ${first.text}`, second.ex)
    const third = await api('POST', '/namespaces', { body, idempotencyKey: generateIdempotencyKey() })
    expectError(third, 409, 'AlreadyExistsException', 'create raw_ns with a new Idempotency-Key')
  })

  await check('raw:head-namespace', async () => {
    expectStatus(await api('HEAD', `/namespaces/${nsPath(ns)}`), 204, 'HEAD raw_ns')
    expectStatus(await api('HEAD', '/namespaces/no_such_ns'), 404, 'HEAD no_such_ns')
  })
  await check('raw:404-namespace', async () => {
    expectError(await api('GET', '/namespaces/no_such_ns'), 404, 'NoSuchNamespaceException', 'GET no_such_ns')
    expectError(await api('GET', '/namespaces/no_such_ns/tables'), 404, 'NoSuchNamespaceException', 'list tables of no_such_ns')
    expectError(await api('DELETE', '/namespaces/no_such_ns'), 404, 'NoSuchNamespaceException', 'DELETE no_such_ns')
    expectError(await api('POST', '/namespaces/no_such_ns/tables', { body: createReq('t') }), 404, 'NoSuchNamespaceException', 'create table in no_such_ns')
  })
  await check('raw:400-bad-requests', async () => {
    expectError(await api('POST', '/namespaces', { rawBody: '{"namespace": ', invalidOnPurpose: true }), 400, undefined, 'create namespace with malformed JSON')
    expectError(await api('POST', '/namespaces', { body: { namespace: 'not-an-array' }, invalidOnPurpose: true }), 400, undefined, 'create namespace with a string namespace')
  })

  await check('raw:namespace-properties', async () => {
    let r = await api('POST', `/namespaces/${nsPath(ns)}/properties`, { body: { updates: { a: '1', b: '2' } }, idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 200, 'set a, b')
    expect(isDeepStrictEqual([...r.json.updated].sort(), ['a', 'b']) && r.json.removed.length === 0, `set a, b answered ${r.text}`)
    r = await api('POST', `/namespaces/${nsPath(ns)}/properties`, { body: { removals: ['a', 'nope'], updates: { c: '3' } } })
    expectStatus(r, 200, 'remove a, nope; set c')
    expect(isDeepStrictEqual(r.json.updated, ['c']) && isDeepStrictEqual(r.json.removed, ['a']), `remove a, nope; set c answered ${r.text}`)
    if (r.json.missing != null) expect(isDeepStrictEqual(r.json.missing, ['nope']), `missing is ${JSON.stringify(r.json.missing)}, want ["nope"]`)
    r = await api('GET', `/namespaces/${nsPath(ns)}`)
    expectStatus(r, 200, 'GET raw_ns')
    const p = r.json.properties ?? {}
    expect(p.b === '2' && p.c === '3' && !('a' in p) && p.owner === 'floe-interop', `properties now ${JSON.stringify(p)}`)
    expectError(await api('POST', '/namespaces/no_such_ns/properties', { body: { updates: { x: '1' } } }), 404, 'NoSuchNamespaceException', 'properties of no_such_ns')
  })

  let t1
  await check('raw:createTable', async () => {
    const r = await api('POST', `/namespaces/${nsPath(ns)}/tables`, { body: createReq('t1'), idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 200, 'create raw_ns.t1')
    expect(typeof r.json['metadata-location'] === 'string', 'create raw_ns.t1: no metadata-location')
    expectEventsSchema(r.json.metadata, 'create raw_ns.t1')
    t1 = r.json
  })
  await check('raw:head-table', async () => {
    expectStatus(await api('HEAD', tablePath(ns, 't1')), 204, 'HEAD raw_ns.t1')
    expectStatus(await api('HEAD', tablePath(ns, 'missing')), 404, 'HEAD raw_ns.missing')
  })
  await check('raw:404-table', async () => {
    expectError(await api('GET', tablePath(ns, 'missing')), 404, 'NoSuchTableException', 'GET raw_ns.missing')
    expectError(await api('GET', tablePath(['no_such_ns'], 't1')), 404, ['NoSuchTableException', 'NoSuchNamespaceException'], 'GET no_such_ns.t1')
    expectError(await api('POST', tablePath(ns, 'missing'), { body: { requirements: [], updates: [{ action: 'set-properties', updates: { x: '1' } }] } }), 404, 'NoSuchTableException', 'commit to raw_ns.missing')
  })

  let etag
  await check('raw:etag-304', async () => {
    const r = await load(ns, 't1')
    etag = r.headers.get('etag')
    expect(etag, 'GET raw_ns.t1 has no ETag header', r.ex)
    const again = await api('GET', tablePath(ns, 't1'), { headers: { 'If-None-Match': etag } })
    expectStatus(again, 304, 'GET raw_ns.t1 with If-None-Match: its ETag')
    expect(again.text === '', '304 with a body', again.ex)
    const other = await api('GET', tablePath(ns, 't1'), { headers: { 'If-None-Match': '"not-this-one"' } })
    expectStatus(other, 200, 'GET raw_ns.t1 with another If-None-Match')
  })

  await check('raw:commit-failed-requirement-409', async () => {
    const before = await load(ns, 't1')
    const r = await api('POST', tablePath(ns, 't1'), {
      body: { requirements: [{ type: 'assert-table-uuid', uuid: randomUUID() }], updates: [{ action: 'set-properties', updates: { 'must.not': 'land' } }] },
      idempotencyKey: generateIdempotencyKey(),
    })
    expectError(r, 409, 'CommitFailedException', 'commit with a wrong assert-table-uuid')
    const after = await load(ns, 't1')
    expect(after.json['metadata-location'] === before.json['metadata-location'], `metadata-location moved from ${before.json['metadata-location']} to ${after.json['metadata-location']} after a failed commit`, after.ex)
    expect(!('must.not' in (after.json.metadata.properties ?? {})), 'the failed commit\'s property landed', after.ex)
  })
  await check('raw:commit-unknown-update-400', async () => {
    const r = await api('POST', tablePath(ns, 't1'), { body: { requirements: [], updates: [{ action: 'no-such-update', x: 1 }] }, invalidOnPurpose: true })
    expectError(r, 400, undefined, 'commit with an unknown update action')
    const r2 = await api('POST', tablePath(ns, 't1'), { body: { requirements: [{ type: 'assert-no-such-thing' }], updates: [] }, invalidOnPurpose: true })
    expectError(r2, 400, undefined, 'commit with an unknown requirement type')
  })
  await check('raw:commit', async () => {
    const before = await load(ns, 't1')
    const commitKey = generateIdempotencyKey()
    const commit = {
      requirements: [{ type: 'assert-table-uuid', uuid: t1.metadata['table-uuid'] }],
      updates: [{ action: 'set-properties', updates: { 'raw.commit': '1' } }, { action: 'remove-properties', removals: ['write.format.default'] }],
    }
    const r = await api('POST', tablePath(ns, 't1'), { body: commit, idempotencyKey: commitKey })
    expectStatus(r, 200, 'commit to raw_ns.t1')
    expect(r.json['metadata-location'] !== before.json['metadata-location'], 'commit: metadata-location unchanged', r.ex)
    const props = r.json.metadata.properties ?? {}
    expect(props['raw.commit'] === '1' && !('write.format.default' in props), `commit: properties ${JSON.stringify(props)}`, r.ex)
    // A retry with the same Idempotency-Key is answered as the first was
    // and commits nothing more.
    const retry = await api('POST', tablePath(ns, 't1'), { body: commit, idempotencyKey: commitKey })
    expectStatus(retry, 200, 'the same commit with the same Idempotency-Key')
    expect(retry.json['metadata-location'] === r.json['metadata-location'], `the retried commit answered metadata-location ${retry.json['metadata-location']}, the first ${r.json['metadata-location']}`, retry.ex)
    const now = await load(ns, 't1')
    expect(now.json['metadata-location'] === r.json['metadata-location'], `after the retried commit the table is at ${now.json['metadata-location']}, not the first commit's ${r.json['metadata-location']}`, now.ex)
    const stale = await api('GET', tablePath(ns, 't1'), { headers: { 'If-None-Match': etag } })
    expectStatus(stale, 200, 'GET raw_ns.t1 with the ETag from before the commit')
    expect(stale.headers.get('etag') && stale.headers.get('etag') !== etag, `ETag after the commit is ${stale.headers.get('etag')}, before ${etag}`, stale.ex)
  })

  if (!advertised || advertised.has('POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics')) {
    await check('raw:report-metrics', async () => {
      // A scan report as the Java client sends one after planning a scan.
      const report = (table) => ({
        'report-type': 'scan-report',
        'table-name': table,
        'snapshot-id': -1,
        filter: true,
        'schema-id': 0,
        'projected-field-ids': [1, 2, 3],
        'projected-field-names': ['id', 'name', 'ts'],
        metrics: { 'total-planning-duration': { count: 1, 'time-unit': 'nanoseconds', 'total-duration': 1000 }, 'result-data-files': { unit: 'count', value: 0 } },
      })
      expectStatus(await api('POST', `${tablePath(ns, 't1')}/metrics`, { body: report('raw_ns.t1') }), 204, 'report metrics for raw_ns.t1')
      // For a missing table the document lists 404 but does not require it
      // (a server may accept and drop reports): any listed status will do,
      // which the validator already checks.
      await api('POST', `${tablePath(ns, 'missing')}/metrics`, { body: report('raw_ns.missing') })
    })
  }

  await check('raw:stage-create-then-commit', async () => {
    const r = await api('POST', `/namespaces/${nsPath(ns)}/tables`, { body: createReq('staged', { 'stage-create': true, 'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[4]' }] } }), idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 200, 'stage-create raw_ns.staged')
    const meta = r.json.metadata
    expectEventsSchema(meta, 'stage-create')
    expectStatus(await api('HEAD', tablePath(ns, 'staged')), 404, 'HEAD raw_ns.staged after stage-create (must not exist yet)')
    // What a client's create transaction sends (as the Java client does):
    // the staged metadata as updates, with assert-create.
    const schema = currentSchema(meta)
    const spec = meta['partition-specs'].find((s) => s['spec-id'] === meta['default-spec-id'])
    const order = (meta['sort-orders'] ?? []).find((s) => s['order-id'] === meta['default-sort-order-id']) ?? { 'order-id': 0, fields: [] }
    const updates = [
      { action: 'assign-uuid', uuid: meta['table-uuid'] },
      { action: 'upgrade-format-version', 'format-version': meta['format-version'] },
      { action: 'add-schema', schema },
      { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'add-spec', spec },
      { action: 'set-default-spec', 'spec-id': -1 },
      { action: 'add-sort-order', 'sort-order': order },
      { action: 'set-default-sort-order', 'sort-order-id': -1 },
      { action: 'set-location', location: meta.location },
      { action: 'set-properties', updates: { ...(meta.properties ?? {}), 'staged.commit': '1' } },
    ]
    const c = await api('POST', tablePath(ns, 'staged'), { body: { requirements: [{ type: 'assert-create' }], updates }, idempotencyKey: generateIdempotencyKey() })
    expectStatus(c, 200, 'commit the staged create of raw_ns.staged')
    expect(typeof c.json['metadata-location'] === 'string', 'staged commit: no metadata-location', c.ex)
    expectStatus(await api('HEAD', tablePath(ns, 'staged')), 204, 'HEAD raw_ns.staged after its create commit')
    const l = await load(ns, 'staged')
    expectEventsSchema(l.json.metadata, 'load raw_ns.staged')
    expect(l.json.metadata['table-uuid'] === meta['table-uuid'], `raw_ns.staged table-uuid ${l.json.metadata['table-uuid']}, staged ${meta['table-uuid']}`, l.ex)
    expect(l.json.metadata.properties?.['staged.commit'] === '1', 'raw_ns.staged lacks the committed property', l.ex)
    const lspec = l.json.metadata['partition-specs'].find((s) => s['spec-id'] === l.json.metadata['default-spec-id'])
    expect(lspec?.fields?.[0]?.transform === 'bucket[4]', `raw_ns.staged default spec ${JSON.stringify(lspec)}`, l.ex)
    const again = await api('POST', tablePath(ns, 'staged'), { body: { requirements: [{ type: 'assert-create' }], updates }, idempotencyKey: generateIdempotencyKey() })
    expectError(again, 409, ['CommitFailedException', 'AlreadyExistsException'], 'a second assert-create commit to raw_ns.staged')
  })

  await check('raw:rename', async () => {
    const r = await api('POST', '/tables/rename', { body: { source: { namespace: ns, name: 't1' }, destination: { namespace: ns, name: 't1_renamed' } }, idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 204, 'rename raw_ns.t1 to raw_ns.t1_renamed')
    expectStatus(await api('HEAD', tablePath(ns, 't1')), 404, 'HEAD raw_ns.t1 after rename')
    const l = await load(ns, 't1_renamed')
    expect(l.json.metadata['table-uuid'] === t1.metadata['table-uuid'], 'the renamed table has another table-uuid', l.ex)
    expectError(await api('POST', '/tables/rename', { body: { source: { namespace: ns, name: 't1' }, destination: { namespace: ns, name: 'x' } } }), 404, 'NoSuchTableException', 'rename the missing raw_ns.t1')
    expectError(await api('POST', '/tables/rename', { body: { source: { namespace: ns, name: 't1_renamed' }, destination: { namespace: ns, name: 'staged' } } }), 409, 'AlreadyExistsException', 'rename onto the existing raw_ns.staged')
    expectError(await api('POST', '/tables/rename', { body: { source: { namespace: ns, name: 't1_renamed' }, destination: { namespace: ['no_such_ns'], name: 'x' } } }), 404, 'NoSuchNamespaceException', 'rename into no_such_ns')
  })

  let source
  let registered
  await check('raw:register', async () => {
    source = await load(ns, 't1_renamed')
    // A second table over t1_renamed's files is refused: purging either
    // would delete the other's.
    expectError(await api('POST', `/namespaces/${nsPath(ns)}/register`, { body: { name: 'registered', 'metadata-location': source.json['metadata-location'] } }), 400, 'BadRequestException', 'register raw_ns.registered over raw_ns.t1_renamed')
    // A table dropped without purge registers again from its metadata file.
    expectStatus(await api('POST', `/namespaces/${nsPath(ns)}/tables`, { body: createReq('dropped') }), 200, 'create raw_ns.dropped')
    registered = await load(ns, 'dropped')
    expectStatus(await api('DELETE', tablePath(ns, 'dropped')), 204, 'drop raw_ns.dropped')
    const loc = registered.json['metadata-location']
    const r = await api('POST', `/namespaces/${nsPath(ns)}/register`, { body: { name: 'registered', 'metadata-location': loc }, idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 200, 'register raw_ns.registered')
    expect(r.json['metadata-location'] === loc, `register answered metadata-location ${r.json['metadata-location']}, registered ${loc}`, r.ex)
    const l = await load(ns, 'registered')
    expect(l.json['metadata-location'] === loc, `raw_ns.registered loads ${l.json['metadata-location']}, registered ${loc}`, l.ex)
    expect(l.json.metadata['table-uuid'] === registered.json.metadata['table-uuid'], 'raw_ns.registered has another table-uuid than its metadata file', l.ex)
    expectError(await api('POST', `/namespaces/${nsPath(ns)}/register`, { body: { name: 'registered', 'metadata-location': loc } }), 409, 'AlreadyExistsException', 'register raw_ns.registered again')
    expectError(await api('POST', '/namespaces/no_such_ns_reg/register', { body: { name: 'r', 'metadata-location': loc } }), 404, 'NoSuchNamespaceException', 'register into the missing namespace no_such_ns_reg')
  })

  if (advertised && !advertised.has('POST /v1/{prefix}/transactions/commit')) {
    // A server may leave multi-table commits out (floe serve routes them
    // only over a catalog that commits several tables atomically); then the
    // route must not pretend to work.
    await check('raw:transaction-commit-not-advertised', async () => {
      const r = await api('POST', '/transactions/commit', { body: { 'table-changes': [{ identifier: { namespace: ns, name: 't1_renamed' }, requirements: [], updates: [{ action: 'set-properties', updates: { txn: '1' } }] }] }, idempotencyKey: generateIdempotencyKey() })
      expect(r.status >= 400, `transactions/commit is not in the config's endpoints but answered ${r.status}`, r.ex)
      const l = await load(ns, 't1_renamed')
      expect(l.json.metadata.properties?.txn === undefined, 'the unadvertised transactions/commit changed raw_ns.t1_renamed', l.ex)
    })
  } else await check('raw:transaction-commit', async () => {
    const a = await load(ns, 't1_renamed')
    const b = await load(ns, 'staged')
    const change = (name, l, extra = {}) => ({
      identifier: { namespace: ns, name },
      requirements: [{ type: 'assert-table-uuid', uuid: l.json.metadata['table-uuid'] }],
      updates: [{ action: 'set-properties', updates: { txn: '1', ...extra } }],
    })
    const r = await api('POST', '/transactions/commit', { body: { 'table-changes': [change('t1_renamed', a), change('staged', b)] }, idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 204, 'transactions/commit over raw_ns.t1_renamed and raw_ns.staged')
    const a2 = await load(ns, 't1_renamed')
    const b2 = await load(ns, 'staged')
    expect(a2.json.metadata.properties?.txn === '1' && b2.json.metadata.properties?.txn === '1', 'a table of the transaction lacks its property')
    expect(a2.json['metadata-location'] !== a.json['metadata-location'] && b2.json['metadata-location'] !== b.json['metadata-location'], 'a table of the transaction kept its metadata-location')
    // One failing requirement fails the whole transaction.
    const bad = change('staged', b2, { txn: '2' })
    bad.requirements = [{ type: 'assert-table-uuid', uuid: randomUUID() }]
    const f = await api('POST', '/transactions/commit', { body: { 'table-changes': [change('t1_renamed', a2, { txn: '2' }), bad] }, idempotencyKey: generateIdempotencyKey() })
    expectError(f, 409, 'CommitFailedException', 'transactions/commit with one failing requirement')
    const a3 = await load(ns, 't1_renamed')
    const b3 = await load(ns, 'staged')
    expect(a3.json['metadata-location'] === a2.json['metadata-location'] && a3.json.metadata.properties?.txn === '1', 'the failed transaction changed raw_ns.t1_renamed (not atomic)', a3.ex)
    expect(b3.json['metadata-location'] === b2.json['metadata-location'] && b3.json.metadata.properties?.txn === '1', 'the failed transaction changed raw_ns.staged', b3.ex)
  })

  await check('raw:list-tables-pages', async () => {
    const all = await api('GET', `/namespaces/${nsPath(ns)}/tables`)
    expectStatus(all, 200, 'list raw_ns tables')
    const names = (all.json.identifiers ?? []).map((t) => t.name).sort()
    expect(isDeepStrictEqual(names, ['registered', 'staged', 't1_renamed']), `raw_ns tables are ${JSON.stringify(names)}`, all.ex)
    expect(all.json['next-page-token'] == null, 'a listing without pageToken must be whole, but it has a next-page-token', all.ex)
    const paged = []
    let token = ''
    for (let i = 0; i < 10; i++) {
      const r = await api('GET', `/namespaces/${nsPath(ns)}/tables?pageSize=1&pageToken=${encodeURIComponent(token)}`)
      expectStatus(r, 200, 'list raw_ns tables, pageSize=1')
      paged.push(...(r.json.identifiers ?? []).map((t) => t.name))
      token = r.json['next-page-token']
      if (token == null) break
    }
    expect(isDeepStrictEqual(paged.sort(), names), `paging pageSize=1 gave ${JSON.stringify(paged)}, the whole listing ${JSON.stringify(names)}`)
  })

  await check('raw:drop-keeps-files', async () => {
    const file = localFile(registered.json['metadata-location'])
    const r = await api('DELETE', tablePath(ns, 'registered'), { idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 204, 'drop raw_ns.registered')
    expectStatus(await api('HEAD', tablePath(ns, 'registered')), 404, 'HEAD raw_ns.registered after drop')
    if (file) expect(existsSync(file), `dropping raw_ns.registered without purge deleted its metadata file ${file}`)
    await load(ns, 't1_renamed')
    expectError(await api('DELETE', tablePath(ns, 'registered')), 404, 'NoSuchTableException', 'drop raw_ns.registered again')
  })
  await check('raw:drop-purge', async () => {
    const l = await load(ns, 'staged')
    const file = localFile(l.json['metadata-location'])
    const existed = file && existsSync(file)
    const r = await api('DELETE', `${tablePath(ns, 'staged')}?purgeRequested=true`, { idempotencyKey: generateIdempotencyKey() })
    expectStatus(r, 204, 'drop raw_ns.staged with purgeRequested=true')
    expectStatus(await api('HEAD', tablePath(ns, 'staged')), 404, 'HEAD raw_ns.staged after purge')
    if (existed) expect(!existsSync(file), `purgeRequested=true left the metadata file ${file}`)
    const other = localFile(source.json['metadata-location'])
    if (other) expect(existsSync(other), `purging raw_ns.staged deleted ${other}, a metadata file of raw_ns.t1_renamed`)
  })
  await check('raw:dropNamespace', async () => {
    expectError(await api('DELETE', `/namespaces/${nsPath(ns)}`), 409, 'NamespaceNotEmptyException', 'drop raw_ns with raw_ns.t1_renamed in it')
    const l = await load(ns, 't1_renamed')
    const files = [l.json['metadata-location'], ...(l.json.metadata['metadata-log'] ?? []).map((e) => e['metadata-file'])].map(localFile).filter((f) => f && existsSync(f))
    expectStatus(await api('DELETE', tablePath(ns, 't1_renamed')), 204, 'drop raw_ns.t1_renamed')
    const gone = files.filter((f) => !existsSync(f))
    expect(gone.length === 0, `dropping raw_ns.t1_renamed without purgeRequested deleted ${gone.join(', ')}`)
    expectStatus(await api('DELETE', `/namespaces/${nsPath(ns)}`, { idempotencyKey: generateIdempotencyKey() }), 204, 'drop raw_ns')
    expectStatus(await api('HEAD', `/namespaces/${nsPath(ns)}`), 404, 'HEAD raw_ns after drop')
  })
}

// ---------------------------------------------------------------- 3. authentication

/** client credentials for a token at /v1/oauth/tokens (the deprecated route) */
async function oauthPart() {
  const colon = oauthArg.indexOf(':')
  if (colon < 0) usage('--oauth-client needs ID:SECRET')
  const id = oauthArg.slice(0, colon)
  const secret = oauthArg.slice(colon + 1)
  const form = (sec) => new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: sec, scope: 'catalog' }).toString()
  const post = (sec) => recordingFetch(`${uri}/v1/oauth/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form(sec) })
  await check('oauth:client-credentials', async () => {
    const res = await post(secret)
    expect(res.status === 200, `POST /v1/oauth/tokens for client ${id}: want 200, got ${res.status}`)
    const body = JSON.parse(lastExchange.text)
    expect(typeof body.access_token === 'string' && body.access_token, 'no access_token')
    if (!tokenArg) tokenArg = body.access_token
  })
  await check('oauth:wrong-secret-401', async () => {
    const res = await post(`not-${secret}`)
    expect(res.status === 401 || res.status === 400, `POST /v1/oauth/tokens with a wrong secret: want 401 (or 400), got ${res.status}`)
    const body = JSON.parse(lastExchange.text || '{}')
    expect(body.error === 'invalid_client', `wrong secret: error is ${JSON.stringify(body.error)}, want invalid_client`)
  })
}

async function authPart() {
  await check('auth:401-without-token', async () => {
    expectError(await api('GET', '/namespaces', { auth: false }), 401, undefined, 'list namespaces without Authorization')
    expectError(await api('GET', '/namespaces', { auth: false, headers: { Authorization: `Bearer not-${tokenArg}` } }), 401, undefined, 'list namespaces with a wrong token')
    expectError(await api('POST', '/namespaces', { auth: false, body: { namespace: ['auth_ns'] } }), 401, undefined, 'create namespace without Authorization')
    expectStatus(await api('HEAD', '/namespaces/auth_ns'), 404, 'HEAD auth_ns (the unauthorised create must not have happened)')
  })
}

// ---------------------------------------------------------------- self-test (no server)

function selfTestPart() {
  // The document's own examples for each response must pass its schema.
  const seen = new Set()
  const examplesOf = (media) => {
    const out = []
    // One response writes `example: {$ref: '#/components/examples/X'}`,
    // meaning the example X.
    if (media.example?.$ref) out.push(['example', deref(media.example.$ref.slice(1)).node.value])
    else if (media.example !== undefined) out.push(['example', media.example])
    for (const [name, ex] of Object.entries(media.examples ?? {})) {
      const value = ex.$ref ? deref(ex.$ref.slice(1)).node.value : ex.value
      if (value !== undefined) out.push([name, value])
    }
    return out
  }
  const tried = []
  for (const route of buildRoutes('')) {
    for (const key of Object.keys(route.op.responses ?? {})) {
      const { pointer, node } = deref(`${route.pointer}/responses/${escapePointer(key)}`)
      const media = node.content?.['application/json']
      if (!media?.schema) continue
      for (const [name, value] of examplesOf(media)) {
        const id = `${pointer} ${name}`
        if (seen.has(id)) continue
        seen.add(id)
        const v = validatorAt(`${pointer}/content/application~1json/schema`)
        const bare = media.schema.$ref === '#/components/schemas/ErrorModel'
        state.validated++
        tried.push(id)
        if (!v(value) && !(bare && validatorAt(ERROR_WRAPPER)(value))) state.violations.push(`the document's own example ${name} for #${pointer} fails its schema:\n${ajvText(v.errors)}`)
      }
    }
  }
  checks.push(`self:examples(${tried.length})`)

  // Broken bodies must fail.
  const mustFail = [
    ['/components/schemas/IcebergErrorResponse', { error: { message: 'm', type: 'T' } }],
    ['/components/schemas/IcebergErrorResponse', { error: { message: 'm', type: 'T', code: 404 }, extra: 1 }],
    ['/components/schemas/IcebergErrorResponse', { message: 'm', type: 'T', code: 404 }],
    ['/components/schemas/CatalogConfig', { defaults: {}, overrides: { prefix: 1 } }],
    ['/components/schemas/CatalogConfig', { defaults: {} }],
    ['/components/schemas/LoadTableResult', { 'metadata-location': 'x' }],
    ['/components/schemas/LoadTableResult', { metadata: { 'format-version': 2 } }],
    ['/components/schemas/LoadTableResult', { metadata: { 'format-version': 4, 'table-uuid': 'u' } }],
    ['/components/schemas/CommitTableResponse', { metadata: { 'format-version': 2, 'table-uuid': 'u' } }],
    ['/components/schemas/ListNamespacesResponse', { namespaces: ['a'] }],
    ['/components/schemas/ListTablesResponse', { identifiers: [{ namespace: ['a'] }] }],
    ['/components/schemas/UpdateNamespacePropertiesResponse', { updated: [] }],
    ['/components/schemas/CreateNamespaceResponse', { namespace: ['a'], properties: { n: 1 } }],
    ['/components/schemas/LoadTableResult', { metadata: { 'format-version': 2, 'table-uuid': 'u', schemas: [{ type: 'struct', fields: [{ id: 1, name: 'x', type: 'long' }] }] } }],
  ]
  for (const [pointer, value] of mustFail) {
    const v = validatorAt(pointer)
    state.validated++
    if (v(value)) state.violations.push(`the validator accepted a broken ${pointer}: ${JSON.stringify(value)}`)
  }
  const mustPass = [
    ['/components/schemas/LoadTableResult', { 'metadata-location': null, metadata: { 'format-version': 2, 'table-uuid': 'u' } }],
    ['/components/schemas/ListTablesResponse', { identifiers: [], 'next-page-token': null }],
    ['/components/schemas/GetNamespaceResponse', { namespace: ['a'], properties: null }],
    ['/components/schemas/CatalogConfig', { defaults: {}, overrides: { prefix: 'p' }, 'idempotency-key-lifetime': 'PT30M', endpoints: ['GET /v1/{prefix}/namespaces'] }],
  ]
  for (const [pointer, value] of mustPass) {
    const v = validatorAt(pointer)
    state.validated++
    if (!v(value)) state.violations.push(`the validator rejected a valid ${pointer}: ${JSON.stringify(value)}\n${ajvText(v.errors)}`)
  }
  checks.push('self:broken-bodies-fail')

  // Paths resolve to the right operations, with and without a prefix.
  const cases = [
    ['', 'GET', '/v1/config', 'getConfig'],
    ['', 'GET', '/v1/namespaces', 'listNamespaces'],
    ['', 'HEAD', '/v1/namespaces/a%1Fb', 'namespaceExists'],
    ['', 'POST', '/v1/namespaces/a/properties', 'updateProperties'],
    ['', 'POST', '/v1/namespaces/a/register', 'registerTable'],
    ['', 'POST', '/v1/namespaces/a/tables/t', 'updateTable'],
    ['', 'POST', '/v1/tables/rename', 'renameTable'],
    ['', 'POST', '/v1/transactions/commit', 'commitTransaction'],
    ['wh', 'DELETE', '/v1/wh/namespaces/a/tables/t', 'dropTable'],
    ['wh', 'GET', '/v1/wh/namespaces', 'listNamespaces'],
    ['wh', 'GET', '/v1/namespaces', undefined],
    ['', 'GET', '/v1/wh/namespaces', undefined],
  ]
  for (const [prefix, method, p, want] of cases) {
    routes = buildRoutes(prefix)
    const got = findRoute(method, p)?.op.operationId
    if (got !== want) state.violations.push(`route ${method} ${p} (prefix ${JSON.stringify(prefix)}) resolved to ${got}, want ${want}`)
  }
  checks.push('self:routes')
}

// ---------------------------------------------------------------- main

function finish(failure) {
  const problems = []
  for (const f of failures) problems.push(`FAILED CHECK ${f}`)
  if (failure) problems.push(`FAILED CHECK: ${failure}`)
  for (const v of state.violations) problems.push(`SPEC VIOLATION: ${v}`)
  for (const e of state.requestErrors) problems.push(`SCRIPT ERROR: ${e}`)
  if (problems.length) {
    process.stderr.write(`\nrest.mjs: ${problems.length} problem(s) after ${checks.length} passed check(s) and ${state.validated} validated bodies:\n\n${problems.join('\n\n')}\n`)
    process.exit(1)
  }
  process.stdout.write(`${JSON.stringify({ validated: state.validated, checks })}\n`)
  process.exit(0)
}

async function main() {
  if (selfTest) {
    selfTestPart()
    return finish()
  }
  uri = uriArg.replace(/\/+$/, '')
  basePath = new URL(uri).pathname.replace(/\/+$/, '')
  routes = buildRoutes('')
  let prefix = ''
  if (oauthArg) await oauthPart()
  await check('config', async () => {
    const q = prefixArg !== undefined ? `?warehouse=${encodeURIComponent(prefixArg)}` : ''
    const r = await api('GET', `/v1/config${q}`)
    expectStatus(r, 200, 'GET /v1/config')
    prefix = r.json?.overrides?.prefix ?? r.json?.defaults?.prefix ?? prefixArg ?? ''
    log(`  prefix: ${prefix ? JSON.stringify(prefix) : '(none)'}`)
    const endpoints = r.json?.endpoints
    if (Array.isArray(endpoints)) {
      // A client that reads endpoints refuses what is not listed.
      const used = ['GET /v1/{prefix}/namespaces', 'POST /v1/{prefix}/namespaces', 'GET /v1/{prefix}/namespaces/{namespace}', 'HEAD /v1/{prefix}/namespaces/{namespace}', 'DELETE /v1/{prefix}/namespaces/{namespace}', 'POST /v1/{prefix}/namespaces/{namespace}/properties', 'GET /v1/{prefix}/namespaces/{namespace}/tables', 'POST /v1/{prefix}/namespaces/{namespace}/tables', 'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/namespaces/{namespace}/register', 'POST /v1/{prefix}/tables/rename']
      const missing = used.filter((e) => !endpoints.includes(e))
      expect(missing.length === 0, `config endpoints lacks ${missing.join(', ')} (clients that read endpoints will refuse these)`, r.ex)
      advertised = new Set(endpoints)
    }
    if (r.json && !('idempotency-key-lifetime' in r.json)) log('  note: config has no idempotency-key-lifetime, so clients must assume Idempotency-Key is unsupported')
  })
  routes = buildRoutes(prefix)
  root = `${uri}/v1${prefix ? '/' + prefix : ''}`

  log('-- iceberg-js')
  await icebergJsPart(prefix)
  log('-- raw fetch')
  await rawPart()
  if (tokenArg) {
    log('-- authentication')
    await authPart()
  }
  finish()
}

main().catch((err) => finish(failureText(err)))
