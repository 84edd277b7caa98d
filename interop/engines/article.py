# The reference article's scenario, run by Spark Structured Streaming and
# Spark SQL with Iceberg's runtime, one step per call (args["step"]), in a
# session whose catalog `floe` is the test's warehouse (spark_driver.py).
# The test reads the table with floe between steps.
#
# args: step, table (db.stream), src (the landing directory), checkpoint,
# version (format version), and per step: file (stage), seed (merge).

import datetime
import os
import random
import shutil
import tempfile

from pyspark.sql.types import LongType, StringType, StructField, StructType

table = "floe." + args["table"]
step = args["step"]
schema = StructType([StructField("id", LongType()), StructField("v", StringType())])


def stage(n):
    """Writes file n (ids n*1000 .. n*1000+999) flat into src, as one
    Parquet file written by Spark, moved in whole once complete."""
    rows = [(n * 1000 + i, "f%d-r%d" % (n, i)) for i in range(1000)]
    tmp = tempfile.mkdtemp(dir=os.path.dirname(args["src"]))
    spark.createDataFrame(rows, schema).coalesce(1).write.parquet(tmp + "/out")
    part = [p for p in os.listdir(tmp + "/out") if p.endswith(".parquet")][0]
    os.makedirs(args["src"], exist_ok=True)
    os.rename(os.path.join(tmp, "out", part), os.path.join(args["src"], "part-%d.parquet" % n))
    shutil.rmtree(tmp)


def counts():
    return {
        "rows": spark.table(table).count(),
        "snapshots": spark.table(table + ".snapshots").count(),
        "data_files": spark.sql("SELECT count(*) FROM %s.files WHERE content = 0" % table).first()[0],
        "delete_files": spark.sql("SELECT count(*) FROM %s.files WHERE content > 0" % table).first()[0],
    }


if step == "create":
    spark.sql("CREATE NAMESPACE IF NOT EXISTS floe.db")
    spark.sql(
        """CREATE TABLE %s (id bigint, v string) USING iceberg TBLPROPERTIES (
        'format-version'='%s', 'write.delete.mode'='merge-on-read',
        'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"""
        % (table, args["version"])
    )
elif step == "stage":
    stage(args["file"])
elif step == "stream":
    q = (
        spark.readStream.schema(schema)
        .parquet(args["src"])
        .writeStream.format("iceberg")
        .outputMode("append")
        .trigger(availableNow=True)
        .option("checkpointLocation", args["checkpoint"])
        .toTable(table)
    )
    q.awaitTermination()
elif step == "merge":
    # Updates, inserts and deletes by key, as the article's foreachBatch
    # upsert does, in one MERGE.
    rnd = random.Random(args["seed"])
    ids = [r[0] for r in spark.table(table).select("id").collect()]
    changes = [(i, "m%d-%d" % (args["seed"], i), "u") for i in rnd.sample(ids, 300)]
    changes += [(i, None, "d") for i in rnd.sample(ids, 200) if i not in {c[0] for c in changes}]
    top = max(ids) + 1
    changes += [(top + i, "m%d-new%d" % (args["seed"], i), "u") for i in range(250)]
    spark.createDataFrame(changes, "id bigint, v string, op string").createOrReplaceTempView("changes")
    spark.sql(
        """MERGE INTO %s t USING changes s ON t.id = s.id
        WHEN MATCHED AND s.op = 'd' THEN DELETE
        WHEN MATCHED THEN UPDATE SET t.v = s.v
        WHEN NOT MATCHED AND s.op = 'u' THEN INSERT (id, v) VALUES (s.id, s.v)"""
        % table
    )
elif step == "delete":
    spark.sql("DELETE FROM %s WHERE id %% 7 = 0" % table)
elif step == "evolve":
    spark.sql("ALTER TABLE %s ADD COLUMN w double" % table)
    spark.sql("ALTER TABLE %s RENAME COLUMN v TO name" % table)
    spark.sql("INSERT INTO %s SELECT id + 100000, concat('e', id), id / 4.0 FROM range(500)" % table)
    spark.sql("ALTER TABLE %s ADD PARTITION FIELD bucket(4, id)" % table)
    spark.sql("INSERT INTO %s SELECT id + 200000, concat('p', id), id * 1.5 FROM range(700)" % table)
elif step == "rewrite":
    spark.sql(
        "CALL floe.system.rewrite_data_files(table => '%s', options => map('min-input-files', '1', 'delete-file-threshold', '1'))"
        % args["table"]
    )
elif step == "expire":
    spark.sql(
        "CALL floe.system.expire_snapshots(table => '%s', older_than => TIMESTAMP '%s', retain_last => 1)"
        % (args["table"], (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S"))
    )
else:
    raise ValueError("unknown step " + step)

result = counts() if step != "create" else {}
