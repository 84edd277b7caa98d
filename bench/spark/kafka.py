"""Spark side of bench's Kafka comparison, started by spark-submit: Spark's
Kafka source reads a topic of JSON messages from the earliest offsets
(availableNow) and writes db.events of the warehouse's JDBC catalog, the
messages parsed with from_json into the columns floe's table gets.

  kafka.py BOOTSTRAP TOPIC WAREHOUSE CHECKPOINT
"""

import sys

from pyspark.sql import functions as F

from warehouse import session

SCHEMA = (
    "id bigint, ts timestamp, user string, event string, page string, country string, "
    "amount double, qty bigint, session string, campaign string"
)
PROPS = "'format-version'='2', 'write.parquet.compression-codec'='zstd', 'write.parquet.compression-level'='1'"


def main(bootstrap, topic, warehouse, checkpoint):
    spark = session("floe-bench-kafka", warehouse)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS floe.db")
    spark.sql("CREATE TABLE IF NOT EXISTS floe.db.events (%s) USING iceberg TBLPROPERTIES (%s)" % (SCHEMA, PROPS))
    q = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.from_json(F.col("value").cast("string"), SCHEMA).alias("r"))
        .select("r.*")
        .writeStream.format("iceberg")
        .outputMode("append")
        .trigger(availableNow=True)
        .option("checkpointLocation", checkpoint)
        .toTable("floe.db.events")
    )
    q.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
