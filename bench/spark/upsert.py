"""Spark side of bench's keyed-upsert comparison, started by spark-submit.

  upsert.py load BASE WAREHOUSE
      creates db.t (format v2, merge-on-read) from the base Parquet files
  upsert.py merge CHANGES WAREHOUSE CHECKPOINT
      streams the change files, one per micro-batch (maxFilesPerTrigger 1,
      availableNow), into db.t with foreachBatch and MERGE INTO, as the
      reference article does; a key changed twice in one file keeps its
      last change (MERGE refuses two source rows for one target row)
"""

import sys

from pyspark.sql import Window
from pyspark.sql import functions as F

from warehouse import session

PROPS = (
    "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read', 'write.parquet.compression-codec'='zstd', 'write.parquet.compression-level'='1'"
)


def load(base, warehouse):
    spark = session("floe-bench-upsert", warehouse)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS floe.db")
    spark.read.parquet(base).createOrReplaceTempView("base")
    spark.sql("CREATE TABLE floe.db.t USING iceberg TBLPROPERTIES (%s) AS SELECT * FROM base" % PROPS)
    spark.stop()


def merge(changes, warehouse, checkpoint):
    spark = session("floe-bench-upsert", warehouse)
    schema = spark.read.parquet(changes).schema
    last = Window.partitionBy("id").orderBy(F.col("_seq").desc())

    def upsert(batch, batch_id):
        (
            batch.withColumn("_seq", F.monotonically_increasing_id())
            .withColumn("_n", F.row_number().over(last))
            .where("_n = 1")
            .drop("_seq", "_n")
            .createOrReplaceTempView("changes")
        )
        batch.sparkSession.sql(
            """MERGE INTO floe.db.t t USING changes s ON t.id = s.id
            WHEN MATCHED AND s.op = 'd' THEN DELETE
            WHEN MATCHED THEN UPDATE SET t.name = s.name, t.v = s.v, t.ts = s.ts, t.qty = s.qty
            WHEN NOT MATCHED AND s.op <> 'd' THEN INSERT (id, name, v, ts, qty) VALUES (s.id, s.name, s.v, s.ts, s.qty)"""
        )

    q = (
        spark.readStream.schema(schema)
        .option("maxFilesPerTrigger", 1)
        .parquet(changes)
        .writeStream.foreachBatch(upsert)
        .trigger(availableNow=True)
        .option("checkpointLocation", checkpoint)
        .start()
    )
    q.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(*sys.argv[2:4])
    elif sys.argv[1] == "merge":
        merge(*sys.argv[2:5])
    else:
        raise SystemExit("usage: upsert.py load BASE WAREHOUSE | merge CHANGES WAREHOUSE CHECKPOINT")
