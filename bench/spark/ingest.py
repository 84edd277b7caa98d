"""Spark Structured Streaming side of bench's side-by-side runs, started by
spark-submit so that the measured process is Spark's JVM itself.

  ingest.py ingest FORMAT SRC WAREHOUSE CHECKPOINT
      creates db.events in the warehouse's JDBC (SQLite) catalog with the
      properties floe's table gets, then streams SRC into it with
      trigger(availableNow=True), as the reference article does
  ingest.py verify WAREHOUSE TABLE...
      prints {"table": {"rows": n, "ids": d, "hash": h}} for each table: the
      row count, the distinct ids, and the sum of Spark's hash of every row (its columns in table order),
      so that two tables' rows can be compared as multisets
"""

import json
import sys

from warehouse import session

SCHEMA = "id bigint, ts timestamp_ntz, category string, v double, payload string"
# floe's defaults, set on both tables: zstd at level 1.
PROPS = "'format-version'='2', 'write.parquet.compression-codec'='zstd', 'write.parquet.compression-level'='1'"


def ingest(fmt, src, warehouse, checkpoint):
    spark = session("floe-bench", warehouse)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS floe.db")
    spark.sql("CREATE TABLE IF NOT EXISTS floe.db.events (%s) USING iceberg TBLPROPERTIES (%s)" % (SCHEMA, PROPS))
    reader = spark.readStream.schema(SCHEMA)
    if fmt == "csv":
        reader = reader.option("header", "true")
    q = (
        reader.format(fmt)
        .load(src)
        .writeStream.format("iceberg")
        .outputMode("append")
        .trigger(availableNow=True)
        .option("checkpointLocation", checkpoint)
        .toTable("floe.db.events")
    )
    q.awaitTermination()
    spark.stop()


def verify(warehouse, tables):
    spark = session("floe-bench", warehouse)
    out = {}
    for t in tables:
        cols = ", ".join(f.name for f in spark.table("floe." + t).schema.fields)
        r = spark.sql(
            "SELECT count(*) AS n, count(DISTINCT id) AS ids, sum(cast(hash(%s) AS bigint)) AS h FROM floe.%s" % (cols, t)
        ).first()
        out[t] = {"rows": r["n"], "ids": r["ids"], "hash": r["h"] or 0}
    spark.stop()
    print("VERIFY " + json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "ingest":
        ingest(*sys.argv[2:6])
    elif sys.argv[1] == "verify":
        verify(sys.argv[2], sys.argv[3:])
    else:
        raise SystemExit("usage: ingest.py ingest FORMAT SRC WAREHOUSE CHECKPOINT | verify WAREHOUSE TABLE...")
