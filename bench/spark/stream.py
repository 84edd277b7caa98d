"""The reference article's processing-time stream run by Spark Structured
Streaming, started by spark-submit so that the measured process is Spark's
JVM itself.

  stream.py SRC WAREHOUSE CHECKPOINT BATCHES
      creates db.events with the properties floe's table gets and streams
      SRC into it one file a batch (maxFilesPerTrigger 1) with a
      processing-time trigger, stopping after BATCHES batches. Beside the
      stream, as the article asks of every streaming table, the driver runs
      Iceberg's maintenance procedures on the cadence of floe's default
      policy: expire_snapshots (retain_last 10) once the table holds 25
      snapshots and every 15 batches after, rewrite_data_files
      (min-input-files 5) and rewrite_manifests every 50 batches.
      Prints PROGRESS with each batch's durationMs, MAINTENANCE with each
      procedure's batch and seconds, and TABLE with the rows, snapshots and
      data files at the end. Iceberg's own "Committed in N ms" lines (on
      stderr, log4j2-stream.properties) time each batch's table commit.
"""

import json
import sys
import time

from warehouse import session
from ingest import PROPS, SCHEMA


def main(src, warehouse, checkpoint, batches):
    spark = session("floe-bench-stream", warehouse)
    # Keep every batch's progress, not the last 100.
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", str(batches + 100))
    spark.sql("CREATE NAMESPACE IF NOT EXISTS floe.db")
    spark.sql("CREATE TABLE IF NOT EXISTS floe.db.events (%s) USING iceberg TBLPROPERTIES (%s)" % (SCHEMA, PROPS))
    q = (
        spark.readStream.schema(SCHEMA)
        .option("maxFilesPerTrigger", "1")
        .parquet(src)
        .writeStream.format("iceberg")
        .outputMode("append")
        .trigger(processingTime="0 seconds")
        .option("checkpointLocation", checkpoint)
        .toTable("floe.db.events")
    )
    maintenance = []
    next_expire, next_compact = 25, 50

    def run(name, sql, at):
        t0 = time.monotonic()
        spark.sql(sql).collect()
        maintenance.append({"batch": at, "procedure": name, "seconds": time.monotonic() - t0})

    while True:
        if q.exception() is not None:
            raise q.exception()
        p = q.lastProgress
        done = p["batchId"] + 1 if p else 0
        if done >= batches:
            break
        if done >= next_expire:
            run("expire_snapshots", "CALL floe.system.expire_snapshots(table => 'db.events', older_than => current_timestamp(), retain_last => 10)", done)
            next_expire = done + 15
        if done >= next_compact:
            run("rewrite_data_files", "CALL floe.system.rewrite_data_files(table => 'db.events', options => map('min-input-files', '5'))", done)
            run("rewrite_manifests", "CALL floe.system.rewrite_manifests('db.events')", done)
            next_compact = done + 50
        time.sleep(0.2)
    q.stop()
    progress = [
        {"batchId": p["batchId"], "numInputRows": p["numInputRows"], "durationMs": p["durationMs"]}
        for p in q.recentProgress
        if p["numInputRows"] > 0
    ]
    print("PROGRESS " + json.dumps(progress))
    print("MAINTENANCE " + json.dumps(maintenance))
    rows = spark.table("floe.db.events").count()
    snapshots = spark.table("floe.db.events.snapshots").count()
    files = spark.table("floe.db.events.files").count()
    print("TABLE " + json.dumps({"rows": rows, "snapshots": snapshots, "files": files}))
    spark.stop()


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit("usage: stream.py SRC WAREHOUSE CHECKPOINT BATCHES")
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
