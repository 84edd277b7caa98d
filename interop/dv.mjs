#!/usr/bin/env node
// dv.mjs decodes Iceberg format v3 deletion vectors in plain JavaScript,
// sharing no code with floe, iceberg-go or any Roaring library, so that
// check.mjs can apply them to rows DuckDB reads. Used as a module by
// check.mjs, and as a program by floe's tests:
//
//   node interop/dv.mjs <file>                  decode the whole file as one deletion-vector-v1 blob
//   node interop/dv.mjs <file> <offset> <size>  decode the blob at offset (a Puffin file's blob)
//   node interop/dv.mjs --puffin <file>         decode every deletion-vector-v1 blob of a Puffin file
//
// It prints the deleted positions, one decimal per line in ascending order
// (--puffin: one JSON object per blob: {"offset", "length", "properties", "positions"}),
// or the error on stderr and exits 1.
//
// The formats, from the Iceberg spec ("Deletion Vectors", Puffin
// "deletion-vector-v1") and the RoaringFormatSpec:
//
//   blob:    u32 BE length of magic + bitmap | magic D1 D3 39 64 | bitmap | u32 BE CRC-32 of magic + bitmap
//   bitmap:  Roaring64 "portable": u64 LE count of 32-bit buckets, then per bucket, keys ascending:
//            u32 LE key (the positions' high 32 bits) | a 32-bit portable Roaring bitmap (the low 32 bits)
//   32-bit:  u32 LE cookie: 12346 = no run containers, then u32 LE container count;
//            low 16 bits 12347 = some run containers, count = high 16 bits + 1, then a bitset of
//            ceil(count/8) bytes marking the run containers;
//            per container u16 LE key, u16 LE cardinality - 1;
//            u32 LE offsets of each container from the bitmap's start (with 12346, or with 12347
//            and at least 4 containers);
//            containers: run = u16 LE run count, then (u16 LE start, u16 LE length - 1) pairs;
//            array (cardinality <= 4096) = ascending u16 LE values;
//            bitmap = 1024 u64 LE words, bit i of word w meaning value 64*w + i.

import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { crc32 } from 'node:zlib'

const COOKIE_NO_RUNS = 12346
const COOKIE_RUNS = 12347
const NO_OFFSET_THRESHOLD = 4
const MAX_ARRAY = 4096
const DV_MAGIC = 0xd1d33964
const PUFFIN_MAGIC = Buffer.from('PFA1')

/** An error naming what is wrong with the bytes, and where. */
class FormatError extends Error {}

/**
 * Decodes a 32-bit portable Roaring bitmap that starts at buf[start]: calls
 * add(value) for each value, ascending, and returns the offset just past it.
 */
export function decodeRoaring32(buf, start, add) {
  let off = start
  const need = (n, what) => {
    if (off + n > buf.length) throw new FormatError(`roaring: ${what} at byte ${off} runs past the end (${buf.length} bytes)`)
  }
  need(4, 'cookie')
  const cookie = buf.readUInt32LE(off)
  off += 4
  let size
  let runFlags = null
  if ((cookie & 0xffff) === COOKIE_RUNS) {
    size = (cookie >>> 16) + 1
    const n = (size + 7) >>> 3
    need(n, 'run container bitset')
    runFlags = buf.subarray(off, off + n)
    off += n
  } else if (cookie === COOKIE_NO_RUNS) {
    need(4, 'container count')
    size = buf.readUInt32LE(off)
    off += 4
    if (size > 65536) throw new FormatError(`roaring: ${size} containers, at most 65536`)
  } else {
    throw new FormatError(`roaring: unknown cookie 0x${cookie.toString(16)} at byte ${start}`)
  }
  need(4 * size, 'container headers')
  const keys = new Array(size)
  const cards = new Array(size)
  for (let i = 0; i < size; i++) {
    keys[i] = buf.readUInt16LE(off)
    cards[i] = buf.readUInt16LE(off + 2) + 1
    off += 4
    if (i > 0 && keys[i] <= keys[i - 1]) throw new FormatError(`roaring: container keys not ascending (${keys[i - 1]}, ${keys[i]})`)
  }
  let offsets = null
  if (!runFlags || size >= NO_OFFSET_THRESHOLD) {
    need(4 * size, 'container offsets')
    offsets = []
    for (let i = 0; i < size; i++) offsets.push(buf.readUInt32LE(off + 4 * i))
    off += 4 * size
  }
  const isRun = (i) => runFlags !== null && ((runFlags[i >>> 3] >>> (i & 7)) & 1) === 1
  for (let i = 0; i < size; i++) {
    // Containers are written back to back; an offset saying otherwise
    // means the header and the data disagree.
    if (offsets && offsets[i] !== off - start) throw new FormatError(`roaring: container ${i} is at byte ${off - start} but its offset says ${offsets[i]}`)
    const hi = keys[i] * 65536
    let n = 0
    if (isRun(i)) {
      need(2, 'run count')
      const runs = buf.readUInt16LE(off)
      off += 2
      need(4 * runs, 'runs')
      let next = 0
      for (let r = 0; r < runs; r++) {
        const first = buf.readUInt16LE(off)
        const last = first + buf.readUInt16LE(off + 2)
        off += 4
        if (last > 0xffff) throw new FormatError(`roaring: run ${first}+${last - first} passes the end of container ${keys[i]}`)
        if (first < next) throw new FormatError(`roaring: runs of container ${keys[i]} overlap or are not ascending`)
        for (let v = first; v <= last; v++) add(hi + v)
        n += last - first + 1
        next = last + 1
      }
    } else if (cards[i] <= MAX_ARRAY) {
      need(2 * cards[i], 'array container')
      let prev = -1
      for (let j = 0; j < cards[i]; j++) {
        const v = buf.readUInt16LE(off)
        off += 2
        if (v <= prev) throw new FormatError(`roaring: array container ${keys[i]} not ascending`)
        prev = v
        add(hi + v)
      }
      n = cards[i]
    } else {
      need(8192, 'bitmap container')
      // Read as 2048 little-endian 32-bit words: the same bits, in the same
      // order, as the 1024 64-bit words, without BigInt.
      for (let w = 0; w < 2048; w++) {
        let word = buf.readUInt32LE(off + 4 * w)
        while (word !== 0) {
          const low = word & -word
          add(hi + w * 32 + 31 - Math.clz32(low))
          word ^= low
          n++
        }
      }
      off += 8192
    }
    if (n !== cards[i]) throw new FormatError(`roaring: container ${keys[i]} holds ${n} values, its header says ${cards[i]}`)
  }
  return off
}

/**
 * Decodes a portable Roaring64 bitmap that fills buf exactly; returns its
 * values ascending, as BigInt.
 */
export function decodeRoaring64(buf) {
  if (buf.length < 8) throw new FormatError(`roaring64: ${buf.length} bytes, too short for the bucket count`)
  const count = buf.readBigUInt64LE(0)
  let off = 8
  const out = []
  let prevKey = -1
  for (let i = 0n; i < count; i++) {
    if (off + 4 > buf.length) throw new FormatError(`roaring64: bucket ${i} of ${count} runs past the end (${buf.length} bytes)`)
    const key = buf.readUInt32LE(off)
    off += 4
    if (key <= prevKey) throw new FormatError(`roaring64: bucket keys not ascending (${prevKey}, ${key})`)
    prevKey = key
    const hi = BigInt(key) << 32n
    off = decodeRoaring32(buf, off, (lo) => out.push(hi | BigInt(lo)))
  }
  if (off !== buf.length) throw new FormatError(`roaring64: ${buf.length - off} bytes after the last bucket`)
  return out
}

/** Decodes one deletion-vector-v1 blob; returns the deleted positions ascending, as BigInt. */
export function decodeDV(blob) {
  blob = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength)
  if (blob.length < 12) throw new FormatError(`deletion vector: ${blob.length} bytes, too short for length, magic and CRC`)
  const len = blob.readUInt32BE(0)
  if (len + 8 !== blob.length) throw new FormatError(`deletion vector: length field ${len} does not fit the blob's ${blob.length} bytes (want length + 8)`)
  const magic = blob.readUInt32BE(4)
  if (magic !== DV_MAGIC) throw new FormatError(`deletion vector: magic ${magic.toString(16)}, want d1d33964`)
  const body = blob.subarray(4, 4 + len)
  const want = blob.readUInt32BE(4 + len)
  const got = crc32(body) >>> 0
  if (got !== want) throw new FormatError(`deletion vector: CRC-32 ${got.toString(16)} does not match the stored ${want.toString(16)}`)
  return decodeRoaring64(body.subarray(4))
}

/** The blob metadata of a Puffin file (its footer's "blobs"). */
export function puffinBlobs(file) {
  if (file.length < 20 || !file.subarray(0, 4).equals(PUFFIN_MAGIC) || !file.subarray(file.length - 4).equals(PUFFIN_MAGIC)) {
    throw new FormatError('puffin: no PFA1 magic at the start and end')
  }
  const flags = file.readUInt32LE(file.length - 8)
  if (flags & 1) throw new FormatError('puffin: compressed footer payload is not supported')
  const size = file.readUInt32LE(file.length - 12)
  const start = file.length - 12 - size
  if (start < 8 || !file.subarray(start - 4, start).equals(PUFFIN_MAGIC)) throw new FormatError(`puffin: footer payload size ${size} does not lead to the footer magic`)
  const footer = JSON.parse(file.subarray(start, start + size).toString('utf8'))
  if (!Array.isArray(footer.blobs)) throw new FormatError('puffin: footer has no blobs list')
  return footer.blobs
}

/**
 * The deletion vector a manifest entry points at: the blob at offset and
 * size of a Puffin file, checked against the footer's metadata for it
 * (type, no compression, and the referenced data file and cardinality when
 * given). Returns the positions ascending, as BigInt.
 */
export function readDV(file, offset, size, { referencedDataFile, cardinality } = {}) {
  offset = Number(offset)
  size = Number(size)
  const blob = puffinBlobs(file).find(b => Number(b.offset) === offset)
  if (!blob) throw new FormatError(`puffin: no blob at offset ${offset}`)
  if (Number(blob.length) !== size) throw new FormatError(`puffin: blob at offset ${offset} is ${blob.length} bytes, the manifest says ${size}`)
  if (blob.type !== 'deletion-vector-v1') throw new FormatError(`puffin: blob at offset ${offset} has type ${blob.type}, want deletion-vector-v1`)
  if (blob['compression-codec'] != null) throw new FormatError(`puffin: deletion vector at offset ${offset} is compressed (${blob['compression-codec']}); the spec forbids it`)
  const props = blob.properties ?? {}
  if (referencedDataFile !== undefined && props['referenced-data-file'] !== referencedDataFile) {
    throw new FormatError(`puffin: deletion vector at offset ${offset} is for ${props['referenced-data-file']}, the manifest says ${referencedDataFile}`)
  }
  if (offset + size > file.length) throw new FormatError(`puffin: blob at offset ${offset} of ${size} bytes passes the end of the file (${file.length} bytes)`)
  const positions = decodeDV(file.subarray(offset, offset + size))
  if (props.cardinality !== undefined && BigInt(props.cardinality) !== BigInt(positions.length)) {
    throw new FormatError(`puffin: deletion vector at offset ${offset} holds ${positions.length} positions, its cardinality property says ${props.cardinality}`)
  }
  if (cardinality !== undefined && BigInt(cardinality) !== BigInt(positions.length)) {
    throw new FormatError(`deletion vector at offset ${offset} holds ${positions.length} positions, the manifest's record_count says ${cardinality}`)
  }
  return positions
}

function main(argv) {
  const out = []
  if (argv[0] === '--puffin' && argv.length === 2) {
    const file = readFileSync(argv[1])
    for (const b of puffinBlobs(file)) {
      if (b.type !== 'deletion-vector-v1') continue
      const positions = readDV(file, b.offset, b.length)
      out.push(JSON.stringify({ offset: b.offset, length: b.length, properties: b.properties ?? {}, positions: positions.map(String) }))
    }
  } else if (argv.length === 1 || argv.length === 3) {
    const file = readFileSync(argv[0])
    const blob = argv.length === 1 ? file : file.subarray(Number(argv[1]), Number(argv[1]) + Number(argv[2]))
    for (const p of decodeDV(blob)) out.push(String(p))
  } else {
    process.stderr.write('usage: node dv.mjs <file> [<offset> <size>] | --puffin <file>\n')
    process.exit(2)
  }
  process.stdout.write(out.length ? out.join('\n') + '\n' : '')
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2))
  } catch (err) {
    process.stderr.write(`dv.mjs: ${err.message ?? err}\n`)
    process.exit(1)
  }
}
